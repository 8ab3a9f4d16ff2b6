/**
 * ProcessOps over an exec transport: one transport call per process, stdin streamed, kill() aborts
 * the call (the program sees EOF on stdin; a transport that tears down its sandbox on abort, like
 * bwrap's, takes the processes with it).
 */
import { inDirArgv, relayProcess } from "../relay-process.js";
import type { ProcessOps } from "../types.js";
import type { ExecTransport } from "./transport.js";

export function createExecProcess(transport: ExecTransport): ProcessOps {
	return {
		fdPipes: false,
		ready: async () => {},
		spawn: (req) =>
			relayProcess(async (link) => {
				const r = await transport(inDirArgv(req), {
					stdin: link.stdin,
					signal: link.signal,
					onData: (chunk, stream) => (stream === "stdout" ? link.stdout(chunk) : link.stderr(chunk)),
				});
				return { code: r.exitCode, signal: null };
			}),
	};
}
