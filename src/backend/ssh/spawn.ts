/**
 * ProcessOps on the remote host: a long-lived program on its own exec channel of the backend's
 * connection (so sshd's login shell runs once per process, not per request), stdio relayed.
 * kill() closes the channel: the program sees EOF on stdin (keel's Python mux then kills its
 * worker's process group and exits); a dropped connection does the same.
 */
import type { ClientChannel } from "ssh2";
import { inDirArgv, relayProcess } from "../relay-process.js";
import { shq } from "../shell-quote.js";
import type { ProcessExit, ProcessOps, SpawnRequest } from "../types.js";
import type { SshConnection } from "./connection.js";

/** The command line for sshd's login shell: exec the in-directory argv, every word quoted. */
export function remoteCommand(req: SpawnRequest, remotePath: string | undefined): string {
	const argv = inDirArgv(req, remotePath === undefined ? [] : [`PATH=${remotePath}`]);
	return ["exec", ...argv.map(shq)].join(" ");
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
				live.peeks.clear();
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
