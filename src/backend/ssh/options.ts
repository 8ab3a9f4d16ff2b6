/**
 * The ssh backend's public types, apart from its implementation: the declarations a consumer
 * compiles stop here and never reach ssh2's own types (a dev dependency only).
 */
import type { Backend } from "../types.js";
import type { SshConnectOptions } from "./connect-options.js";

export interface SshFsOptions {
	/** sweepTemps removes keel temp files older than this (default 60 minutes). */
	staleTempMinutes?: number;
	/** Called after the temp file is durable, before the commit (tests interleave here). */
	beforeCommit?: (target: string) => Promise<void> | void;
}

export type SshSearchEngine = "auto" | "native" | "fallback";

/** Options of createSshBackend: how to connect (host, user, keys, ~/.ssh/config alias) and how files are reached. */
export interface SshBackendOptions extends SshConnectOptions, SshFsOptions {
	/** "auto" (default): rg/fd when the host has them, else the find/grep fallback. */
	searchEngine?: SshSearchEngine;
}

/** A backend on a remote host over ssh. */
export interface SshBackend extends Backend {
	readonly kind: "ssh";
	/** user@host:port, or `alias (user@host:port)` when ~/.ssh/config maps the name to another host. */
	readonly target: string;
	/** Connect now (instead of on the first call); throws the connection error, if any. */
	connect(): Promise<void>;
	/** The remote user's home directory (for `~` and a default root). */
	remoteHome(): Promise<string>;
}
