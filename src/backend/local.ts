/** The `local` backend: this machine's files, processes and search tools. */
import { ProcessTracker } from "./leftovers.js";
import { createLocalExec } from "./local-exec.js";
import { createLocalFs, type LocalFsHooks } from "./local-fs.js";
import { spawnLocal } from "./local-spawn.js";
import { createLocalSearch, createLocalTools } from "./search/index.js";
import { Spawner } from "./spawn/spawner.js";
import type { Backend } from "./types.js";

export interface LocalBackendOptions {
	/** "auto" uses rg/fd when installed and the JS engine otherwise. */
	searchEngine?: "auto" | "native" | "js";
	/** Time budget of one grep or find (default 60 s); then it answers TIMEOUT with what it found. */
	searchBudgetMs?: number;
	hooks?: LocalFsHooks;
	/** grep's lookahead while rg starts (createLocalSearch's `lookahead`; default on). */
	searchLookahead?: boolean;
}

export function createLocalBackend(opts: LocalBackendOptions = {}): Backend {
	// What commands leave running is this backend's: killed per call, or at close (leftovers.ts).
	const tracker = new ProcessTracker();
	const fs = createLocalFs(opts.hooks);
	const spawner = new Spawner();
	return {
		kind: "local",
		fs,
		exec: createLocalExec(tracker, spawner),
		search: createLocalSearch({
			engine: opts.searchEngine ?? "auto",
			pins: fs.pins,
			budgetMs: opts.searchBudgetMs,
			tools: createLocalTools({ spawner }),
			...(opts.searchLookahead === false ? { lookahead: false } : {}),
		}),
		process: { fdPipes: true, ready: async () => {}, spawn: (req) => spawnLocal(req, spawner) },
		close: async () => {
			await tracker.close();
			await fs.close();
		},
	};
}
