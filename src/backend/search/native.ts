/**
 * ripgrep (grep) and fd (find) engines. They never spawn anything themselves: they drive an
 * `ArgvRunner`, so the same engines can run over any exec transport (local, SSH, ...). They
 * mirror the semantics documented in js.ts; see there for the shared rules. The rooms:
 * runner.ts (running a tool under a limit and a budget), detect.ts (finding and probing the
 * tools), rg.ts, rg-plan.ts and rg-output.ts (grep), fd.ts (find).
 */
import { backendFact } from "../../boundary/backend-facts.js";
import type { SearchOps } from "../types.js";
import type { NativeTools } from "./detect.js";
import { fdFind } from "./fd.js";
import { type RgPlanOptions, rgGrep } from "./rg-plan.js";
import type { ArgvRunner } from "./runner.js";

export {
	detectNativeTools,
	type FdTool,
	type NativeTools,
	parseVersion,
	probeFd,
	probeRg,
	type RgTool,
} from "./detect.js";
export { fdArgv, fdFind } from "./fd.js";
export { rgArgv, rgGlob } from "./rg.js";
export { type RgPlanOptions, rgGrep } from "./rg-plan.js";
export { type ArgvRunner, lineSplitter, type RunOptions, type RunResult, runCollect } from "./runner.js";

/**
 * SearchOps over rg and fd; an operation whose tool is missing fails with BACKEND_UNAVAILABLE.
 * `lookahead`: this process reads the first files while rg starts (rg-parallel.ts), so only
 * where it sees the files rg searches.
 */
export function createNativeSearch(run: ArgvRunner, tools: NativeTools, opts: RgPlanOptions = {}): SearchOps {
	const missing = (tool: string) => backendFact("search-tool-missing", { tool });
	return {
		grep: (req) => (tools.rg ? rgGrep(run, tools.rg, req, opts) : Promise.reject(missing("ripgrep (rg)"))),
		find: (req) => (tools.fd ? fdFind(run, tools.fd, req) : Promise.reject(missing("fd"))),
	};
}
