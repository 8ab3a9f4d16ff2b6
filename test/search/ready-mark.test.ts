/**
 * rg's ready mark (src/backend/search/rg.ts READY_MARK): the word that its start-up is over and
 * its walk begins, on which the lookahead stops reading beside it (rg-parallel.ts). The mark never
 * changes the answer or the status, is never shown, and names planted to look like it are searched
 * like any other: checked against the JS engine, with and without the lookahead, and with failing
 * runs.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalSearch } from "../../src/backend/search/index.js";
import { createLocalTools } from "../../src/backend/search/local-runner.js";
import type { ArgvRunner } from "../../src/backend/search/native.js";
import { READY_MARK, rgPass } from "../../src/backend/search/rg.js";
import { rgProcessesUnder } from "./rg-processes.js";
import { HAS_RG, hits, RG, realTools, req } from "./rg-script.js";

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
			const run = createLocalTools().run;
			const watched: ArgvRunner = (argv, opts) =>
				run(argv, {
					...opts,
					onStdout: (c) => {
						events.push("out");
						opts.onStdout(c);
					},
				});
			const marked = await rgPass(watched, rg, req(base), {
				order: "path",
				onReady: () => events.push("ready"),
			});
			const plain = await rgPass(createLocalTools().run, rg, req(base), { order: "path" });
			expect(events[0]).toBe("ready");
			expect(events).toContain("out");
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
		const ok = await createLocalSearch({ engine: "native" }).grep(req(base));
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
		for (const lookahead of [true, false]) {
			for (const limit of [3, 30]) {
				const r = await createLocalSearch({ engine: "native", lookahead }).grep(req(base, { limit }));
				expect(hits(r), `lookahead ${lookahead}`).toEqual(hits(js).slice(0, limit));
				expect(rgProcessesUnder(base)).toEqual([]);
			}
		}
	});
});
