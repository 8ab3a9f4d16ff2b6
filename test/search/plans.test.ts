/**
 * grep's plans on rg (src/backend/search/rg-plan.ts), with the lookahead (this machine's default)
 * and without it. The plan decides how fast the answer comes, never what it is: every plan must
 * give the first N in path order. Attacked with matches all late in path order, files appearing
 * and vanishing while rg runs, links to the outside, a pattern with a line break, and aborts.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DirPins } from "../../src/backend/local/pin.js";
import { createLocalSearch, type LocalSearchOptions } from "../../src/backend/search/index.js";
import { createLookahead } from "../../src/backend/search/lookahead.js";
import { loadRe2 } from "../../src/backend/search/patterns.js";
import { comparePaths } from "../../src/backend/search/semantics.js";
import { rgProcessesUnder } from "./rg-processes.js";
import { HAS_RG, hits, RG, req } from "./rg-script.js";

/** Every plan: with the lookahead (the default here) and without it. */
const PLANS: [string, Pick<LocalSearchOptions, "lookahead">][] = [
	["the lookahead", { lookahead: createLookahead(loadRe2()) }],
	["no lookahead", { lookahead: false }],
];

describe("every plan, with real rg on real trees", () => {
	let base = "";
	beforeEach(async () => {
		base = await realpath(await mkdtemp(join(tmpdir(), "keel-rg-plans-")));
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
				// The run not answering (the parallel one past the limit) is gone too.
				expect(rgProcessesUnder(base), name).toEqual([]);
			}
		}
	});

	it.skipIf(!HAS_RG)(`a pattern with a line break means the same under every plan${RG}`, async () => {
		// Every run is given the pattern on its command line: a "\r" or "\n" in it means the same to
		// the parallel run as to the ordered run.
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
