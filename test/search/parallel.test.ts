/**
 * grep's rg engine runs rg in parallel first and in path order only when the limit is passed
 * (src/backend/search/rg-plan.ts; plans.test.ts runs every plan). These tests attack what that
 * could break: the first N must be the same on every run whatever order rg's threads print in, a
 * file changing between the two runs must give the second run's consistent answer, and links
 * planted while grep runs stay outside.
 */
import { mkdir, mkdtemp, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DirPins } from "../../src/backend/local/pin.js";
import { createLocalSearch } from "../../src/backend/search/index.js";
import { localRunner } from "../../src/backend/search/local-runner.js";
import { type ArgvRunner, createNativeSearch } from "../../src/backend/search/native.js";
import { fakeTools, HAS_RG, hits, matchLine, RG, realTools, req } from "./rg-script.js";

describe("the parallel pass, over a scripted transport", () => {
	it("files printed in any order come back in path order", async () => {
		const order = ["/r/z", "/r/a/b", "/r/a.txt", "/r/B", "/r/a/a", "/r/é"];
		const runs: string[][] = [];
		const runner: ArgvRunner = async (argv, opts) => {
			runs.push([...argv]);
			for (const p of order) opts.onStdout(matchLine(p, 1, "needle"));
			return { exitCode: 0 };
		};
		const r = await createNativeSearch(runner, fakeTools).grep(req("/r"));
		// "/" sorts below every other character: a/ before a.txt; uppercase before lowercase.
		expect(hits(r)).toEqual(["/r/B:1", "/r/a/a:1", "/r/a/b:1", "/r/a.txt:1", "/r/z:1", "/r/é:1"]);
		expect(r.limitReached).toBe(false);
		// Under the limit, one run without --sort did it all.
		expect(runs.length).toBe(1);
		expect(runs[0]).not.toContain("--sort");
	});

	it("past the limit, the answer is the path-ordered run's, not the parallel run's", async () => {
		const runner: ArgvRunner = async (argv, opts) => {
			const sorted = argv.includes("--sort");
			// The parallel run prints late files first; the sorted run prints in path order.
			const names = sorted ? ["a", "b", "c", "d", "e"] : ["e", "d", "c", "b", "a"];
			for (const n of names) {
				if (opts.signal?.aborted) break;
				opts.onStdout(matchLine(`/r/${n}`, 1, "needle"));
			}
			return { exitCode: opts.signal?.aborted ? null : 0 };
		};
		const r = await createNativeSearch(runner, fakeTools).grep(req("/r", { limit: 2 }));
		expect(hits(r)).toEqual(["/r/a:1", "/r/b:1"]);
		expect(r.limitReached).toBe(true);
	});

	it("the budget firing in the parallel run answers what it found, sorted, marked timedOut", async () => {
		const budget = new AbortController();
		const runs: boolean[] = [];
		const runner: ArgvRunner = (argv, opts) =>
			new Promise((resolve) => {
				runs.push(argv.includes("--sort"));
				opts.onStdout(matchLine("/r/y", 1, "needle"));
				opts.onStdout(matchLine("/r/x", 1, "needle"));
				opts.onStdout(matchLine("/r/w", 1, "needle"));
				opts.signal?.addEventListener("abort", () => resolve({ exitCode: null }));
				budget.abort();
			});
		const r = await createNativeSearch(runner, fakeTools).grep(req("/r", { stop: budget.signal }));
		// /r/w was still open (its file not known complete) when the budget fired.
		expect(hits(r)).toEqual(["/r/x:1", "/r/y:1"]);
		expect(r.timedOut).toBe(true);
		expect(runs).toEqual([false]);
	});
});

describe("the parallel pass, with real rg on real trees", () => {
	let base = "";
	beforeEach(async () => {
		base = await realpath(await mkdtemp(join(tmpdir(), "keel-rg-parallel-")));
	});
	afterEach(async () => {
		await rm(base, { recursive: true, force: true });
	});

	/** `dirs` × `files` files, each with `hits` needle lines (more in some, to vary thread timing). */
	async function tree(dir: string, dirs: number, files: number): Promise<void> {
		for (let d = 0; d < dirs; d++) {
			await mkdir(join(dir, `d${d}`), { recursive: true });
			for (let f = 0; f < files; f++) {
				const count = 1 + ((d * files + f) % 3);
				const body = Array.from({ length: count }, (_, i) => `needle ${d}/${f}/${i}`).join("\nfiller\n");
				await writeFile(join(dir, `d${d}`, `f${f}.txt`), `${"x\n".repeat((d * 7 + f) % 50)}${body}\n`);
			}
		}
	}

	it.skipIf(!HAS_RG)(`the same first N on every run, equal to the JS engine's${RG}`, async () => {
		await tree(base, 12, 40);
		const native = createLocalSearch({ engine: "native" });
		const js = createLocalSearch({ engine: "js" });
		for (const limit of [1, 37, 500, 5000]) {
			const expected = await js.grep(req(base, { limit }));
			for (let i = 0; i < 8; i++) {
				const r = await native.grep(req(base, { limit }));
				expect(hits(r)).toEqual(hits(expected));
				expect(r.limitReached).toBe(expected.limitReached);
			}
		}
		// With context, windows and order match too.
		const expected = await js.grep(req(base, { limit: 60, context: 1 }));
		for (let i = 0; i < 4; i++)
			expect(await native.grep(req(base, { limit: 60, context: 1 }))).toEqual({
				...expected,
				engine: "rg",
			});
	});

	it.skipIf(!HAS_RG)(
		`from a pinned directory (rg runs inside it): globs and names as the JS engine's${RG}`,
		async () => {
			await tree(join(base, "sub dir [x]"), 3, 4);
			await writeFile(join(base, "sub dir [x]", ".gitignore"), "f3.txt\n");
			const pins = new DirPins();
			pins.pin([base]);
			try {
				const pinned = createLocalSearch({ engine: "native", pins });
				const js = createLocalSearch({ engine: "js" });
				const dir = join(base, "sub dir [x]");
				for (const glob of [undefined, "*.txt", "/d0/*.txt", "d1/**", "!d0/**", "**/f1.txt", "/f0.txt"]) {
					for (const limit of [2, 1000]) {
						const expected = await js.grep(req(dir, { glob, limit, context: 1 }));
						const actual = await pinned.grep(req(dir, { glob, limit, context: 1 }));
						expect({ ...actual, engine: "js" }, `glob ${glob} limit ${limit}`).toEqual(expected);
					}
				}
				// A file is searched through a handle on the file itself.
				const file = join(dir, "d2", "f2.txt");
				expect({ ...(await pinned.grep(req(file))), engine: "js" }).toEqual(await js.grep(req(file)));
				await expect(pinned.grep(req(dir, { pattern: "(" }))).rejects.toMatchObject({
					code: "INVALID_PATTERN",
				});
			} finally {
				pins.close();
			}
		},
	);

	it.skipIf(!HAS_RG)(
		`a file changing between the two runs: the second run's answer, whole${RG}`,
		async () => {
			await tree(base, 2, 10);
			const first = join(base, "d0", "f0.txt");
			let runs = 0;
			const racing: ArgvRunner = async (argv, opts) => {
				// Between the parallel run (which passed the limit) and the ordered run's start, the
				// first file loses its needles and a file late in path order gains many: neither may
				// show stale or mixed lines. (The ordered run starts while the first is being killed,
				// so the change is made before it starts, not after the first ends.)
				if (++runs === 2) {
					await writeFile(first, "no match here\n");
					await writeFile(join(base, "d1", "f9.txt"), "needle late\n".repeat(50));
				}
				return localRunner(argv, opts);
			};
			const ops = createNativeSearch(racing, realTools);
			const r = await ops.grep(req(base, { limit: 5 }));
			expect(runs).toBe(2);
			const js = await createLocalSearch({ engine: "js" }).grep(req(base, { limit: 5 }));
			expect(hits(r)).toEqual(hits(js));
			expect(hits(r).some((h) => h.startsWith(`${first}:`))).toBe(false);
			expect(r.limitReached).toBe(true);
		},
	);

	it.skipIf(!HAS_RG)(`links planted while grep runs stay outside${RG}`, async () => {
		const searched = join(base, "root", "sub");
		const outside = join(base, "outside");
		await tree(searched, 2, 5);
		await mkdir(outside);
		for (let i = 0; i < 20; i++) await writeFile(join(outside, `s${i}.txt`), "needle SECRET\n");
		const pins = new DirPins();
		pins.pin([join(base, "root")]);
		let runs = 0;
		let swapBefore = 0;
		const planting: ArgvRunner = async (argv, opts) => {
			runs++;
			// Before each run: a link to the outside inside the tree and a new file; before run
			// `swapBefore`, the searched directory itself is swapped for a link to the outside
			// (the pinned handle still names the original).
			await symlink(outside, join(searched, `evil${runs}`));
			await writeFile(join(searched, "d0", `late${runs}.txt`), "needle late\n");
			if (runs === swapBefore) {
				await rename(searched, `${searched}-moved`);
				await symlink(outside, searched);
			}
			return localRunner(argv, opts);
		};
		const tools = { run: planting, detect: async () => realTools };
		try {
			// The two-run plan alone, no lookahead: the swap lands between its runs (plans.test.ts
			// plants links for every plan).
			const ops = createLocalSearch({ engine: "native", pins, tools, lookahead: false });
			// limit 3: the parallel run passes it, the swap comes between it and the sorted run;
			// limit 1000: one parallel run, the swap just before it.
			for (const [limit, swapAt] of [
				[3, 2],
				[1000, 3],
			]) {
				swapBefore = swapAt;
				const r = await ops.grep(req(searched, { limit }));
				expect(runs).toBe(swapAt);
				// 19 needles in the tree plus one late file per run so far; nothing from the outside.
				expect(r.matches.length).toBe(Math.min(limit, 19 + runs));
				expect(r.limitReached).toBe(limit === 3);
				expect(JSON.stringify(r)).not.toContain("SECRET");
				for (const m of r.matches) expect(m.path.startsWith(`${searched}/d`)).toBe(true);
				await rm(searched);
				await rename(`${searched}-moved`, searched);
			}
		} finally {
			pins.close();
		}
	});
});
