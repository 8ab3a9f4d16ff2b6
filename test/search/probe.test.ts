/**
 * grep's path-ordered probe, run first on this machine while the parallel rg waits for its pattern
 * (src/backend/search/rg-plan.ts). Its timing decides how fast the answer comes, never what it is:
 * every plan must give the first N in path order. Attacked with matches all late in path order,
 * files appearing and vanishing while rg runs, links to the outside, failing and aborted runs.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DirPins } from "../../src/backend/local-pin.js";
import { createLocalSearch, type LocalSearchOptions } from "../../src/backend/search/index.js";
import { localRunner } from "../../src/backend/search/local-runner.js";
import { createLookahead } from "../../src/backend/search/lookahead.js";
import { type ArgvRunner, createNativeSearch, DEFAULT_PROBE } from "../../src/backend/search/native.js";
import { loadRe2 } from "../../src/backend/search/patterns.js";
import { comparePaths } from "../../src/backend/search/semantics.js";
import { rgProcessesUnder } from "./rg-processes.js";
import { fakeTools, HAS_RG, hits, matchLine, RG, realTools, req, sorted, until } from "./rg-script.js";

const KEPT = { firstMs: 1e9, readyMs: 1e9, quietMs: 1e9 };
const GIVEN_UP = { firstMs: 0, readyMs: 0, quietMs: 0 };
/**
 * Every plan: the probe with its default timing, never given up, given up at once; no probe, with
 * the lookahead (the default here) and without it.
 */
const PLANS: [string, Pick<LocalSearchOptions, "probe" | "lookahead">][] = [
	["the probe's default timing", { probe: DEFAULT_PROBE }],
	["probe kept", { probe: KEPT }],
	["probe given up", { probe: GIVEN_UP }],
	["no probe, the lookahead", { probe: false, lookahead: createLookahead(loadRe2()) }],
	["no probe, no lookahead", { probe: false, lookahead: false }],
];
describe("the probe's plan, over a scripted transport", () => {
	it("a dense tree: the probe's answer, the parallel run stopped", async () => {
		let parallelStopped = false;
		const runner: ArgvRunner = async (argv, opts) => {
			if (sorted(argv)) {
				for (const n of ["a", "b", "c", "d"]) opts.onStdout(matchLine(`/r/${n}`, 1));
				return { exitCode: 0 };
			}
			// The parallel run prints late files, then stalls: only the probe can answer.
			opts.onStdout(matchLine("/r/z", 1));
			await until(opts.signal);
			parallelStopped = true;
			return { exitCode: null };
		};
		const r = await createNativeSearch(runner, fakeTools, { probe: KEPT }).grep(req("/r", { limit: 2 }));
		expect(hits(r)).toEqual(["/r/a:1", "/r/b:1"]);
		expect(r.limitReached).toBe(true);
		expect(parallelStopped).toBe(true);
	});

	it("under the limit: the parallel run's files sorted, the probe stopped", async () => {
		let probeStopped = false;
		const runner: ArgvRunner = async (argv, opts) => {
			if (sorted(argv)) {
				opts.onStdout(matchLine("/r/a", 1));
				await until(opts.signal);
				probeStopped = true;
				return { exitCode: null };
			}
			for (const n of ["c", "a", "b"]) opts.onStdout(matchLine(`/r/${n}`, 1));
			return { exitCode: 0 };
		};
		const r = await createNativeSearch(runner, fakeTools, { probe: KEPT }).grep(req("/r"));
		expect(hits(r)).toEqual(["/r/a:1", "/r/b:1", "/r/c:1"]);
		expect(r.limitReached).toBe(false);
		expect(probeStopped).toBe(true);
	});

	it("the probe given up, then the parallel run past the limit: an ordered run from the start", async () => {
		const runs: string[] = [];
		let probes = 0;
		const runner: ArgvRunner = async (argv, opts) => {
			if (sorted(argv)) {
				runs.push("ordered");
				if (++probes === 1) {
					// The probe is silent (its matches are far away) until it is given up.
					await until(opts.signal);
					return { exitCode: null };
				}
				for (const n of ["a", "b", "c"]) opts.onStdout(matchLine(`/r/${n}`, 1));
				return { exitCode: 0 };
			}
			runs.push("parallel");
			await new Promise((r) => setTimeout(r, 30)); // past the probe's 0 ms
			for (const n of ["c", "b", "a"]) {
				if (opts.signal?.aborted) break;
				opts.onStdout(matchLine(`/r/${n}`, 1));
			}
			return { exitCode: opts.signal?.aborted ? null : 0 };
		};
		const r = await createNativeSearch(runner, fakeTools, { probe: GIVEN_UP }).grep(req("/r", { limit: 2 }));
		expect(hits(r)).toEqual(["/r/a:1", "/r/b:1"]);
		// The probe starts first, the parallel run second, the ordered run from the start last.
		expect(runs).toEqual(["ordered", "parallel", "ordered"]);
	});

	it.each([
		[60, 1],
		[40, 2],
	])("a probe that paused after %i of 100 matches: ordered runs started %i", async (before, ordered) => {
		// The probe's output stops for 40 ms (a loaded machine's preemption), far past quietMs.
		// Past half the limit it is kept and answers; under it, it is given up and the parallel run,
		// past the limit, brings an ordered run from the start. The answer is the same either way.
		const runs: string[] = [];
		const names = Array.from({ length: 150 }, (_, i) => `/r/f${String(i).padStart(3, "0")}`);
		const runner: ArgvRunner = async (argv, opts) => {
			if (sorted(argv)) {
				runs.push("ordered");
				const probe = runs.length === 1;
				await new Promise((r) => setTimeout(r, 1)); // output comes after the start, as rg's does
				for (const [i, n] of names.entries()) {
					if (opts.signal?.aborted) return { exitCode: null };
					if (probe && i === before)
						await Promise.race([new Promise((r) => setTimeout(r, 40)), until(opts.signal)]);
					if (opts.signal?.aborted) return { exitCode: null };
					opts.onStdout(matchLine(n, 1));
				}
				return { exitCode: 0 };
			}
			runs.push("parallel");
			const released = await Promise.race([
				opts.hold?.then(() => true),
				until(opts.signal).then(() => false),
			]);
			if (!released) return { exitCode: null };
			for (const n of [...names].reverse()) {
				if (opts.signal?.aborted) return { exitCode: null };
				opts.onStdout(matchLine(n, 1));
			}
			return { exitCode: 0 };
		};
		const timing = { firstMs: 1000, readyMs: 1000, quietMs: 5 };
		const r = await createNativeSearch(runner, fakeTools, { probe: timing }).grep(req("/r", { limit: 100 }));
		expect(hits(r)).toEqual(names.slice(0, 100).map((n) => `${n}:1`));
		expect(r.limitReached).toBe(true);
		expect(runs.filter((x) => x === "ordered")).toHaveLength(ordered);
	});

	it("a run that fails stops the other, and the call fails with its error", async () => {
		let parallelStopped = false;
		const runner: ArgvRunner = async (argv, opts) => {
			if (sorted(argv)) {
				opts.onStderr?.(Buffer.from("regex parse error:\n    (\n    ^\nerror: unclosed group\n"));
				return { exitCode: 2 };
			}
			await until(opts.signal);
			parallelStopped = true;
			return { exitCode: null };
		};
		const p = createNativeSearch(runner, fakeTools, { probe: KEPT }).grep(req("/r", { pattern: "(" }));
		await expect(p).rejects.toMatchObject({ code: "INVALID_PATTERN" });
		expect(parallelStopped).toBe(true);
	});
});

describe("the probe's plan, with real rg on real trees", () => {
	let base = "";
	beforeEach(async () => {
		base = await realpath(await mkdtemp(join(tmpdir(), "keel-rg-probe-")));
	});
	afterEach(async () => {
		await rm(base, { recursive: true, force: true });
	});

	/** Early dirs (in path order) without a needle, late dirs full of them. */
	async function lateTree(dir: string): Promise<void> {
		for (let d = 0; d < 30; d++) {
			const name = d < 26 ? `a${String(d).padStart(2, "0")}` : `z${d}`;
			await mkdir(join(dir, name), { recursive: true });
			for (let f = 0; f < 30; f++) {
				const body = d < 26 ? "hay\n".repeat(20) : `hay\n${"needle\n".repeat(1 + (f % 4))}`;
				await writeFile(join(dir, name, `f${f}.txt`), body);
			}
		}
	}

	it.skipIf(!HAS_RG)(`matches only late in path order: every plan gives the first N${RG}`, async () => {
		await lateTree(base);
		const expected = await createLocalSearch({ engine: "js" }).grep(req(base, { limit: 25 }));
		expect(expected.limitReached).toBe(true);
		expect(hits(expected)[0]).toBe(`${base}/z26/f0.txt:2`);
		for (const [name, plan] of PLANS) {
			const ops = createLocalSearch({ engine: "native", ...plan });
			for (let i = 0; i < 5; i++) {
				const r = await ops.grep(req(base, { limit: 25 }));
				expect(hits(r), name).toEqual(hits(expected));
				expect(r.limitReached, name).toBe(true);
				// The run not answering (the parallel one held before its walk, or the probe) is gone too.
				expect(rgProcessesUnder(base), name).toEqual([]);
			}
		}
	});

	it.skipIf(!HAS_RG)(
		`a file changing after the probe is given up: the ordered run's answer${RG}`,
		async () => {
			for (let d = 0; d < 2; d++) {
				await mkdir(join(base, `d${d}`));
				for (let f = 0; f < 10; f++) await writeFile(join(base, `d${d}`, `f${f}.txt`), "needle\nneedle\n");
			}
			const first = join(base, "d0", "f0.txt");
			const runs: boolean[] = [];
			const racing: ArgvRunner = async (argv, opts) => {
				runs.push(sorted(argv));
				// The probe (the first run) stays silent until it is given up: it never wins.
				if (runs.length === 1) {
					await until(opts.signal);
					return { exitCode: null };
				}
				// Before the third run (the ordered one from the start): the first file loses its
				// needles, a file late in path order gains many.
				if (runs.length === 3) {
					await writeFile(first, "no match here\n");
					await writeFile(join(base, "d1", "f9.txt"), "needle late\n".repeat(50));
				}
				return localRunner(argv, opts);
			};
			const r = await createNativeSearch(racing, realTools, { probe: GIVEN_UP }).grep(
				req(base, { limit: 5 }),
			);
			expect(runs).toEqual([true, false, true]);
			const js = await createLocalSearch({ engine: "js" }).grep(req(base, { limit: 5 }));
			expect(hits(r)).toEqual(hits(js));
			expect(hits(r).some((h) => h.startsWith(`${first}:`))).toBe(false);
			expect(r.limitReached).toBe(true);
		},
	);

	it.skipIf(!HAS_RG)(`a pattern with a line break means the same under every plan${RG}`, async () => {
		// Every run is given the pattern on its command line: a "\r" or "\n" in it means the same to
		// the held parallel run as to the probe and the ordered run.
		await mkdir(join(base, "d"));
		for (let f = 0; f < 20; f++) await writeFile(join(base, "d", `f${f}.txt`), "needle\r\nneedle\n");
		for (const [name, plan] of PLANS) {
			const ops = createLocalSearch({ engine: "native", ...plan });
			const cr = await ops.grep(req(base, { pattern: "needle\r", limit: 5 }));
			expect(
				cr.matches.map((m) => m.line),
				name,
			).toEqual([1, 1, 1, 1, 1]);
			expect(cr.limitReached, name).toBe(true);
			await expect(ops.grep(req(base, { pattern: "needle\nneedle" })), name).rejects.toMatchObject({
				code: "INVALID_PATTERN",
			});
		}
	});

	it.skipIf(!HAS_RG)(`files created and deleted while rg runs: answers inside the root${RG}`, async () => {
		const searched = join(base, "root");
		await lateTree(searched);
		const outside = join(base, "outside");
		await mkdir(outside);
		await writeFile(join(outside, "s.txt"), "needle SECRET\n");
		let churn = true;
		let round = 0;
		// A writer racing every run: new files with needles early in path order, and deletions.
		const racer = (async () => {
			while (churn) {
				const n = round++;
				await writeFile(join(searched, "a00", `new${n}.txt`), "needle new\n");
				await symlink(outside, join(searched, "a01", `link${n}`)).catch(() => undefined);
				await unlink(join(searched, "a00", `new${n - 3}.txt`)).catch(() => undefined);
				await new Promise((r) => setImmediate(r));
			}
		})();
		const pins = new DirPins();
		pins.pin([searched]);
		try {
			for (const [name, plan] of PLANS) {
				const ops = createLocalSearch({ engine: "native", pins, ...plan });
				for (const limit of [5, 2000]) {
					const r = await ops.grep(req(searched, { limit }));
					expect(JSON.stringify(r), name).not.toContain("SECRET");
					for (const m of r.matches) expect(m.path.startsWith(`${searched}/`), name).toBe(true);
					// Results come in path order whatever was changing.
					const paths = r.matches.map((m) => m.path);
					expect(paths, name).toEqual([...paths].sort(comparePaths));
				}
			}
		} finally {
			churn = false;
			await racer;
			pins.close();
		}
	});

	it.skipIf(!HAS_RG)(`links to the outside planted in the tree are never followed${RG}`, async () => {
		const searched = join(base, "root");
		await lateTree(searched);
		const outside = join(base, "outside");
		await mkdir(outside);
		for (let i = 0; i < 50; i++) await writeFile(join(outside, `s${i}.txt`), "needle SECRET\n");
		// Links early in path order, to a directory and to a file outside.
		await symlink(outside, join(searched, "a00", "0-dir-link"));
		await symlink(join(outside, "s0.txt"), join(searched, "0-file-link.txt"));
		const js = await createLocalSearch({ engine: "js" }).grep(req(searched, { limit: 10 }));
		for (const [name, plan] of PLANS) {
			const r = await createLocalSearch({ engine: "native", ...plan }).grep(req(searched, { limit: 10 }));
			expect(JSON.stringify(r), name).not.toContain("SECRET");
			expect(hits(r), name).toEqual(hits(js));
		}
	});

	it.skipIf(!HAS_RG)(`aborted at any moment: ABORTED, and no rg left running${RG}`, async () => {
		await lateTree(base);
		const marker = `needle|unique-${process.pid}-${Date.now()}`;
		let seen = 0; // rg was running at the moment of the abort at least once: the check can fail
		for (const [name, plan] of PLANS) {
			const ops = createLocalSearch({ engine: "native", ...plan });
			for (const delay of [0, 1, 3, 6, 10, 20]) {
				const ac = new AbortController();
				const p = ops.grep(req(base, { pattern: marker, limit: 5, signal: ac.signal }));
				await new Promise((r) => setTimeout(r, delay));
				seen += rgProcessesUnder(base).length;
				ac.abort();
				const r = await p.then(
					(v) => v,
					(e: unknown) => e,
				);
				// Finished before the abort, or ABORTED; either way no rg outlives the call.
				if (!("matches" in (r as object))) expect(r, name).toMatchObject({ code: "ABORTED" });
				expect(rgProcessesUnder(base), `${name}, abort after ${delay} ms`).toEqual([]);
			}
		}
		expect(seen).toBeGreaterThan(0);
	});
});
