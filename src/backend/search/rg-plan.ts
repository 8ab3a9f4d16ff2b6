/**
 * Which rg runs answer a grep, and whose answer is kept. The answer is always the first `limit`
 * matches in path order, taken from a run that saw every file up to them:
 *   - a run in parallel (no --sort: every core) that ended under the limit saw the whole tree,
 *     and its files sorted by path are the answer;
 *   - a run with `--sort path` (one thread, files in path order) stopped at the match past the
 *     limit (or ended) has the first `limit` in order.
 * The parallel run goes first; the ordered run starts once it passes the limit, or at once when
 * the lookahead saw more than the limit in the first files (rg-parallel.ts). Every run starts
 * from the same pinned handle and shares the time budget.
 */
import type { GrepOutcome, GrepRequest } from "../types.js";
import type { RgTool } from "./detect.js";
import type { Lookahead } from "./lookahead.js";
import { rgPass } from "./rg.js";
import { type Answer, parallelFirst } from "./rg-parallel.js";
import type { ArgvRunner } from "./runner.js";
import { comparePaths } from "./semantics.js";

/** How a grep on rg is run beyond the default: see the top of this file and rg-parallel.ts. */
export interface RgPlanOptions {
	lookahead?: Lookahead;
}

export async function rgGrep(
	run: ArgvRunner,
	rg: RgTool,
	req: GrepRequest,
	{ lookahead }: RgPlanOptions = {},
): Promise<GrepOutcome> {
	// rg itself is the judge of the pattern (Rust regex syntax); see rgFailure in rg.ts.
	let answer: Answer;
	if (req.pinned !== undefined && req.pinnedDir !== true) {
		// One file: one thread either way, so one ordered run.
		answer = { pass: await rgPass(run, rg, req, { order: "path" }), ordered: true };
	} else answer = await parallelFirst(run, rg, req, lookahead);
	const { pass, ordered } = answer;
	if (!ordered) pass.files.sort((a, b) => comparePaths(a.rgPath, b.rgPath));
	const found = pass.files.flatMap((f) => f.matches);
	const late = pass.timedOut && found.length <= req.limit;
	return {
		matches: found.slice(0, req.limit),
		limitReached: found.length > req.limit,
		engine: "rg",
		...(late ? { timedOut: true } : {}),
	};
}
