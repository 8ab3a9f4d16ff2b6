/**
 * The `bwrap` backend (REQUIREMENTS B3): files and search as on `local` (keel's path guard bounds
 * them to the roots), and every command inside a bubblewrap sandbox (see bwrap/sandbox.ts for
 * what a command can see). Abort and timeout kill bwrap's process group; with --die-with-parent
 * and a PID namespace whose init is bwrap's child, everything inside dies with it, daemons too.
 */
import { existsSync } from "node:fs";
import { createSandboxRunner, type SandboxRunnerOptions } from "./bwrap/runner.js";
import { createLocalFs, type LocalFsHooks } from "./local-fs.js";
import { createLocalSearch, type SearchEngineChoice } from "./search/index.js";
import type { Backend, ExecOps } from "./types.js";

export { explainBwrapFailure } from "./bwrap/probe.js";
export type { BindSpec, SandboxOptions } from "./bwrap/sandbox.js";
export { createBwrapTransport } from "./bwrap/transport.js";

export interface BwrapBackendOptions extends SandboxRunnerOptions {
	searchEngine?: SearchEngineChoice;
	hooks?: LocalFsHooks;
}

export interface BwrapBackend extends Backend {
	/** Build and probe the sandbox now (otherwise the first command does): BACKEND_UNAVAILABLE names the fix. */
	ready(): Promise<void>;
}

function findShell(): string {
	for (const candidate of ["/bin/bash", "/usr/bin/bash", "/bin/sh"]) {
		if (existsSync(candidate)) return candidate;
	}
	return "sh";
}

export function createBwrapBackend(opts: BwrapBackendOptions): BwrapBackend {
	const runner = createSandboxRunner(opts);
	const shell = findShell();
	const exec: ExecOps = {
		run: (req) =>
			runner.run([shell, "-c", req.command], {
				cwd: req.cwd,
				env: req.env,
				timeoutMs: req.timeoutMs,
				signal: req.signal,
				onData: (chunk) => req.onData(chunk),
			}),
	};
	return {
		kind: "bwrap",
		fs: createLocalFs(opts.hooks),
		exec,
		search: createLocalSearch({ engine: opts.searchEngine ?? "auto" }),
		ready: async () => {
			await runner.ready();
		},
		close: async () => {},
	};
}
