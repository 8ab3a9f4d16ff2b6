/**
 * ProcessOps on the remote host: a long-lived program on its own exec channel of the backend's
 * connection (so sshd's login shell runs once per process, not per request), stdio relayed.
 * kill() closes the channel: the program sees EOF on stdin (keel's Python mux then kills its
 * worker's process group and exits); a dropped connection does the same.
 */
import type { ClientChannel } from "ssh2";
import { relayProcess } from "../relay-process.js";
import type { ProcessExit, ProcessOps, SpawnRequest } from "../types.js";
import type { SshConnection } from "./connection.js";
import { shq } from "./framing.js";

/** `cd` to the directory, then exec argv (through `env` when variables are added). */
export function remoteCommand(req: SpawnRequest, remotePath: string | undefined): string {
	const vars = Object.entries(req.env ?? {}).flatMap(([k, v]) => (v === undefined ? [] : [`${k}=${v}`]));
	if (remotePath !== undefined) vars.unshift(`PATH=${remotePath}`);
	const argv = vars.length > 0 ? ["env", ...vars, ...req.argv] : req.argv;
	const script = 'cd -- "$1" || exit 127; shift; exec "$@"';
	return ["exec", "sh", "-c", script, "keel", req.cwd, ...argv].map((w, i) => (i < 2 ? w : shq(w))).join(" ");
}

export function createSshProcess(conn: SshConnection, remotePath: string | undefined): ProcessOps {
	return {
		fdPipes: false,
		ready: async () => {
			await conn.get();
		},
		spawn: (req) =>
			relayProcess(async (link) => {
				const live = await conn.get();
				const chan = await new Promise<ClientChannel>((resolve, reject) =>
					live.client.exec(remoteCommand(req, remotePath), (err, c) => (err ? reject(err) : resolve(c))),
				);
				return new Promise<ProcessExit>((resolve, reject) => {
					let exit: ProcessExit = { code: null, signal: null };
					const close = () => chan.close();
					if (link.signal.aborted) close();
					link.signal.addEventListener("abort", close, { once: true });
					chan.on("data", (c: Buffer) => link.stdout(c));
					chan.stderr.on("data", (c: Buffer) => link.stderr(c));
					chan.on("exit", (code: number | null, signal?: string) => {
						exit = { code: code ?? null, signal: signal ? `SIG${signal}` : null };
					});
					chan.on("error", (e: Error) => reject(e));
					chan.on("close", () => {
						link.signal.removeEventListener("abort", close);
						resolve(exit);
					});
					live.whenLost.catch((e: Error) => reject(e));
					link.stdin.pipe(chan);
				});
			}),
	};
}
