/**
 * One Python job's record, and what it turns into: its info (list/status/wait) and its single
 * outcome. The coordinator owns the records; nothing here keeps state of its own.
 */
import { KeelError } from "../boundary/errors.js";
import { OutputSink } from "../boundary/output-sink.js";
import type { SpillDir } from "../boundary/spill.js";
import type { LongTimer } from "../boundary/timing.js";
import type { Frame } from "./frames.js";
import type {
	PythonExitState,
	PythonJobInfo,
	PythonJobOutcome,
	PythonJobRequest,
	PythonJobStatus,
	PythonRunResult,
	PythonTerminalKind,
} from "./types.js";
import type { StreamName } from "./worker-process.js";

const LABEL_CHARS = 80;

export interface Job {
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

/** How a job ended, before it is written up as an outcome. */
export interface Ending {
	kind: PythonTerminalKind;
	exitState: PythonExitState;
	message?: string;
	workerReset: boolean;
	exitCode?: number | null;
	signal?: string | null;
}

export function newJob(
	seq: number,
	idPrefix: string,
	request: PythonJobRequest,
	now: number,
	spill: SpillDir,
): Job {
	let resolveDone!: (o: PythonJobOutcome) => void;
	const done = new Promise<PythonJobOutcome>((r) => {
		resolveDone = r;
	});
	return {
		id: `py-${seq}-${idPrefix}`,
		seq,
		request,
		label: labelOf(request),
		status: "queued",
		lane: "foreground",
		queuedAt: now,
		sinks: {
			stdout: new OutputSink(spill, "python-stdout"),
			stderr: new OutputSink(spill, "python-stderr"),
		},
		streamDone: { stdout: false, stderr: false },
		timers: [],
		stateReset: false,
		done,
		resolveDone,
	};
}

/** The job's outcome (closes its output sinks: call once, from the terminal path). */
export function outcomeOf(job: Job, ending: Ending, now: number): PythonJobOutcome {
	const frame = job.frame;
	const exception = frame?.exception as PythonJobOutcome["exception"];
	return {
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
		elapsedMs: round1(now - (job.startedAt ?? job.queuedAt)),
		...(typeof frame?.elapsedMs === "number" ? { workerElapsedMs: round1(frame.elapsedMs) } : {}),
		...(job.workerPid !== undefined ? { workerPid: job.workerPid } : {}),
		stateReset: job.stateReset,
		...(job.resetReason !== undefined ? { resetReason: job.resetReason } : {}),
		workerReset: ending.workerReset,
		background: job.lane === "background",
		...(ending.exitCode !== undefined ? { exitCode: ending.exitCode } : {}),
		...(ending.signal !== undefined ? { signal: ending.signal } : {}),
	};
}

export function infoOf(job: Job, now: number): PythonJobInfo {
	const end = job.outcome ? job.startedAt! + job.outcome.elapsedMs : now;
	return {
		jobId: job.id,
		status: job.status,
		lane: job.lane,
		label: job.label,
		...(job.startedAt !== undefined ? { runningMs: round1(end - job.startedAt) } : {}),
		...(job.outcome ? { outcome: job.outcome } : {}),
	};
}

export function busyError(holder: Job): KeelError {
	return new KeelError(
		"BACKEND_UNAVAILABLE",
		`The session's Python interpreter is busy with background job ${holder.id} (${holder.label}); wait for it or cancel it with python_jobs, then retry.`,
		{ details: { busyJobId: holder.id } },
	);
}

export function timeoutEnding(job: Job, ms: number): Omit<Ending, "workerReset"> {
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
