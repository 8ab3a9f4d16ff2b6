/**
 * The probe's ready mark and its keep rule (src/backend/search/rg-plan.ts, rg.ts READY_MARK):
 * the probe waits for rg's own word that its start-up is over before it counts its silence, and a
 * kept probe that goes quiet lets the parallel run search beside it. Timing changes only which run
 * answers, never the answer: checked against the JS engine, with names planted to look like the
 * mark, and with failing runs.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalSearch } from "../../src/backend/search/index.js";
import { createLocalTools } from "../../src/backend/search/local-runner.js";
import { type ArgvRunner, createNativeSearch, DEFAULT_PROBE } from "../../src/backend/search/native.js";
import { READY_MARK, rgPass } from "../../src/backend/search/rg.js";
import { rgProcessesUnder } from "./rg-processes.js";
import { fakeTools, HAS_RG, hits, matchLine, RG, realTools, req, sorted, until } from "./rg-script.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const names = Array.from({ length: 150 }, (_, i) => `/r/f${String(i).padStart(3, "0")}`);

describe("the ready mark and the keep rule, over a scripted transport", () => {
	it("the probe's silence is counted from its mark, never from before it", async () => {
		const events: string[] = [];
		const argvs: string[][] = [];
		const runner: ArgvRunner = async (argv, opts) => {
			argvs.push([...argv]);
			if (sorted(argv)) {
				if (argvs.length > 2) return { exitCode: 1 }; // an ordered run after the probe: nothing
				// A slow start-up: the mark comes at 40 ms, far past any fixed fuse, then silence.
				await Promise.race([sleep(40), until(opts.signal)]);
				if (opts.signal?.aborted) return { exitCode: null };
				events.push("mark");
				opts.onStderr?.(
					Buffer.from(
						`${READY_MARK}: IO error for operation on ${READY_MARK}: Not a directory (os error 20)\n`,
					),
				);
				await until(opts.signal);
				return { exitCode: null };
			}
			await opts.hold;
			events.push("released");
			return { exitCode: 1 };
		};
		// With no deadline before the mark and none after it, only the mark can give the probe up.
		const timing = { firstMs: 1e9, readyMs: 0, quietMs: 1e9 };
		const r = await createNativeSearch(runner, fakeTools, { probe: timing }).grep(req("/r"));
		expect(r.matches).toEqual([]);
		expect(events).toEqual(["mark", "released"]);
		// The mark is the path before the searched one: the probe's word that it is ready, and the
		// write the parallel run is held at.
		const [probeArgv, parallelArgv] = argvs;
		expect(probeArgv.slice(-2)).toEqual([READY_MARK, "/r"]);
		expect(parallelArgv.slice(-2)).toEqual([READY_MARK, "/r"]);
		expect(sorted(parallelArgv)).toBe(false);
	});

	it("kept past half the limit, then quiet: the parallel run searches beside it and its whole-tree answer wins", async () => {
		let probeStopped = false;
		const runner: ArgvRunner = async (argv, opts) => {
			if (sorted(argv)) {
				for (const n of names.slice(0, 60)) opts.onStdout(matchLine(n, 1));
				// The rest of the tree is sparse: the probe prints nothing more for a long time.
				await until(opts.signal);
				probeStopped = true;
				return { exitCode: null };
			}
			await opts.hold;
			// The whole tree holds 70 matches: under the limit, the parallel run sees them all.
			for (const n of names.slice(0, 70).reverse()) opts.onStdout(matchLine(n, 1));
			return { exitCode: 0 };
		};
		const timing = { firstMs: 1e9, readyMs: 1e9, quietMs: 5 };
		const r = await createNativeSearch(runner, fakeTools, { probe: timing }).grep(req("/r"));
		expect(hits(r)).toEqual(names.slice(0, 70).map((n) => `${n}:1`));
		expect(r.limitReached).toBe(false);
		expect(probeStopped).toBe(true);
	});

	it("kept, quiet, then past the limit while the parallel run searches: the probe's first N", async () => {
		let parallelStopped = false;
		const runner: ArgvRunner = async (argv, opts) => {
			if (sorted(argv)) {
				for (const [i, n] of names.entries()) {
					if (i === 60) await sleep(30); // quiet long enough to release the parallel run
					if (opts.signal?.aborted) return { exitCode: null };
					opts.onStdout(matchLine(n, 1));
				}
				return { exitCode: 0 };
			}
			await opts.hold;
			// The parallel run finds late files first and is slow: it must not answer.
			for (const n of [...names].reverse().slice(0, 50)) {
				if (opts.signal?.aborted) break;
				opts.onStdout(matchLine(n, 1));
				await sleep(1);
			}
			await until(opts.signal);
			parallelStopped = true;
			return { exitCode: null };
		};
		const timing = { firstMs: 1e9, readyMs: 1e9, quietMs: 5 };
		const r = await createNativeSearch(runner, fakeTools, { probe: timing }).grep(req("/r"));
		expect(hits(r)).toEqual(names.slice(0, 100).map((n) => `${n}:1`));
		expect(r.limitReached).toBe(true);
		expect(parallelStopped).toBe(true);
	});
});

describe("the ready mark with real rg", () => {
	let base = "";
	beforeEach(async () => {
		base = await realpath(await mkdtemp(join(tmpdir(), "keel-rg-ready-")));
	});
	afterEach(async () => {
		await rm(base, { recursive: true, force: true });
	});

	async function tree(dir: string): Promise<void> {
		for (let d = 0; d < 4; d++) {
			await mkdir(join(dir, `d${d}`), { recursive: true });
			for (let f = 0; f < 5; f++) await writeFile(join(dir, `d${d}`, `f${f}.txt`), "hay\nneedle\n");
		}
	}

	it.skipIf(!HAS_RG)(
		`comes once, before any match; the answer and the status are as without it${RG}`,
		async () => {
			await tree(base);
			const rg = realTools.rg;
			if (!rg) return;
			const events: string[] = [];
			const marked = await rgPass(createLocalTools().run, rg, req(base), {
				order: "path",
				onReady: () => events.push("ready"),
				onOutput: (n) => events.push(`out ${n > 0}`),
			});
			const plain = await rgPass(createLocalTools().run, rg, req(base), { order: "path" });
			expect(events[0]).toBe("ready");
			expect(events.filter((e) => e === "ready")).toHaveLength(1);
			expect(marked.complete).toBe(true);
			expect(marked.files.flatMap((f) => f.matches)).toEqual(plain.files.flatMap((f) => f.matches));
			expect(marked.count).toBe(20);
		},
	);

	it.skipIf(!HAS_RG)(`a bad pattern and a missing path still fail as they should${RG}`, async () => {
		await tree(base);
		const rg = realTools.rg;
		if (!rg) return;
		const run = createLocalTools().run;
		const opts = { order: "path" as const, onReady: () => undefined };
		await expect(rgPass(run, rg, req(base, { pattern: "(" }), opts)).rejects.toMatchObject({
			code: "INVALID_PATTERN",
		});
		await expect(rgPass(run, rg, req(join(base, "missing")), opts)).rejects.toMatchObject({
			code: "NOT_FOUND",
		});
		// The mark's own error is no failure and never shown.
		const ok = await createLocalSearch({ engine: "native", probe: DEFAULT_PROBE }).grep(req(base));
		expect(JSON.stringify(ok)).not.toContain(READY_MARK);
	});

	it.skipIf(!HAS_RG)(`names planted to look like the mark are searched like any other${RG}`, async () => {
		await tree(base);
		// The mark's path rebuilt inside the tree, early in path order, and as a file name.
		const planted = join(base, "dev", "null", "keel-rg-walk-starts");
		await mkdir(planted, { recursive: true });
		await writeFile(join(planted, "x.txt"), "needle planted\n");
		await writeFile(join(base, "dev", `${READY_MARK.replaceAll("/", "_")}: x.txt`), "needle named\n");
		const js = await createLocalSearch({ engine: "js" }).grep(req(base, { limit: 30 }));
		expect(hits(js)).toContain(`${planted}/x.txt:1`);
		const plans = [DEFAULT_PROBE, { firstMs: 1e9, readyMs: 1e9, quietMs: 1e9 }, false as const];
		for (const probe of plans) {
			for (const limit of [3, 30]) {
				const r = await createLocalSearch({ engine: "native", probe }).grep(req(base, { limit }));
				expect(hits(r), JSON.stringify(probe)).toEqual(hits(js).slice(0, limit));
				expect(rgProcessesUnder(base)).toEqual([]);
			}
		}
	});
});
