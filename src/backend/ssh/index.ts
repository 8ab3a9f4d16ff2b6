/**
 * The `ssh` backend: a remote host over one ssh2 connection. Files over SFTP
 * (plus a helper shell for identity, hashes and the commit), commands in persistent shells started
 * without login files, search with the host's rg/fd or a find/grep fallback. See README.md here.
 */
import { onFirstUse, partsOnFirstUse } from "../deferred.js";
import { SshConnection } from "./connection.js";
import type { SshBackend, SshBackendOptions } from "./options.js";

export type { SshBackend, SshBackendOptions, SshFsOptions, SshSearchEngine } from "./options.js";

/** A remote host over one ssh2 connection: files over SFTP, commands and searches on the host, the workspace a path there. */
export function createSshBackend(opts: SshBackendOptions): SshBackend {
	const conn = new SshConnection(opts);
	// Files, commands, search and processes over the connection: their code is imported by the
	// first call that uses one (backend/deferred.ts), not when keel starts.
	const parts = onFirstUse(async () => {
		const [{ createSshFs }, { createSshExec }, { createSshSearch }, { createSshProcess }] = await Promise.all(
			[import("./fs.js"), import("./exec.js"), import("./search.js"), import("./spawn.js")],
		);
		return {
			fs: createSshFs(conn, opts),
			exec: createSshExec(conn),
			search: createSshSearch(conn, { engine: opts.searchEngine }),
			process: createSshProcess(conn, opts.remotePath),
		};
	});
	return {
		kind: "ssh",
		hostPrograms: true,
		target: conn.label,
		...partsOnFirstUse("ssh", parts, { process: true, handles: true }),
		connect: async () => {
			await conn.get();
		},
		remoteHome: async () => (await conn.get()).caps.home,
		close: () => conn.close(),
	};
}

export type { SshConnectOptions } from "./connect-options.js";
export { parseSshSpec, type SshSpec } from "./spec.js";
