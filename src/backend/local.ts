/** The `local` backend (REQUIREMENTS B2): this machine's files, processes and search tools. */
import { createLocalExec } from "./local-exec.js";
import { createLocalFs, type LocalFsHooks } from "./local-fs.js";
import { spawnLocal } from "./local-spawn.js";
import { createLocalSearch } from "./search/index.js";
import type { Backend } from "./types.js";

export interface LocalBackendOptions {
	/** "auto" uses rg/fd when installed and the JS engine otherwise. */
	searchEngine?: "auto" | "native" | "js";
	hooks?: LocalFsHooks;
}

export function createLocalBackend(opts: LocalBackendOptions = {}): Backend {
	const fs = createLocalFs(opts.hooks);
	return {
		kind: "local",
		fs,
		exec: createLocalExec(),
		search: createLocalSearch({ engine: opts.searchEngine ?? "auto", pins: fs.pins }),
		process: { fdPipes: true, ready: async () => {}, spawn: spawnLocal },
		close: async () => fs.close(),
	};
}
