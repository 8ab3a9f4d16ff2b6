/** Public types of the Python coordinator. */
import type { OutputSnapshot } from "../boundary/output-sink.js";

/** What a job runs: inline code (in the session's persistent namespace) or a script file. */
export type PythonJobRequest =
	| { kind: "code"; code: string; cwd: string; timeoutMs?: number }
	| {
			kind: "script";
			/** Canonical path (already authorized); becomes __file__ and sys.argv[0]. */
			path: string;
			/** The bytes the guard authorized; the worker compiles these, not whatever is at `path` later. */
			source: Uint8Array;
			cwd: string;
			timeoutMs?: number;
	  };

/** The one terminal event of a job. */
export type PythonTerminalKind = "result" | "error" | "timeout" | "abort";

/**
 * How a job ended, in more detail than its kind:
 *  result:  ok | exception (the code raised; the worker and its state survive)
 *  error:   memory (MemoryError; worker reset) | crashed (the worker died) | protocol-error |
 *           spawn-failed | busy (never ran: a background job held the worker)
 *  timeout: timeout
 *  abort:   aborted (the call's signal) | cancelled (cancel(jobId)) | closed (coordinator closed)
 */
export type PythonExitState =
	| "ok"
	| "exception"
	| "memory"
	| "crashed"
	| "protocol-error"
	| "spawn-failed"
	| "busy"
	| "timeout"
	| "aborted"
	| "cancelled"
	| "closed";

export interface PythonException {
	type: string;
	message: string;
	/** Bounded (tail kept); the worker's own frames removed. */
	traceback: string;
}

export interface PythonJobOutcome {
	jobId: string;
	kind: PythonTerminalKind;
	exitState: PythonExitState;
	/** The coordinator's one-sentence account of an ending other than a normal result. */
	message?: string;
	stdout: OutputSnapshot;
	stderr: OutputSnapshot;
	/** repr() of a trailing expression (inline code only; None is not shown), bounded. */
	repr?: string;
	reprTruncated?: boolean;
	exception?: PythonException;
	/** Wall time from the job's start (or queueing, if it never started) to its end. */
	elapsedMs: number;
	/** Time the worker spent executing the code. */
	workerElapsedMs?: number;
	workerPid?: number;
	/** This job ran on a fresh worker because earlier state was lost; `resetReason` says why. */
	stateReset: boolean;
	resetReason?: string;
	/** The worker was discarded as this job ended: the next job starts on a fresh one. */
	workerReset: boolean;
	/** The job had moved to the background lane before it ended. */
	background: boolean;
	exitCode?: number | null;
	signal?: string | null;
}

export type PythonJobStatus = "queued" | "running" | "done";

export interface PythonJobInfo {
	jobId: string;
	status: PythonJobStatus;
	lane: "foreground" | "background";
	/** Bounded label: the first line of the code, or the script path. */
	label: string;
	/** Milliseconds since the job started (or until it ended). */
	runningMs?: number;
	outcome?: PythonJobOutcome;
}

/** What run() gives back: the outcome, or a handle when the job moved to the background lane. */
export type PythonRunResult =
	| { status: "done"; outcome: PythonJobOutcome }
	| { status: "running"; job: PythonJobInfo };

export type PythonJobEvent =
	| { type: "start"; job: PythonJobInfo }
	| { type: "background"; job: PythonJobInfo }
	| { type: "end"; job: PythonJobInfo; outcome: PythonJobOutcome };
