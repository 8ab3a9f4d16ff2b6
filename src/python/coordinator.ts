/**
 * The persistent Python coordinator: one worker process per coordinator, and one
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
import { KeelError } from "../boundary/errors.js";
import { type Clock, monotonicClock, setLongTimeout, waitAtMost } from "../boundary/timing.js";
import {
	DEFAULT_BACKGROUND_AFTER_MS,
	type PythonCoordinatorOptions,
	type PythonCoordinatorStats,
	type PythonRunOptions,
} from "./coordinator-options.js";
import { busyError, type Ending, infoOf, type Job, newJob, outcomeOf, timeoutEnding } from "./job.js";
import { JobTable } from "./job-table.js";
import { createLauncher } from "./launcher.js";
import type { PythonJobEvent, PythonJobInfo, PythonJobRequest, PythonRunResult } from "./types.js";
import { WorkerSlot } from "./worker-slot.js";

export type {
	PythonCoordinatorOptions,
	PythonCoordinatorStats,
	PythonRunOptions,
} from "./coordinator-options.js";
export { DEFAULT_BACKGROUND_AFTER_MS } from "./coordinator-options.js";

const CLOSE_WAIT_MS = 2000;

export class PythonCoordinator {
	private calls: Promise<void> = Promise.resolve();
	readonly stats: PythonCoordinatorStats = { spawns: 0, jobsSent: 0 };
	private readonly clock: Clock;
	/** A job running longer than this moves to the background lane. */
	readonly backgroundAfterMs: number;
	private readonly slot: WorkerSlot;
	private running: Job | undefined;
	private readonly queue: Job[] = [];
	private readonly jobs: JobTable;
	private readonly listeners = new Set<(e: PythonJobEvent) => void>();
	private readonly idPrefix = randomBytes(2).toString("hex");
	private seq = 0;
	private closed = false;

	constructor(private readonly opts: PythonCoordinatorOptions) {
		this.clock = opts.clock ?? monotonicClock;
		this.backgroundAfterMs = opts.backgroundAfterMs ?? DEFAULT_BACKGROUND_AFTER_MS;
		this.jobs = new JobTable(opts.maxFinishedJobs);
		this.slot = new WorkerSlot(
			createLauncher(opts.backend, opts),
			{
				running: () => this.running,
				finish: (job, ending) => this.finish(job, ending),
				kill: (job, ending) => this.kill(job, ending),
			},
			this.stats,
			opts.memoryLimitBytes,
		);
	}

	/** PID of the current worker, if one is running. */
	get pid(): number | undefined {
		return this.slot.pid;
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

	/** Find the interpreter without starting any code; cached once found. */
	async preflight(cwd = "/"): Promise<string> {
		this.assertOpen();
		return this.slot.preflight(cwd);
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
		this.jobs.add(job);
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
		return this.jobs.all().map((j) => this.info(j));
	}

	status(jobId: string): PythonJobInfo {
		return this.info(this.jobs.get(jobId));
	}

	/** Wait up to `timeoutMs` (default: forever) for a job to end; returns its info either way. */
	async wait(jobId: string, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<PythonJobInfo> {
		const job = this.jobs.get(jobId);
		if (!job.outcome) await waitAtMost(job.done, opts);
		return this.info(job);
	}

	/** Cancel a queued or running job (a running one loses the worker and its state). */
	cancel(jobId: string): PythonJobInfo {
		const job = this.jobs.get(jobId);
		this.abort(job, "cancelled", `Job ${job.id} was cancelled`);
		return this.info(job);
	}

	/**
	 * Kill the worker now (state is lost); a running job ends as cancelled. The next job starts a
	 * fresh worker.
	 */
	reset(reason = "the worker was reset"): void {
		if (this.running) this.abort(this.running, "cancelled", `The worker was reset: ${reason}`);
		else this.slot.discard(reason);
	}

	/** Dispose: queued and running jobs end as aborted ("closed"), the worker is killed. Idempotent. */
	async close(): Promise<void> {
		if (!this.closed) {
			this.closed = true;
			for (const job of [...this.queue]) this.abort(job, "closed", "The session was closed");
			if (this.running) this.abort(this.running, "closed", "The session was closed");
			this.slot.discard("the session was closed");
		}
		await this.slot.settle(CLOSE_WAIT_MS);
	}

	// ---- jobs ---------------------------------------------------------------------------------

	private createJob(request: PythonJobRequest): Job {
		return newJob(++this.seq, this.idPrefix, request, this.clock(), this.opts.spill);
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
		const timeoutMs = job.request!.timeoutMs;
		try {
			this.slot.send(job);
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
		if (timeoutMs !== undefined) {
			job.timers.push(setLongTimeout(() => this.kill(job, timeoutEnding(job, timeoutMs)), timeoutMs));
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
		this.slot.stop(`job ${job.id} ended: ${ending.exitState}`);
		this.finish(job, { ...ending, workerReset: true });
	}

	/** The single terminal path of every job: exactly one `end` event, whatever happens after. */
	private finish(job: Job, ending: Ending): void {
		if (job.outcome) return;
		for (const t of job.timers) t.clear();
		job.request = undefined;
		this.detachSignal(job);
		if (this.running === job) this.running = undefined;
		const outcome = outcomeOf(job, ending, this.clock());
		job.status = "done";
		job.outcome = outcome;
		this.jobs.finished(job);
		this.emit({ type: "end", job: this.info(job), outcome });
		job.resolveDone(outcome);
		job.settleRun?.({ status: "done", outcome });
		job.settleRun = undefined;
		if (!this.running) this.slot.idle();
		this.pump();
	}

	private detachSignal(job: Job): void {
		if (job.signal && job.onAbort) job.signal.removeEventListener("abort", job.onAbort);
		job.signal = undefined;
		job.onAbort = undefined;
	}

	private info(job: Job): PythonJobInfo {
		return infoOf(job, this.clock());
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
}
