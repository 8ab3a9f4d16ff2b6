/**
 * The `ssh` backend (REQUIREMENTS B4): a remote host over one ssh2 connection. Files over SFTP
 * (plus a helper shell for identity, hashes and the commit), commands in persistent shells started
 * without login files, search with the host's rg/fd or a find/grep fallback. See README.md here.
 */
import type { Backend } from "../types.js";
import { SshConnection, type SshConnectOptions } from "./connection.js";
import { createSshExec } from "./exec.js";
import { createSshFs, type SshFsOptions } from "./fs.js";
import { createSshSearch, type SshSearchEngine } from "./search.js";
import { createSshProcess } from "./spawn.js";

export interface SshBackendOptions extends SshConnectOptions, SshFsOptions {
	/** "auto" (default): rg/fd when the host has them, else the find/grep fallback. */
	searchEngine?: SshSearchEngine;
}

export interface SshBackend extends Backend {
	readonly kind: "ssh";
	/** user@host:port, or `alias (user@host:port)` when ~/.ssh/config maps the name to another host. */
	readonly target: string;
	/** Connect now (instead of on the first call); throws the connection error, if any. */
	connect(): Promise<void>;
	/** The remote user's home directory (for `~` and a default root). */
	remoteHome(): Promise<string>;
}

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

export type { SshConnectOptions } from "./connection.js";
export { parseSshSpec, type SshSpec } from "./spec.js";
