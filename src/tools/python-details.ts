/**
 * What the results of `python` and `python_jobs` carry in their details: a finished run, a job
 * going on in the background, the list of jobs, a cancel. Apart from the tools because these
 * types are public (the library exports them) and the formatting in python/format.ts builds them
 * without needing the tools.
 */
import type { TruncationResult } from "../boundary/truncate.js";
import type { PythonExitState, PythonJobStatus, PythonTerminalKind } from "../python/types.js";

/** What a result says of one of a Python run's output streams when it was cut. */
export interface PythonStreamDetails {
	/** How the stream was cut (the kept text is the result's content). */
	truncation: Omit<TruncationResult, "content">;
	/** The file holding the whole stream. */
	fullOutputPath?: string;
	/** Why the whole stream could not be saved, when it could not. */
	spillError?: string;
}

/** The details of a finished Python run (python, or python_jobs status and wait). */
export interface PythonOutcomeDetails {
	/** The job's id (python_jobs takes it). */
	jobId: string;
	/** How the run ended, as the worker saw it. */
	kind: PythonTerminalKind;
	/** How the run ended, as the session reports it ("ok" for a clean run). */
	exitState: PythonExitState;
	/** Wall time from the job's start (or queueing) to its end. */
	elapsedMs: number;
	/** The run started on a fresh interpreter because earlier state was lost. */
	stateReset: boolean;
	/** The interpreter was discarded as the run ended: the next run starts on a fresh one. */
	workerReset: boolean;
	/** The run had moved to the background (python_jobs) before it ended. */
	background: boolean;
	/** Time the interpreter spent running the code. */
	workerElapsedMs?: number;
	/** The interpreter's process id. */
	workerPid?: number;
	/** Why earlier state was lost, when `stateReset`. */
	resetReason?: string;
	/** The exception the code raised. */
	exception?: { type: string; message: string };
	/** The final expression's repr was cut. */
	reprTruncated?: true;
	/** The interpreter's exit code, when it exited. */
	exitCode?: number | null;
	/** The signal that ended the interpreter, when one did. */
	signal?: string | null;
	/** Set when stdout was cut. */
	stdout?: PythonStreamDetails;
	/** Set when stderr was cut. */
	stderr?: PythonStreamDetails;
}

/** The details of a Python run that goes on in the background: python_jobs waits for it. */
export interface PythonRunningDetails {
	/** The job's id (python_jobs takes it). */
	jobId: string;
	/** Queued behind another job, or running. */
	status: PythonJobStatus;
	/** The lane it runs in: background once it ran past the foreground limit. */
	lane: "foreground" | "background";
	/** Milliseconds since it started. */
	runningMs?: number;
}

/** python's result details: the finished run, or the job that goes on in the background. */
export type PythonDetails = PythonOutcomeDetails | PythonRunningDetails;

/** One job in python_jobs' list. */
export interface PythonJobSummary {
	/** The job's id. */
	jobId: string;
	/** Queued, running or done. */
	status: PythonJobStatus;
	/** The lane it ran in. */
	lane: "foreground" | "background";
	/** The first line of the code, or the script path, bounded. */
	label: string;
	/** Milliseconds since it started (or until it ended). */
	runningMs?: number;
	/** How it ended, once done. */
	exitState?: PythonExitState;
}

/** python_jobs list's details. */
export interface PythonJobListDetails {
	/** The session's jobs. */
	jobs: PythonJobSummary[];
}

/** python_jobs cancel's details. */
export interface PythonCancelDetails {
	/** The job's id. */
	jobId: string;
	/** How the job ended ("cancelled", or its earlier ending); absent when it had none. */
	exitState?: PythonExitState;
}

/**
 * python_jobs' result details: list gives the jobs; status and wait the finished run or the job
 * still going; cancel the job's ending.
 */
export type PythonJobsDetails = PythonJobListDetails | PythonDetails | PythonCancelDetails;
