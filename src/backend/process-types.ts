/**
 * The seam's long-lived processes: what ProcessOps in types.ts starts and how
 * such a process is held (pipes, exit, kill). Re-exported by types.ts.
 */

export interface SpawnRequest {
	/** argv[0] is an absolute path or a name on the backend's PATH. */
	argv: string[];
	/** Absolute directory on the backend. */
	cwd: string;
	/**
	 * On this machine (local, bwrap): the whole environment (default: this process's). On a remote
	 * backend: variables added to the remote environment.
	 */
	env?: NodeJS.ProcessEnv;
	/**
	 * Open pipes on fds 3 (to the program) and 4 (from it) besides stdio. Only where `fdPipes` is
	 * true; elsewhere a program needing more channels multiplexes them over stdio.
	 */
	fdPipes?: boolean;
	/** stdin reads /dev/null (the result has no stdin stream). */
	nullStdin?: boolean;
}

/** How a spawned process ended: its exit code or signal, or why it could not run. */
export interface ProcessExit {
	code: number | null;
	signal: string | null;
	/** Set when the process could not be started, or the link to it was lost. */
	error?: Error;
}

/** A long-lived process with piped stdio, running in its own process group on the backend. */
export interface SpawnedProcess {
	/** PID on the backend's host, when known (on this machine: the process keel started). */
	readonly pid: number | undefined;
	/** With fdPipes, fd3 (to the program) and fd4 (from it) are set. */
	readonly stdin?: NodeJS.WritableStream;
	readonly stdout: NodeJS.ReadableStream;
	readonly stderr: NodeJS.ReadableStream;
	readonly fd3?: NodeJS.WritableStream;
	readonly fd4?: NodeJS.ReadableStream;
	/** Resolves once the process has exited and its output was delivered (or given up on). */
	readonly exited: Promise<ProcessExit>;
	/** SIGKILL the whole process group (a remote one through its channel). Idempotent. */
	kill(): void;
	/** Whether this process keeps Node's event loop alive (default: it does). */
	setRef(ref: boolean): void;
}

/** Long-lived processes with their own pipes (the Python worker). */
export interface ProcessOps {
	/** fds 3 and 4 can be passed (the process runs on this machine). */
	readonly fdPipes: boolean;
	/** Prepare what spawn needs (a sandbox built and probed, a connection up); throws BACKEND_UNAVAILABLE. */
	ready(): Promise<void>;
	/** Start a process; failures to start arrive as `exited` with `error`. Call after ready(). */
	spawn(req: SpawnRequest): SpawnedProcess;
}
