/**
 * grep's default plan on rg (rg-plan.ts picks it): the parallel run first; when it passes the
 * limit, the run with `--sort path`, started at that moment, answers. With a lookahead (this
 * machine: lookahead.ts), this process reads the first files in path order while the parallel
 * run starts; if more than the limit lie there before rg's walk begins, the parallel run is
 * stopped during its start-up and the ordered run answers alone: a tree dense with matches then
 * costs one rg walk, not two in a row.
 */
import type { GrepRequest } from "../types.js";
import type { RgTool } from "./detect.js";
import type { Lookahead } from "./lookahead.js";
import { type Pass, rgPass } from "./rg.js";
import type { ArgvRunner } from "./runner.js";

export interface Answer {
	pass: Pass;
	/** The pass ran with --sort path: its files are already in path order. */
	ordered: boolean;
}

export async function parallelFirst(
	run: ArgvRunner,
	rg: RgTool,
	req: GrepRequest,
	lookahead?: Lookahead,
): Promise<Answer> {
	const stopParallel = new AbortController();
	const stopOrdered = new AbortController();
	// rg's word that its start-up is done and the walk begins (READY_MARK): the lookahead ends.
	const walkBegins = new AbortController();
	let ordered: Promise<Pass> | undefined;
	const startOrdered = () => {
		ordered ??= rgPass(run, rg, req, { order: "path", cancel: stopOrdered.signal });
		// Awaited below; until then a failure (an abort meanwhile) must not go unhandled.
		ordered.catch(() => undefined);
	};
	const parallel = rgPass(run, rg, req, {
		order: "any",
		cancel: stopParallel.signal,
		onOverLimit: startOrdered,
		...(lookahead ? { onReady: () => walkBegins.abort() } : {}),
	});
	parallel.catch(() => undefined);
	if (lookahead && (await guess(lookahead, req, walkBegins.signal, parallel))) {
		stopParallel.abort();
		startOrdered();
	}
	let pass: Pass;
	try {
		pass = await parallel;
	} catch (e) {
		stopOrdered.abort();
		await ordered?.catch(() => undefined);
		throw e;
	}
	// Ran to its end under the limit: the whole tree, so its files sorted are the answer.
	if (pass.complete && !pass.overLimit) stopOrdered.abort();
	const second = ordered ? await ordered : undefined;
	// Past the limit, or stopped for the lookahead: the ordered run answers; else (under the limit,
	// or stopped by the budget first) the parallel run's files in path order do.
	if (second && (pass.overLimit || !pass.complete)) return { pass: second, ordered: true };
	return { pass, ordered: false };
}

/**
 * The lookahead's guess, given up (false) once rg's walk begins, the parallel run ends, or the
 * call is stopped: whatever the lookahead waits on, the plan never waits past that.
 */
async function guess(
	lookahead: Lookahead,
	req: GrepRequest,
	walkBegins: AbortSignal,
	parallel: Promise<Pass>,
) {
	const stop = AbortSignal.any([walkBegins, ...[req.signal, req.stop].filter((s) => s !== undefined)]);
	const given = new Promise<false>((resolve) => {
		if (stop.aborted) resolve(false);
		stop.addEventListener("abort", () => resolve(false), { once: true });
		parallel.then(
			() => resolve(false),
			() => resolve(false),
		);
	});
	return Promise.race([lookahead(req, stop).catch(() => false), given]);
}
