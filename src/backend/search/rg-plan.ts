/**
 * Which rg runs answer a grep, and whose answer is kept. The answer is always the first `limit`
 * matches in path order, taken from a run that saw every file up to them:
 *   - a run in parallel (no --sort: every core) that ended under the limit saw the whole tree,
 *     and its files sorted by path are the answer;
 *   - a run with `--sort path` (one thread, files in path order) stopped at the match past the
 *     limit (or ended) has the first `limit` in order.
 * On this machine (`probe` given) the ordered run goes first, alone, as a probe that prints line
 * by line; the parallel run is started beside it but held before its walk (RunOptions.hold). A
 * tree dense with matches is answered by the probe; when the probe goes quiet (ProbeTiming) it is
 * stopped and the parallel run released, its start-up then already done. When that run
 * passes the limit, an ordered run starts from the beginning. A probe past half the limit is kept;
 * if it then goes quiet, the parallel run searches beside it, and the first to finish answers. Without `probe` (a remote
 * transport, where output arrives in round trips), the ordered run starts only once the parallel
 * one passes the limit. Every run starts from the same pinned handle and shares the time budget.
 */
import type { GrepOutcome, GrepRequest } from "../types.js";
import type { RgTool } from "./detect.js";
import type { Lookahead } from "./lookahead.js";
import { type Pass, rgPass } from "./rg.js";
import { type Answer, parallelFirst } from "./rg-parallel.js";
import type { ArgvRunner } from "./runner.js";
import { comparePaths } from "./semantics.js";

/**
 * When the ordered probe is given up. The probe says when its start-up is over and its walk
 * begins (rg.ts, READY_MARK), at `tr`: the parallel run, started at the same moment and waiting
 * for its pattern, is about as far by then, so the wait for the mark costs a full scan little.
 * Given up: with no mark by `firstMs`; with no output by `readyMs` after the mark; after its first
 * output at `t1`, after a silence of `quietMs`, and at the latest max(`readyMs`, 1.5 × t1) after
 * it. `readyMs` and `quietMs` grow to tr / 8 on a machine slow to start rg (a loaded one).
 */
export interface ProbeTiming {
	firstMs: number;
	readyMs: number;
	quietMs: number;
}

/**
 * 20 ms: the longest rg's start-up is waited for (an idle 2-core machine: 1.4 ms; loaded, tens
 * of ms, when the parallel run's is as slow); 0.5 ms: from the walk's start to the first file of
 * a dense tree, with room; see docs/ARCHITECTURE.md, "Search cost on any input".
 */
export const DEFAULT_PROBE: ProbeTiming = { firstMs: 20, readyMs: 0.5, quietMs: 1 };

/** How a grep on rg is run beyond the default: see the top of this file and rg-parallel.ts. */
export interface RgPlanOptions {
	probe?: ProbeTiming;
	lookahead?: Lookahead;
}

export async function rgGrep(
	run: ArgvRunner,
	rg: RgTool,
	req: GrepRequest,
	{ probe, lookahead }: RgPlanOptions = {},
): Promise<GrepOutcome> {
	// rg itself is the judge of the pattern (Rust regex syntax); see rgFailure in rg.ts.
	let answer: Answer;
	if (req.pinned !== undefined && req.pinnedDir !== true) {
		// One file: one thread either way, so one ordered run.
		answer = { pass: await rgPass(run, rg, req, { order: "path" }), ordered: true };
	} else if (probe) answer = await withProbe(run, rg, req, probe);
	else answer = await parallelFirst(run, rg, req, lookahead);
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

/** The parallel run and the ordered probe together; see the top of this file. */
async function withProbe(
	run: ArgvRunner,
	rg: RgTool,
	req: GrepRequest,
	timing: ProbeTiming,
): Promise<Answer> {
	const stopParallel = new AbortController();
	const stopProbe = new AbortController();
	let quiet: Timer | undefined;
	let deadline: Timer | undefined;
	const keepProbe = () => {
		quiet?.cancel();
		deadline?.cancel();
	};
	let releaseParallel = () => {};
	const released = new Promise<void>((resolve) => {
		releaseParallel = resolve;
	});
	stopProbe.signal.addEventListener("abort", () => releaseParallel(), { once: true });
	let started = 0;
	let tr: number | undefined;
	let t1: number | undefined;
	let committed = false;
	const giveUp = () => {
		if (!committed) stopProbe.abort();
	};
	// Timers scale with the start-up time (a loaded machine pauses a process for longer).
	const pause = (ms: number) => Math.max(ms, (tr ?? t1 ?? 0) / 8);
	// The probe searches alone; the parallel run is started ahead (its start-up is done meanwhile)
	// and walks only once the probe is given up, or goes quiet after it was kept.
	const probe = rgPass(run, rg, req, {
		order: "path",
		cancel: stopProbe.signal,
		onReady: () => {
			if (t1 !== undefined || stopProbe.signal.aborted || committed) return;
			tr = performance.now() - started;
			deadline?.cancel();
			deadline = timer(pause(timing.readyMs), giveUp);
		},
		onOverLimit: () => {
			keepProbe();
			stopParallel.abort();
		},
		onOutput: (matches) => {
			if (stopProbe.signal.aborted) return;
			quiet?.cancel();
			// Half the limit found in path order: the probe answers, and is never given up (a pause
			// now, a loaded machine's preemption, must not throw that away for two more runs). If it
			// then goes quiet (the rest of the tree is sparse), the parallel run searches beside it:
			// a run that ends under the limit has seen the whole tree too.
			if (committed || matches * 2 > req.limit) {
				if (!committed) deadline?.cancel();
				committed = true;
				quiet = timer(pause(timing.quietMs), releaseParallel);
				return;
			}
			if (t1 === undefined) {
				t1 = performance.now() - started;
				deadline?.cancel();
				deadline = timer(Math.max(timing.readyMs, 1.5 * t1), giveUp);
			}
			quiet = timer(pause(timing.quietMs), giveUp);
		},
	});
	const parallel = rgPass(run, rg, req, { order: "any", cancel: stopParallel.signal, release: released });
	// The runner starts the process before returning (a local spawn is synchronous): the probe's
	// times count from there, not from before the parallel run's start.
	started = performance.now();
	deadline = timer(timing.firstMs, giveUp);
	// A pass that ran to its end holds the answer, so the other is stopped; a failing pass stops
	// the other too. Both are awaited: no rg outlives the call.
	const settle = (p: Promise<Pass>, other: AbortController) =>
		p.then(
			(r) => {
				if (r.complete) other.abort();
				return r;
			},
			(e: unknown) => {
				other.abort();
				throw e;
			},
		);
	const [par, ord] = await Promise.allSettled([settle(parallel, stopProbe), settle(probe, stopParallel)]);
	keepProbe();
	if (par.status === "rejected") throw par.reason;
	if (ord.status === "rejected") throw ord.reason;
	if (ord.value.overLimit || ord.value.complete) return { pass: ord.value, ordered: true };
	// Stopped by the budget before it was given up: its prefix in path order.
	if (!stopProbe.signal.aborted) return { pass: ord.value, ordered: true };
	// Under the limit (the whole tree seen), or stopped by the budget: its files, sorted.
	if (!par.value.overLimit) return { pass: par.value, ordered: false };
	// Past the limit: the probe's prefix if the budget stopped it, else an ordered run from the start.
	if (ord.value.timedOut) return { pass: ord.value, ordered: true };
	return { pass: await rgPass(run, rg, req, { order: "path" }), ordered: true };
}

const MAX_TIMER_MS = 2 ** 31 - 1; // setTimeout takes a longer delay as 1 ms

interface Timer {
	cancel(): void;
}

/**
 * Calls `fn` once `ms` have passed by performance.now(), never before: Node counts a timer from
 * the event loop's cached time, which can be a millisecond old after a busy turn (starting two
 * processes), and the probe's pauses are about that long.
 */
function timer(ms: number, fn: () => void): Timer {
	const due = performance.now() + ms;
	let handle: ReturnType<typeof setTimeout>;
	const arm = (wait: number) => {
		handle = setTimeout(
			() => {
				const left = due - performance.now();
				if (left > 0) arm(left);
				else fn();
			},
			Math.min(wait, MAX_TIMER_MS),
		);
	};
	arm(ms);
	return { cancel: () => clearTimeout(handle) };
}
