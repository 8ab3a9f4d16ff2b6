/**
 * Carriers for the container backends: a runtime's exec client (`podman exec -i NAME`, `docker
 * exec -i NAME`, `kubectl exec -i -n NS POD --`) started on this machine, given the program's argv
 * after its own. Two uses:
 *  - childShellPipe: a long-lived `sh` inside the target, as a ShellPipe for the persistent
 *    shells (ssh/shell.ts), so an operation costs one round trip, not one exec;
 *  - execPerCall: one exec client per call, for programs that need streamed stdin (the Python
 *    worker's mux) and for measuring what the persistent shells save.
 * Killing the exec client closes the program's stdin (it sees EOF); it does not kill the program,
 * which is why commands are killed by process group inside the target (shell-transport.ts).
 */
import { spawn } from "node:child_process";
import type { ExecTransport } from "../exec/transport.js";
import type { ShellPipe } from "../ssh/shell.js";

/** The exec client's argv up to (not including) the program's argv. */
export type ExecPrefix = readonly string[];

const STDERR_TAIL = 2000;

/** The shell a carrier runs: sh, which reads its input in blocks (bash reads a pipe byte by byte). */
export const CONTAINER_SHELL = ["sh"];

export function childShellPipe(prefix: ExecPrefix, label: string): ShellPipe {
	const [cmd, ...args] = prefix;
	const child = spawn(cmd, [...args, ...CONTAINER_SHELL], { stdio: ["pipe", "pipe", "pipe"] });
	let tail = "";
	let closed = false;
	const closers: ((e: Error) => void)[] = [];
	const end = (e: Error) => {
		if (closed) return;
		closed = true;
		for (const fn of closers) fn(e);
	};
	child.stderr.on("data", (c: Buffer) => {
		tail = (tail + c.toString("utf8")).slice(-STDERR_TAIL);
	});
	child.on("error", (e) => end(new Error(`cannot run ${cmd} for ${label}: ${e.message}`)));
	child.on("close", (code, signal) => {
		const why = tail.trim() ? `: ${tail.trim()}` : "";
		end(new Error(`the shell in ${label} ended (${cmd} exited with ${code ?? signal})${why}`));
	});
	child.stdin.on("error", () => {}); // EPIPE after the shell died: reported by "close"
	return {
		write: (text) => {
			child.stdin.write(text);
		},
		onStdout: (fn) => child.stdout.on("data", fn),
		onStderr: (fn) => child.stderr.on("data", fn),
		onClose: (fn) => closers.push(fn),
		close: () => {
			child.stdin.end();
			// The shell exits at EOF; an exec client that hangs on is not waited for.
			setTimeout(() => child.kill("SIGKILL"), 2000).unref();
		},
	};
}

/**
 * One exec client per call (ExecTransport contract, exec/transport.ts). Abort kills the client:
 * the program's stdin closes; keel kills command groups itself (exec/run.ts).
 */
export function execPerCall(prefix: ExecPrefix, label: string): ExecTransport {
	const [cmd, ...args] = prefix;
	return (argv, opts) =>
		new Promise((resolve, reject) => {
			if (opts.signal?.aborted) return resolve({ exitCode: null });
			const child = spawn(cmd, [...args, ...argv], {
				stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
			});
			let tail = "";
			const onAbort = () => child.kill("SIGKILL");
			opts.signal?.addEventListener("abort", onAbort, { once: true });
			child.stdout?.on("data", (c: Buffer) => opts.onData?.(c, "stdout"));
			child.stderr?.on("data", (c: Buffer) => {
				tail = (tail + c.toString("utf8")).slice(-STDERR_TAIL);
				opts.onData?.(c, "stderr");
			});
			child.on("error", (e) => {
				opts.signal?.removeEventListener("abort", onAbort);
				reject(new Error(`cannot run ${cmd} for ${label}: ${e.message}`));
			});
			child.on("close", (code) => {
				opts.signal?.removeEventListener("abort", onAbort);
				if (opts.signal?.aborted) return resolve({ exitCode: null });
				// 125: the runtime's own failure (no such container, not running), not the program's.
				if (code === 125 && /^Error: /m.test(tail)) return reject(new Error(`${label}: ${tail.trim()}`));
				resolve({ exitCode: code });
			});
			if (child.stdin) {
				child.stdin.on("error", () => {});
				const input = opts.stdin;
				if (input instanceof Uint8Array) child.stdin.end(input);
				else input?.pipe(child.stdin);
			}
		});
}
