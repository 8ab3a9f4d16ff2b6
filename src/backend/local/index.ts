/** The `local` backend: this machine's files, processes and search tools. */
import { ProcessTracker } from "../leftovers.js";
import { Spawner } from "../spawn/spawner.js";
import type { Backend, SearchOps } from "../types.js";
import { createLocalExec } from "./exec.js";
import { createLocalFs, type LocalFsHooks } from "./fs.js";
import { spawnLocal } from "./spawn.js";

/** Options of createLocalBackend. */
export interface LocalBackendOptions {
	/** "auto" uses rg/fd when installed and the JS engine otherwise. */
	searchEngine?: "auto" | "native" | "js";
	/** Time budget of one grep or find (default 60 s); then it answers TIMEOUT with what it found. */
	searchBudgetMs?: number;
	hooks?: LocalFsHooks;
	/** grep's lookahead while rg starts (createLocalSearch's `lookahead`; default on). */
	searchLookahead?: boolean;
}

/** This machine's files, commands and searches, with the user's rights (the default backend). */
export function createLocalBackend(opts: LocalBackendOptions = {}): Backend {
	// What commands leave running is this backend's: killed per call, or at close (leftovers.ts).
	const tracker = new ProcessTracker();
	const fs = createLocalFs(opts.hooks);
	const spawner = new Spawner();
	return {
		kind: "local",
		localFiles: true,
		spawnsHere: true,
		fs,
		exec: createLocalExec(tracker, spawner),
		search: searchOnFirstUse(async () => {
			const { createLocalSearch, createLocalTools } = await import("../search/index.js");
			return createLocalSearch({
				engine: opts.searchEngine ?? "auto",
				pins: fs.pins,
				budgetMs: opts.searchBudgetMs,
				tools: createLocalTools({ spawner }),
				...(opts.searchLookahead === false ? { lookahead: false } : {}),
			});
		}),
		process: { fdPipes: true, ready: async () => {}, spawn: (req) => spawnLocal(req, spawner) },
		close: async () => {
			await tracker.close();
			await fs.close();
		},
	};
}

/**
 * Search made by the first grep or find: its engines (rg and fd plans, the JS walker, glob
 * matching) are loaded then, not when keel starts, since many sessions never search.
 */
export function searchOnFirstUse(make: () => Promise<SearchOps>): SearchOps {
	let made: Promise<SearchOps> | undefined;
	const search = () => {
		made ??= make();
		return made;
	};
	return {
		grep: async (req) => (await search()).grep(req),
		find: async (req) => (await search()).find(req),
	};
}
