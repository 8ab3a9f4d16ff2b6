/** Search on this machine: rg/fd when present, the pure-JS engine otherwise (same results). */
import type { DirPins } from "../local-pin.js";
import type { SearchOps } from "../types.js";
import { createJsSearch } from "./js.js";
import { createLocalTools, type LocalTools } from "./local-runner.js";
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
}

export function createLocalSearch(opts: LocalSearchOptions = {}): SearchOps {
	const ops = chooseEngine(opts);
	const pins = opts.pins;
	if (!pins) return ops;
	return {
		grep: (req) => withPinnedStart(pins, req.path, (pinned) => ops.grep({ ...req, pinned })),
		find: (req) => withPinnedStart(pins, req.path, (pinned) => ops.find({ ...req, pinned })),
	};
}

function chooseEngine(opts: LocalSearchOptions): SearchOps {
	const engine = opts.engine ?? "auto";
	const js = createJsSearch();
	if (engine === "js") return js;
	const tools = opts.tools ?? createLocalTools();
	let native: Promise<{ ops: SearchOps; hasRg: boolean; hasFd: boolean }> | undefined;
	const getNative = () => {
		native ??= tools.detect().then((t) => ({
			ops: createNativeSearch(tools.run, t),
			hasRg: t.rg !== undefined,
			hasFd: t.fd !== undefined,
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
