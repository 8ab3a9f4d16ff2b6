/**
 * The coordinator's one worker, and the running job's side of the protocol: start a worker on
 * first use, send a job, turn frames, end markers, protocol corruption and exits into the job's
 * ending, and remember across workers whether state was lost. The coordinator owns the jobs, the
 * queue and the lanes; this owns the process.
 */
import { randomBytes } from "node:crypto";
import { setLongTimeout } from "../boundary/timing.js";
import type { Frame, ProtocolError } from "./frames.js";
import type { Ending, Job } from "./job.js";
import type { WorkerLauncher } from "./launcher.js";
import { type StreamName, type WorkerExit, WorkerProcess } from "./worker-process.js";

/** Responses are small (repr, message and traceback are bounded by the worker). */
const MAX_RESPONSE_FRAME_BYTES = 1024 * 1024;
/** After a response frame, how long to wait for the end markers on stdout/stderr. */
const MARKER_GRACE_MS = 1000;
/** Output the worker writes between jobs, carried into the next job (bounded). */
const MAX_STRAY_BYTES = 64 * 1024;

export interface SlotHost {
	/** The job the worker is running, if any. */
	running(): Job | undefined;
	/** The job's single terminal path (the slot has already discarded the worker if it had to). */
	finish(job: Job, ending: Ending): void;
	/** End a running job by discarding its worker. */
	kill(job: Job, ending: Omit<Ending, "workerReset">): void;
}

export interface SlotStats {
	spawns: number;
	jobsSent: number;
}

export class WorkerSlot {
	private worker: WorkerProcess | undefined;
	/** Jobs sent to the current worker: a discarded worker that ran none lost no state. */
	private workerJobs = 0;
	/** The current worker has sent its "ready" frame (it is a working Python 3 running worker.py). */
	private workerReady = false;
	private pendingReset: string | undefined;
	private readonly stray: Record<StreamName, Buffer[]> = { stdout: [], stderr: [] };
	private readonly exits = new Set<Promise<WorkerExit>>();
	private interpreterPath: string | undefined;

	constructor(
		private readonly launcher: WorkerLauncher,
		private readonly host: SlotHost,
		private readonly stats: SlotStats,
		private readonly memoryLimitBytes: number | undefined,
	) {}

	get pid(): number | undefined {
		return this.worker?.pid;
	}

	/** Find the interpreter without starting any code (cached by the launcher). */
	async preflight(cwd: string): Promise<string> {
		this.interpreterPath = await this.launcher.interpreter(cwd);
		return this.interpreterPath;
	}

	/** Send the job to the worker, starting one if needed; throws when the spawn itself throws. */
	send(job: Job): void {
		const worker = this.ensureWorker(job.request!.cwd);
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
	}

	/** Stop the running job's worker: bytes held as a possible marker prefix belong to that job. */
	stop(reason: string): void {
		this.worker?.cancelMarkers();
		this.discard(reason);
	}

	/** Let Node exit while the worker idles. */
	idle(): void {
		this.worker?.setBusy(false);
	}

	/** Kill the worker's process group; if it had run jobs, the next job is told state was lost. */
	discard(reason: string): void {
		const worker = this.worker;
		if (!worker) return;
		this.worker = undefined;
		if (this.workerJobs > 0) this.pendingReset = reason;
		this.workerJobs = 0;
		for (const s of ["stdout", "stderr"] as const) this.stray[s] = [];
		worker.kill();
	}

	/** Wait for discarded workers to be gone, at most `ms`. */
	async settle(ms: number): Promise<void> {
		const exits = [...this.exits];
		if (exits.length === 0) return;
		let timer: NodeJS.Timeout | undefined;
		await Promise.race([Promise.all(exits), new Promise((r) => (timer = setTimeout(r, ms)))]);
		clearTimeout(timer);
	}

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

	private onFrame(worker: WorkerProcess, frame: Frame): void {
		if (worker !== this.worker) return;
		if (frame.id === 0 && frame.op === "ready") {
			this.workerReady = true;
			return;
		}
		const job = this.host.running();
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
		const job = this.host.running();
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
			const limit = this.memoryLimitBytes ? ` under the ${this.memoryLimitBytes}-byte limit` : "";
			this.host.kill(job, {
				kind: "error",
				exitState: "memory",
				message: `The code ran out of memory (MemoryError${limit}); the worker was restarted and its state is lost.`,
			});
			return;
		}
		this.host.finish(job, {
			kind: "result",
			exitState: frame.ok === true ? "ok" : "exception",
			workerReset: false,
		});
	}

	private onOutput(stream: StreamName, chunk: Buffer): void {
		const job = this.host.running();
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
		const job = this.host.running();
		if (!job) {
			this.discard(`the worker's protocol was corrupted (${error.message})`);
			return;
		}
		this.host.kill(job, {
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
		this.discard(`the worker ${how}`);
		const job = this.host.running();
		if (!job) return;
		if (job.frame) {
			// It answered, then died (e.g. a thread called os._exit): keep the answer.
			this.host.finish(job, {
				kind: "result",
				exitState: job.frame.ok === true ? "ok" : "exception",
				workerReset: true,
			});
			return;
		}
		this.host.finish(job, {
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
