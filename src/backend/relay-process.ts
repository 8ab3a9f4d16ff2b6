/**
 * A SpawnedProcess whose link is set up asynchronously (an ssh channel, an exec transport call):
 * stdio are local streams relayed to and from the link once it is up, so callers can write at
 * once. Remote programs run this way only see stdin, stdout and stderr.
 */
import { PassThrough, type Readable } from "node:stream";
import { hostProgram, readHostLine } from "./remote/host-programs.js";
import type { ProcessExit, SpawnedProcess, SpawnRequest } from "./types.js";

/** in_dir.sh: cd to $1 (exit 127 when it is not there), then exec the rest. */
const inDirScript = hostProgram(() => readHostLine("in_dir.sh"));

export interface RelayLink {
	/** What the caller writes; pipe it to the program's stdin. Its end means: kill. */
	stdin: Readable;
	stdout(chunk: Buffer): void;
	stderr(chunk: Buffer): void;
	/** Aborted by kill(): close the link (the remote program sees EOF on stdin). */
	signal: AbortSignal;
}

/** `start` resolves with the program's exit once its output was delivered; a rejection is a failed start or a lost link. */
export function relayProcess(start: (link: RelayLink) => Promise<ProcessExit>): SpawnedProcess {
	const stdin = new PassThrough();
	const stdout = new PassThrough();
	const stderr = new PassThrough();
	const killer = new AbortController();
	const exited = Promise.resolve()
		.then(() =>
			start({
				stdin,
				stdout: (c) => stdout.write(c),
				stderr: (c) => stderr.write(c),
				signal: killer.signal,
			}),
		)
		.catch((error: Error): ProcessExit => ({ code: null, signal: null, error }))
		.then(async (exit) => {
			stdout.end();
			stderr.end();
			stdin.destroy();
			await afterPendingData();
			return exit;
		});
	return {
		pid: undefined,
		stdin,
		stdout,
		stderr,
		exited,
		kill: () => killer.abort(),
		setRef: () => {}, // the link (a socket, a child process) holds the event loop, not these streams
	};
}

/** Stream 'data' already written is emitted on process.nextTick; setImmediate runs after those. */
export function afterPendingData(): Promise<void> {
	return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The argv that starts `req.argv` in `req.cwd` with `req.env` added, for a target reached only by
 * argv (exit 127 when the directory is not there).
 */
export function inDirArgv(req: SpawnRequest, extraVars: string[] = []): string[] {
	const vars = Object.entries(req.env ?? {}).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
	vars.unshift(...extraVars);
	const argv = vars.length > 0 ? ["env", ...vars, ...req.argv] : req.argv;
	return ["sh", "-c", inDirScript(), "keel", req.cwd, ...argv];
}
