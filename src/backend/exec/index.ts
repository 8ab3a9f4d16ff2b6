/**
 * The `exec` backend: files, commands and search, all over one ExecTransport
 * (transport.ts), so any sandbox that can run a command becomes a backend by providing one
 * function. The target needs POSIX sh, GNU coreutils and findutils (probed on first use); bash,
 * setsid, rg and fd are used when present.
 */
import type { Backend } from "../types.js";
import { createExecFs } from "./fs.js";
import { createExecOps } from "./run.js";
import { createExecSearch, type ExecSearchEngine } from "./search.js";
import { createExecProcess } from "./spawn.js";
import { createTarget } from "./target.js";
import type { ExecTransport } from "./transport.js";

/** Options of createExecBackend: the transport that runs an argv where the files are, and the workspace there. */
export interface ExecBackendOptions {
	transport: ExecTransport;
	/** Shell for commands (default: bash when the target has it, else sh). */
	shell?: "bash" | "sh";
	/** "auto" (default): rg/fd on the target when found, else the portable fallback. */
	searchEngine?: ExecSearchEngine;
	/** Backend kind reported to tools and hosts (default "exec"), e.g. "docker". */
	kind?: string;
	/** Called by close(), e.g. to stop a container or drop a connection. */
	close?: () => Promise<void>;
}

export function createExecBackend(opts: ExecBackendOptions): Backend {
	const target = createTarget(opts.transport, opts.shell);
	return {
		kind: opts.kind ?? "exec",
		fs: createExecFs(target),
		exec: createExecOps(target),
		search: createExecSearch(opts.transport, opts.searchEngine ?? "auto"),
		process: createExecProcess(opts.transport),
		close: async () => {
			await opts.close?.();
		},
	};
}

export type { ExecSearchEngine } from "./search.js";
export { transportRunner } from "./search.js";
export type { ExecTransport, OutputStream, TransportOptions } from "./transport.js";
