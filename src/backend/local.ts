/** The `local` backend (REQUIREMENTS B2): this machine's files, processes and search tools. */
import { createLocalExec } from "./local-exec.js";
import { createLocalFs, type LocalFsHooks } from "./local-fs.js";
import { spawnLocal } from "./local-spawn.js";
import { createLocalSearch } from "./search/index.js";
import type { Backend } from "./types.js";

export interface LocalBackendOptions {
	/** "auto" uses rg/fd when installed and the JS engine otherwise. */
	searchEngine?: "auto" | "native" | "js";
	/** Time budget of one grep or find (default 60 s); then it answers TIMEOUT with what it found. */
	searchBudgetMs?: number;
	hooks?: LocalFsHooks;
}

export function createLocalBackend(opts: LocalBackendOptions = {}): Backend {
	return {
		kind: "local",
		fs: createLocalFs(opts.hooks),
		exec: createLocalExec(),
		search: createLocalSearch({ engine: opts.searchEngine ?? "auto", budgetMs: opts.searchBudgetMs }),
		process: { fdPipes: true, ready: async () => {}, spawn: spawnLocal },
		close: async () => {},
	};
}
