/**
 * The `ssh` backend: a remote host over one ssh2 connection. Files over SFTP
 * (plus a helper shell for identity, hashes and the commit), commands in persistent shells started
 * without login files, search with the host's rg/fd or a find/grep fallback. See README.md here.
 */
import { SshConnection } from "./connection.js";
import { createSshExec } from "./exec.js";
import { createSshFs } from "./fs.js";
import type { SshBackend, SshBackendOptions } from "./options.js";
import { createSshSearch } from "./search.js";
import { createSshProcess } from "./spawn.js";

export type { SshBackend, SshBackendOptions, SshFsOptions, SshSearchEngine } from "./options.js";

export function createSshBackend(opts: SshBackendOptions): SshBackend {
	const conn = new SshConnection(opts);
	return {
		kind: "ssh",
		target: conn.label,
		fs: createSshFs(conn, opts),
		exec: createSshExec(conn),
		search: createSshSearch(conn, { engine: opts.searchEngine }),
		process: createSshProcess(conn, opts.remotePath),
		connect: async () => {
			await conn.get();
		},
		remoteHome: async () => (await conn.get()).caps.home,
		close: () => conn.close(),
	};
}

export type { SshConnectOptions } from "./connect-options.js";
export { parseSshSpec, type SshSpec } from "./spec.js";
