/** Search on this machine: rg/fd when present, the pure-JS engine otherwise (same results). */
import type { DirPins } from "../local/pin.js";
import type { SearchOps } from "../types.js";
import { createJsSearch } from "./js.js";
import { createLocalTools, type LocalTools } from "./local-runner.js";
import { createLookahead, type Lookahead } from "./lookahead.js";
import { createNativeSearch } from "./native.js";
import { withPinnedStart } from "./pinned.js";

export type SearchEngineChoice = "auto" | "native" | "js";

export interface LocalSearchOptions {
	/** "auto" (default): rg for grep and fd for find when found, else js; "native": never js. */
	engine?: SearchEngineChoice;
	/** Tool detection to use (default: a new one, so detection runs once per search object). */
	tools?: LocalTools;
	/** The local FileOps' pinned roots: searches then start from a handle on the checked path. */
	pins?: DirPins;
	/**
	 * false: rg and fd run where this process's descriptors cannot be named (inside a sandbox, via
	 * `tools`), so only the JS engine starts from the pinned handle (default true).
	 */
	pinNative?: boolean;
	/** Time a grep or find may take before it stops its children and answers what it found. */
	budgetMs?: number;
	/**
	 * grep's lookahead (lookahead.ts, rg-parallel.ts): before rg starts and beside its start-up,
	 * this process reads the first files in path order, and a tree with more than the limit there
	 * is answered by the ordered run alone. Default: on where rg starts from the pinned handle
	 * (this machine).
	 */
	lookahead?: boolean | Lookahead;
}

export const DEFAULT_SEARCH_BUDGET_MS = 60_000;

/** Runs `fn` with a `stop` signal that fires after `budgetMs` (or when the caller's does). */
async function withBudget<R extends { stop?: AbortSignal }, O>(
	req: R,
	budgetMs: number,
	fn: (r: R) => Promise<O>,
): Promise<O> {
	const budget = new AbortController();
	const timer = setTimeout(() => budget.abort(), budgetMs);
	try {
		return await fn({ ...req, stop: req.stop ? AbortSignal.any([req.stop, budget.signal]) : budget.signal });
	} finally {
		clearTimeout(timer);
	}
}

export function createLocalSearch(opts: LocalSearchOptions = {}): SearchOps {
	const ops = chooseEngine(opts);
	const budgetMs = opts.budgetMs ?? DEFAULT_SEARCH_BUDGET_MS;
	return {
		grep: (req) => withBudget(req, budgetMs, ops.grep),
		find: (req) => withBudget(req, budgetMs, ops.find),
	};
}

/** With the local FileOps' pins, each search starts from a handle on the path the guard checked. */
function pinnedStart(ops: SearchOps, pins: DirPins | undefined): SearchOps {
	if (!pins) return ops;
	return {
		grep: (req) =>
			withPinnedStart(pins, req.path, (pinned, pinnedDir) => ops.grep({ ...req, pinned, pinnedDir })),
		find: (req) => withPinnedStart(pins, req.path, (pinned) => ops.find({ ...req, pinned })),
	};
}

function chooseEngine(opts: LocalSearchOptions): SearchOps {
	const engine = opts.engine ?? "auto";
	const js = pinnedStart(createJsSearch(), opts.pins);
	if (engine === "js") return js;
	const pinNative = opts.pinNative !== false;
	const tools = opts.tools ?? createLocalTools();
	let native: Promise<{ ops: SearchOps; hasRg: boolean; hasFd: boolean }> | undefined;
	const lookahead =
		typeof opts.lookahead === "function"
			? opts.lookahead
			: (opts.lookahead ?? pinNative)
				? createLookahead()
				: undefined;
	const getNative = () => {
		native ??= tools.detect().then((t) => ({
			ops: pinnedStart(
				createNativeSearch(tools.run, t, {
					...(lookahead ? { lookahead } : {}),
				}),
				pinNative ? opts.pins : undefined,
			),
			hasRg: t.rg !== undefined,
			// An fd without --no-require-git cannot apply .gitignore outside a repository: "auto"
			// uses the JS engine for find then ("native" uses that fd, with the difference).
			hasFd: t.fd?.noRequireGit === true,
		}));
		return native;
	};
	return {
		async grep(req) {
			const n = await getNative();
			return engine === "native" || n.hasRg ? n.ops.grep(req) : js.grep(req);
		},
		async find(req) {
			const n = await getNative();
			return engine === "native" || n.hasFd ? n.ops.find(req) : js.find(req);
		},
	};
}

export { createJsSearch } from "./js.js";
export { createLocalTools, findOnPath, type LocalTools, localRunner } from "./local-runner.js";
export {
	type ArgvRunner,
	createNativeSearch,
	type FdTool,
	type NativeTools,
	type RgTool,
	type RunOptions,
	type RunResult,
} from "./native.js";
