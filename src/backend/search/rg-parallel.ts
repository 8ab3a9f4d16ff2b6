/**
 * grep's default plan on rg (rg-plan.ts picks it): the parallel run first; when it passes the
 * limit, the run with `--sort path`, started at that moment, answers. With a lookahead (this
 * machine: lookahead.ts), this process first reads the first files in path order for up to
 * SOLO_MS, before any rg starts: more than the limit there, and the ordered run answers alone;
 * a sparse head, and the parallel run starts with no more guessing. Undecided, the parallel run
 * starts and the lookahead reads on beside its start-up; if more than the limit lie there before
 * rg's walk begins, the parallel run is stopped and the ordered run answers alone. A tree dense
 * with matches then costs one rg start and walk, not two in a row.
 */
import type { GrepRequest } from "../types.js";
import type { RgTool } from "./detect.js";
import type { Lookahead, LookaheadScan, Verdict } from "./lookahead.js";
import { type Pass, rgPass } from "./rg.js";
import type { ArgvRunner } from "./runner.js";

export interface Answer {
	pass: Pass;
	/** The pass ran with --sort path: its files are already in path order. */
	ordered: boolean;
}

/**
 * How long the lookahead reads before any rg starts, in ms: about the time it takes here to find
 * the limit's 100 matches in a tree dense with them (one per file: 100 files at 25-40 µs each),
 * and the most a full scan that it cannot judge sooner pays (a sparse head is judged in its first
 * 16 files). Measured (grep-plans, one run, 0 / 2.5 / 5 ms): the limit case 0.52 / 0.50 / 0.48×
 * pi, full scans 0.99-1.02× rg at each.
 */
const SOLO_MS = 4;
/** Steps of the lookahead beside rg's start-up: the event loop turns between them, in ms. */
const TURN_MS = 0.5;

export async function parallelFirst(
	run: ArgvRunner,
	rg: RgTool,
	req: GrepRequest,
	lookahead?: Lookahead,
): Promise<Answer> {
	let scan = startScan(lookahead, req);
	const first = scan ? stepScan(scan, performance.now() + SOLO_MS) : "sparse";
	if (first === "dense") return { pass: await rgPass(run, rg, req, { order: "path" }), ordered: true };
	if (first === "sparse") {
		scan?.close();
		scan = undefined;
	}
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
		...(scan ? { onReady: () => walkBegins.abort() } : {}),
	});
	parallel.catch(() => undefined);
	if (scan && (await readOn(scan, req, walkBegins.signal, parallel))) {
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

/** The lookahead's scan for `req`; none when it fails (a guess is never worth a failed grep). */
function startScan(lookahead: Lookahead | undefined, req: GrepRequest): LookaheadScan | undefined {
	try {
		return lookahead?.(req);
	} catch {
		return undefined;
	}
}

function stepScan(scan: LookaheadScan, deadline: number): Verdict {
	try {
		return scan.step(deadline);
	} catch {
		scan.close();
		return "sparse";
	}
}

/**
 * The lookahead read on in steps beside rg's start-up, given up (false) once rg's walk begins,
 * the parallel run ends, or the call is stopped: the plan never waits past that.
 */
async function readOn(
	scan: LookaheadScan,
	req: GrepRequest,
	walkBegins: AbortSignal,
	parallel: Promise<Pass>,
): Promise<boolean> {
	const stop = AbortSignal.any([walkBegins, ...[req.signal, req.stop].filter((s) => s !== undefined)]);
	let parallelEnded = false;
	parallel.then(
		() => {
			parallelEnded = true;
		},
		() => {
			parallelEnded = true;
		},
	);
	try {
		for (;;) {
			await new Promise((r) => setImmediate(r));
			if (stop.aborted || parallelEnded) return false;
			const verdict = stepScan(scan, performance.now() + TURN_MS);
			if (verdict !== "more") return verdict === "dense";
		}
	} finally {
		scan.close();
	}
}
