/**
 * The persistent Python coordinator (REQUIREMENTS R6): one worker process per coordinator, and one
 * coordinator per session, so state is never shared across sessions and nothing here is global.
 *
 * - The worker starts on first use (`run`), never at construction.
 * - One job runs at a time. Calls arriving while a foreground job runs queue behind it (FIFO);
 *   a call arriving while a background job holds the worker is refused at once (busy, naming the
 *   job), and so are queued calls when the job ahead of them moves to the background.
 * - Every job ends in exactly one terminal event (`end`): result | error | timeout | abort.
 * - Timeout, abort, cancel, close, protocol corruption, a worker crash or exit and a MemoryError
 *   discard the worker (its process group is SIGKILLed). The next job starts a fresh one and its
 *   outcome says that state was lost (stateReset + resetReason).
 * - A job still running after `backgroundAfterMs` moves to the background lane: run() resolves with
 *   a handle, the job keeps the worker, and its end is reported through this coordinator's
 *   listeners only; list/status/wait/cancel address it by id.
 */
import { randomBytes } from "node:crypto";
import type { Backend } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { OutputSink } from "../boundary/output-sink.js";
import type { SpillDir } from "../boundary/spill.js";
import { type Clock, type LongTimer, monotonicClock, setLongTimeout } from "../boundary/timing.js";
import type { Frame, ProtocolError } from "./frames.js";
import { createLauncher, type WorkerLauncher } from "./launcher.js";
import type {
	PythonExitState,
	PythonJobEvent,
	PythonJobInfo,
	PythonJobOutcome,
	PythonJobRequest,
	PythonJobStatus,
	PythonRunResult,
	PythonTerminalKind,
} from "./types.js";
import { type StreamName, type WorkerExit, WorkerProcess } from "./worker-process.js";

export interface PythonCoordinatorOptions {
	/** Where truncated stdout/stderr is spilled in full (the session's spill directory). */
	spill: SpillDir;
	/** Where the worker runs (default: this machine); see launcher.ts. */
	backend?: Backend;
	/**
	 * Interpreter path or name; default $KEEL_PYTHON (on this machine and in bwrap), else
	 * /usr/bin/python3, else python3 on PATH.
	 */
	interpreter?: string;
	/** Extra interpreter flags before the worker script (default none; see README.md here). */
	pythonFlags?: string[];
	/** Environment of the worker (default: this process's; on a remote backend, variables added to the host's). */
	env?: NodeJS.ProcessEnv;
	/** A job running longer than this moves to the background lane (default 15 s). */
	backgroundAfterMs?: number;
	/** RLIMIT_AS for the worker, in bytes (default: none). */
	memoryLimitBytes?: number;
	/** How many finished background jobs stay addressable by id (default 32). */
	maxFinishedJobs?: number;
	clock?: Clock;
}

export interface PythonRunOptions {
	/** Aborts the job while it is queued or in the foreground lane (not once it is in the background). */
	signal?: AbortSignal;
}

export interface PythonCoordinatorStats {
	/** Worker processes started. */
	spawns: number;
	/** Requests sent to a worker. */
	jobsSent: number;
}

export const DEFAULT_BACKGROUND_AFTER_MS = 15_000;
const DEFAULT_MAX_FINISHED = 32;
/** Responses are small (repr, message and traceback are bounded by the worker). */
const MAX_RESPONSE_FRAME_BYTES = 1024 * 1024;
/** After a response frame, how long to wait for the end markers on stdout/stderr. */
const MARKER_GRACE_MS = 1000;
/** Output the worker writes between jobs, carried into the next job (bounded). */
const MAX_STRAY_BYTES = 64 * 1024;
const LABEL_CHARS = 80;
const CLOSE_WAIT_MS = 2000;

interface Job {
	id: string;
	seq: number;
	/** Dropped once sent (or once the job ends unsent): code is never kept as retry memory. */
	request: PythonJobRequest | undefined;
	label: string;
	status: PythonJobStatus;
	lane: "foreground" | "background";
	queuedAt: number;
	startedAt?: number;
	sinks: Record<StreamName, OutputSink>;
	streamDone: Record<StreamName, boolean>;
	frame?: Frame;
	signal?: AbortSignal;
	onAbort?: () => void;
	timers: LongTimer[];
	stateReset: boolean;
	resetReason?: string;
	workerPid?: number;
	outcome?: PythonJobOutcome;
	done: Promise<PythonJobOutcome>;
	resolveDone: (o: PythonJobOutcome) => void;
	/** The pending run() call, until the job ends or moves to the background. */
	settleRun?: (r: PythonRunResult) => void;
}

interface Ending {
	kind: PythonTerminalKind;
	exitState: PythonExitState;
	message?: string;
	workerReset: boolean;
	exitCode?: number | null;
	signal?: string | null;
}

export class PythonCoordinator {
	private calls: Promise<void> = Promise.resolve();
	readonly stats: PythonCoordinatorStats = { spawns: 0, jobsSent: 0 };
	private readonly clock: Clock;
	/** A job running longer than this moves to the background lane. */
	readonly backgroundAfterMs: number;
	private worker: WorkerProcess | undefined;
	/** Jobs sent to the current worker: a discarded worker that ran none lost no state. */
	private workerJobs = 0;
	/** The current worker has sent its "ready" frame (it is a working Python 3 running worker.py). */
	private workerReady = false;
	private pendingReset: string | undefined;
	private running: Job | undefined;
	private readonly queue: Job[] = [];
	private readonly jobs = new Map<string, Job>();
	private readonly finishedBackground: string[] = [];
	private readonly stray: Record<StreamName, Buffer[]> = { stdout: [], stderr: [] };
	private readonly listeners = new Set<(e: PythonJobEvent) => void>();
	private readonly idPrefix = randomBytes(2).toString("hex");
	private seq = 0;
	private interpreterPath: string | undefined;
	private readonly launcher: WorkerLauncher;
	private closed = false;
	private readonly exits = new Set<Promise<WorkerExit>>();

	constructor(private readonly opts: PythonCoordinatorOptions) {
		this.clock = opts.clock ?? monotonicClock;
		this.backgroundAfterMs = opts.backgroundAfterMs ?? DEFAULT_BACKGROUND_AFTER_MS;
		this.launcher = createLauncher(opts.backend, opts);
	}

	/** PID of the current worker, if one is running. */
	get pid(): number | undefined {
		return this.worker?.pid;
	}

	get isClosed(): boolean {
		return this.closed;
	}

	/**
	 * Run `call` after every earlier call made through here has returned (or moved to the
	 * background). Calls reach the worker in the order they were made, whatever their own
	 * preflight (cwd, script) costs.
	 */
	inOrder<T>(call: () => Promise<T>): Promise<T> {
		const result = this.calls.then(call);
		this.calls = result.then(
			() => undefined,
			() => undefined,
		);
		return result;
	}

	/** Find the interpreter without starting any code (P0.2); cached once found. */
	async preflight(cwd = "/"): Promise<string> {
		this.assertOpen();
		this.interpreterPath = await this.launcher.interpreter(cwd); // cached there
		return this.interpreterPath;
	}

	/** Subscribe to this coordinator's job events; returns the unsubscribe function. */
	onEvent(listener: (e: PythonJobEvent) => void): () => void {
		this.listeners.add(listener);
		return () => this.listeners.delete(listener);
	}

	/**
	 * Run a job. Resolves with its outcome, or with a handle once it has run past backgroundAfterMs.
	 * Rejects (BACKEND_UNAVAILABLE) without creating a job when closed, when no interpreter is found,
	 * or when a background job holds the worker.
	 */
	async run(request: PythonJobRequest, opts: PythonRunOptions = {}): Promise<PythonRunResult> {
		await this.preflight(request.cwd);
		this.assertOpen();
		const holder = this.running?.lane === "background" ? this.running : undefined;
		if (holder) throw busyError(holder);
		if (opts.signal?.aborted) throw new KeelError("ABORTED", "The call was aborted before it started.");
		const job = this.createJob(request);
		this.jobs.set(job.id, job);
		return new Promise<PythonRunResult>((resolve) => {
			job.settleRun = resolve;
			if (opts.signal) {
				job.signal = opts.signal;
				job.onAbort = () => this.abort(job, "aborted", "The call was aborted");
				opts.signal.addEventListener("abort", job.onAbort, { once: true });
			}
			this.queue.push(job);
			this.pump();
		});
	}

	/** All jobs this coordinator knows: queued, running, and recent finished background jobs. */
	list(): PythonJobInfo[] {
		return [...this.jobs.values()].map((j) => this.info(j));
	}

	status(jobId: string): PythonJobInfo {
		return this.info(this.job(jobId));
	}

	/** Wait up to `timeoutMs` (default: forever) for a job to end; returns its info either way. */
	async wait(jobId: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<PythonJobInfo> {
		const job = this.job(jobId);
		if (!job.outcome && !opts.signal?.aborted) {
			let timer: LongTimer | undefined;
			let onAbort: (() => void) | undefined;
			const stops: Promise<unknown>[] = [job.done];
			if (opts.timeoutMs !== undefined) {
				const ms = opts.timeoutMs;
				stops.push(new Promise((r) => (timer = setLongTimeout(() => r(undefined), ms))));
			}
			if (opts.signal) {
				stops.push(
					new Promise<void>((r) => {
						onAbort = () => r();
						opts.signal!.addEventListener("abort", onAbort);
					}),
				);
			}
			try {
				await Promise.race(stops);
			} finally {
				timer?.clear();
				if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
			}
		}
		return this.info(job);
	}

	/** Cancel a queued or running job (a running one loses the worker and its state). */
	cancel(jobId: string): PythonJobInfo {
		const job = this.job(jobId);
		this.abort(job, "cancelled", `Job ${job.id} was cancelled`);
		return this.info(job);
	}

	/**
	 * Kill the worker now (state is lost); a running job ends as cancelled. The next job starts a
	 * fresh worker.
	 */
	reset(reason = "the worker was reset"): void {
		if (this.running) this.abort(this.running, "cancelled", `The worker was reset: ${reason}`);
		else this.discardWorker(reason);
	}

	/** Dispose: queued and running jobs end as aborted ("closed"), the worker is killed. Idempotent. */
	async close(): Promise<void> {
		if (!this.closed) {
			this.closed = true;
			for (const job of [...this.queue]) this.abort(job, "closed", "The session was closed");
			if (this.running) this.abort(this.running, "closed", "The session was closed");
			this.discardWorker("the session was closed");
		}
		const exits = [...this.exits];
		if (exits.length === 0) return;
		let timer: NodeJS.Timeout | undefined;
		await Promise.race([
			Promise.all(exits),
			new Promise((r) => {
				timer = setTimeout(r, CLOSE_WAIT_MS);
			}),
		]);
		clearTimeout(timer);
	}

	// ---- jobs ---------------------------------------------------------------------------------

	private createJob(request: PythonJobRequest): Job {
		const seq = ++this.seq;
		let resolveDone!: (o: PythonJobOutcome) => void;
		const done = new Promise<PythonJobOutcome>((r) => {
			resolveDone = r;
		});
		return {
			id: `py-${seq}-${this.idPrefix}`,
			seq,
			request,
			label: labelOf(request),
			status: "queued",
			lane: "foreground",
			queuedAt: this.clock(),
			sinks: {
				stdout: new OutputSink(this.opts.spill, "python-stdout"),
				stderr: new OutputSink(this.opts.spill, "python-stderr"),
			},
			streamDone: { stdout: false, stderr: false },
			timers: [],
			stateReset: false,
			done,
			resolveDone,
		};
	}

	private job(jobId: string): Job {
		const job = typeof jobId === "string" ? this.jobs.get(jobId) : undefined;
		if (!job) {
			throw new KeelError(
				"NOT_FOUND",
				`No Python job ${JSON.stringify(jobId)} in this session; list the session's jobs to see their ids.`,
			);
		}
		return job;
	}

	private pump(): void {
		if (this.running || this.closed) return;
		const job = this.queue.shift();
		if (job) this.start(job);
	}

	private start(job: Job): void {
		this.running = job;
		job.status = "running";
		job.startedAt = this.clock();
		let worker: WorkerProcess;
		try {
			worker = this.ensureWorker(job.request!.cwd);
		} catch (e) {
			// spawn() throws synchronously for some failures (EMFILE, EAGAIN); most arrive as an exit.
			this.finish(job, {
				kind: "error",
				exitState: "spawn-failed",
				message: `The Python worker could not start (${(e as Error).message}).`,
				workerReset: false,
			});
			return;
		}
		job.workerPid = worker.pid;
		job.stateReset = this.pendingReset !== undefined;
		job.resetReason = this.pendingReset;
		this.pendingReset = undefined;
		for (const stream of ["stdout", "stderr"] as const) {
			for (const chunk of this.stray[stream]) job.sinks[stream].append(chunk);
			this.stray[stream] = [];
		}
		const nonce = randomBytes(12).toString("hex");
		const marker = `\u0000keel-end-${nonce}\u0000`;
		const request = job.request!;
		job.request = undefined;
		const frame: Frame =
			request.kind === "code"
				? { id: job.seq, op: "code", code: request.code, cwd: request.cwd, marker }
				: {
						id: job.seq,
						op: "script",
						path: request.path,
						source: Buffer.from(request.source).toString("base64"),
						cwd: request.cwd,
						marker,
					};
		worker.setBusy(true);
		worker.send(frame, Buffer.from(marker, "latin1"));
		this.workerJobs++;
		this.stats.jobsSent++;
		if (request.timeoutMs !== undefined) {
			const ms = request.timeoutMs;
			job.timers.push(setLongTimeout(() => this.kill(job, timeoutEnding(job, ms)), ms));
		}
		job.timers.push(setLongTimeout(() => this.toBackground(job), this.backgroundAfterMs));
		this.emit({ type: "start", job: this.info(job) });
	}

	private toBackground(job: Job): void {
		if (job.outcome || this.running !== job) return;
		job.lane = "background";
		this.detachSignal(job);
		const info = this.info(job);
		this.emit({ type: "background", job: info });
		job.settleRun?.({ status: "running", job: info });
		job.settleRun = undefined;
		for (const queued of this.queue.splice(0)) {
			this.finish(queued, {
				kind: "error",
				exitState: "busy",
				message: busyError(job).message,
				workerReset: false,
			});
		}
	}

	private abort(job: Job, exitState: "aborted" | "cancelled" | "closed", message: string): void {
		if (job.outcome) return;
		const ending: Ending = { kind: "abort", exitState, message, workerReset: false };
		if (this.running === job) {
			this.kill(job, { ...ending, message: `${message}; the worker was stopped and its state is lost.` });
			return;
		}
		const at = this.queue.indexOf(job);
		if (at >= 0) this.queue.splice(at, 1);
		this.finish(job, { ...ending, message: `${message} before it started.` });
	}

	/** End a running job by discarding its worker. */
	private kill(job: Job, ending: Omit<Ending, "workerReset">): void {
		if (job.outcome) return;
		this.worker?.cancelMarkers(); // bytes held as a possible marker prefix belong to this job
		this.discardWorker(`job ${job.id} ended: ${ending.exitState}`);
		this.finish(job, { ...ending, workerReset: true });
	}

	/** The single terminal path of every job: exactly one `end` event, whatever happens after. */
	private finish(job: Job, ending: Ending): void {
		if (job.outcome) return;
		for (const t of job.timers) t.clear();
		job.request = undefined;
		this.detachSignal(job);
		if (this.running === job) this.running = undefined;
		const frame = job.frame;
		const exception = frame?.exception as PythonJobOutcome["exception"];
		const outcome: PythonJobOutcome = {
			jobId: job.id,
			kind: ending.kind,
			exitState: ending.exitState,
			...(ending.message !== undefined ? { message: ending.message } : {}),
			stdout: closeSink(job.sinks.stdout),
			stderr: closeSink(job.sinks.stderr),
			...(typeof frame?.repr === "string"
				? { repr: frame.repr, reprTruncated: frame.reprTruncated === true }
				: {}),
			...(exception ? { exception } : {}),
			elapsedMs: round1(this.clock() - (job.startedAt ?? job.queuedAt)),
			...(typeof frame?.elapsedMs === "number" ? { workerElapsedMs: round1(frame.elapsedMs) } : {}),
			...(job.workerPid !== undefined ? { workerPid: job.workerPid } : {}),
			stateReset: job.stateReset,
			...(job.resetReason !== undefined ? { resetReason: job.resetReason } : {}),
			workerReset: ending.workerReset,
			background: job.lane === "background",
			...(ending.exitCode !== undefined ? { exitCode: ending.exitCode } : {}),
			...(ending.signal !== undefined ? { signal: ending.signal } : {}),
		};
		job.status = "done";
		job.outcome = outcome;
		this.retain(job);
		this.emit({ type: "end", job: this.info(job), outcome });
		job.resolveDone(outcome);
		job.settleRun?.({ status: "done", outcome });
		job.settleRun = undefined;
		if (!this.running) this.worker?.setBusy(false);
		this.pump();
	}

	/** Foreground jobs are forgotten at once (the caller has the outcome); background ones are kept. */
	private retain(job: Job): void {
		if (job.lane === "foreground") {
			this.jobs.delete(job.id);
			return;
		}
		this.finishedBackground.push(job.id);
		const max = this.opts.maxFinishedJobs ?? DEFAULT_MAX_FINISHED;
		while (this.finishedBackground.length > max) this.jobs.delete(this.finishedBackground.shift()!);
	}

	private detachSignal(job: Job): void {
		if (job.signal && job.onAbort) job.signal.removeEventListener("abort", job.onAbort);
		job.signal = undefined;
		job.onAbort = undefined;
	}

	private info(job: Job): PythonJobInfo {
		const end = job.outcome ? job.startedAt! + job.outcome.elapsedMs : this.clock();
		return {
			jobId: job.id,
			status: job.status,
			lane: job.lane,
			label: job.label,
			...(job.startedAt !== undefined ? { runningMs: round1(end - job.startedAt) } : {}),
			...(job.outcome ? { outcome: job.outcome } : {}),
		};
	}

	private emit(event: PythonJobEvent): void {
		for (const listener of this.listeners) {
			try {
				listener(event);
			} catch {
				// A listener's failure must not break the job's single terminal path.
			}
		}
	}

	private assertOpen(): void {
		if (this.closed) {
			throw new KeelError(
				"BACKEND_UNAVAILABLE",
				"This session's Python coordinator is closed; start a new session.",
			);
		}
	}

	// ---- the worker ---------------------------------------------------------------------------

	private ensureWorker(cwd: string): WorkerProcess {
		if (this.worker) return this.worker;
		const worker: WorkerProcess = new WorkerProcess(this.launcher.start(cwd), MAX_RESPONSE_FRAME_BYTES, {
			frame: (f) => this.onFrame(worker, f),
			protocolError: (e) => this.onProtocolError(worker, e),
			output: (stream, chunk) => this.onOutput(stream, chunk),
			marker: (stream) => this.onMarker(stream),
			exit: (exit) => this.onExit(worker, exit),
		});
		const exited = worker.exited;
		this.exits.add(exited);
		void exited.then(() => this.exits.delete(exited));
		this.worker = worker;
		this.workerJobs = 0;
		this.workerReady = false;
		this.stats.spawns++;
		return worker;
	}

	/** Kill the worker's process group; if it had run jobs, the next job is told state was lost. */
	private discardWorker(reason: string): void {
		const worker = this.worker;
		if (!worker) return;
		this.worker = undefined;
		if (this.workerJobs > 0) this.pendingReset = reason;
		this.workerJobs = 0;
		for (const s of ["stdout", "stderr"] as const) this.stray[s] = [];
		worker.kill();
	}

	private onFrame(worker: WorkerProcess, frame: Frame): void {
		if (worker !== this.worker) return;
		if (frame.id === 0 && frame.op === "ready") {
			this.workerReady = true;
			return;
		}
		const job = this.running;
		if (!job || frame.id !== job.seq || job.frame) {
			this.onProtocolError(worker, { message: `unexpected frame id ${frame.id}` });
			return;
		}
		job.frame = frame;
		job.workerPid ??= worker.pid; // a remote worker's pid arrives after it started
		const markers = Array.isArray(frame.markers) ? frame.markers : [];
		if (markers[0] !== true) job.streamDone.stdout = true;
		if (markers[1] !== true) job.streamDone.stderr = true;
		if (!this.completeIfReady(job)) {
			job.timers.push(
				setLongTimeout(() => {
					this.worker?.cancelMarkers();
					this.complete(job);
				}, MARKER_GRACE_MS),
			);
		}
	}

	private onMarker(stream: StreamName): void {
		const job = this.running;
		if (!job) return;
		job.streamDone[stream] = true;
		this.completeIfReady(job);
	}

	private completeIfReady(job: Job): boolean {
		if (!job.frame || !job.streamDone.stdout || !job.streamDone.stderr) return false;
		this.complete(job);
		return true;
	}

	/** The worker answered: a result, an exception, or a MemoryError (which costs the worker). */
	private complete(job: Job): void {
		if (job.outcome) return;
		const frame = job.frame!;
		if (frame.memoryError === true) {
			this.kill(job, {
				kind: "error",
				exitState: "memory",
				message: `The code ran out of memory (MemoryError${this.opts.memoryLimitBytes ? ` under the ${this.opts.memoryLimitBytes}-byte limit` : ""}); the worker was restarted and its state is lost.`,
			});
			return;
		}
		this.finish(job, {
			kind: "result",
			exitState: frame.ok === true ? "ok" : "exception",
			workerReset: false,
		});
	}

	private onOutput(stream: StreamName, chunk: Buffer): void {
		const job = this.running;
		if (job && !job.streamDone[stream]) {
			job.sinks[stream].append(chunk);
			return;
		}
		// Between jobs (a thread or child of earlier code still printing): carry into the next job.
		const held = this.stray[stream];
		held.push(chunk);
		let total = held.reduce((n, c) => n + c.length, 0);
		while (total > MAX_STRAY_BYTES && held.length > 1) total -= held.shift()!.length;
	}

	private onProtocolError(worker: WorkerProcess, error: Pick<ProtocolError, "message">): void {
		if (worker !== this.worker) return;
		const job = this.running;
		if (!job) {
			this.discardWorker(`the worker's protocol was corrupted (${error.message})`);
			return;
		}
		this.kill(job, {
			kind: "error",
			exitState: "protocol-error",
			message: `The worker's protocol stream was corrupted (${error.message}), probably by code writing to its file descriptor 4; the worker was restarted and its state is lost.`,
		});
	}

	private onExit(worker: WorkerProcess, exit: WorkerExit): void {
		if (worker !== this.worker) return;
		const started = this.workerReady;
		if (!started) this.workerJobs = 0; // it never ran user code: no state was lost
		const how = exit.error
			? started
				? `was cut off (${exit.error.message})`
				: `could not start (${exit.error.message})`
			: exit.signal
				? `was killed by ${exit.signal}`
				: `exited with code ${exit.code}`;
		this.discardWorker(`the worker ${how}`);
		const job = this.running;
		if (!job) return;
		if (job.frame) {
			// It answered, then died (e.g. a thread called os._exit): keep the answer.
			this.finish(job, {
				kind: "result",
				exitState: job.frame.ok === true ? "ok" : "exception",
				workerReset: true,
			});
			return;
		}
		this.finish(job, {
			kind: "error",
			exitState: started ? "crashed" : "spawn-failed",
			message: started
				? `The Python worker ${how} while running this job (os._exit, a fatal signal, or the kernel's OOM killer); its state is lost and the next call starts a fresh interpreter.`
				: `The Python worker (${this.interpreterPath}) ${how} before it was ready; check that it is Python 3 (set KEEL_PYTHON).`,
			workerReset: true,
			exitCode: exit.code,
			signal: exit.signal,
		});
	}
}

function busyError(holder: Job): KeelError {
	return new KeelError(
		"BACKEND_UNAVAILABLE",
		`The session's Python interpreter is busy with background job ${holder.id} (${holder.label}); wait for it or cancel it with python_jobs, then retry.`,
		{ details: { busyJobId: holder.id } },
	);
}

function timeoutEnding(job: Job, ms: number): Omit<Ending, "workerReset"> {
	return {
		kind: "timeout",
		exitState: "timeout",
		message: `Job ${job.id} timed out after ${ms / 1000} s; the worker was stopped and its state is lost.`,
	};
}

function closeSink(sink: OutputSink) {
	sink.close();
	return sink.snapshot();
}

function labelOf(request: PythonJobRequest): string {
	if (request.kind === "script") return request.path;
	const first = request.code.trimStart().split("\n", 1)[0];
	return first.length > LABEL_CHARS ? `${first.slice(0, LABEL_CHARS)}…` : first;
}

function round1(ms: number): number {
	return Math.round(ms * 10) / 10;
}
