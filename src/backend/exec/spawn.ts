/**
 * ProcessOps over an exec transport: one transport call per process, stdin streamed, kill() aborts
 * the call (the program sees EOF on stdin; a transport that tears down its sandbox on abort, like
 * bwrap's, takes the processes with it).
 */
import { relayProcess } from "../relay-process.js";
import type { ProcessOps } from "../types.js";
import type { ExecTransport } from "./transport.js";

const START = 'cd -- "$1" || exit 127; shift; exec "$@"';

export function createExecProcess(transport: ExecTransport): ProcessOps {
	return {
		fdPipes: false,
		ready: async () => {},
		spawn: (req) =>
			relayProcess(async (link) => {
				const vars = Object.entries(req.env ?? {}).flatMap(([k, v]) =>
					v === undefined ? [] : [`${k}=${v}`],
				);
				const argv = vars.length > 0 ? ["env", ...vars, ...req.argv] : req.argv;
				const r = await transport(["sh", "-c", START, "keel", req.cwd, ...argv], {
					stdin: link.stdin,
					signal: link.signal,
					onData: (chunk, stream) => (stream === "stdout" ? link.stdout(chunk) : link.stderr(chunk)),
				});
				return { code: r.exitCode, signal: null };
			}),
	};
}
