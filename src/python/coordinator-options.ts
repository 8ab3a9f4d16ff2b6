/** What a PythonCoordinator is made with and reports (coordinator.ts). */
import type { Backend } from "../backend/types.js";
import type { SpillDir } from "../boundary/spill.js";
import type { Clock } from "../boundary/timing.js";

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
