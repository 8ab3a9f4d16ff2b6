/**
 * A directory deep in the searched tree swapped for a link to the outside while the JS walk runs
 * (find's engine where fd lacks --no-require-git, grep's where rg is missing). The walk lists each
 * directory through a descriptor opened by name below its parent's descriptor with O_NOFOLLOW
 * (walk.ts), so the link is refused at the open: no name from the outside may ever be reported.
 * Files are opened below their directory's descriptor too, so a grep cannot read the outside file
 * of the same name either. The swapper is a separate python3 process racing the walk: it moves the real directory aside,
 * puts a link to the outside in its place, and moves it back, as fast as it can.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalSearch } from "../../src/backend/search/index.js";
import { DIR_LINK_SWAPPER, makeSwapTrees, swapsDone } from "../fixtures/dir-link-swapper.js";
import { NO_PYTHON, PYTHON } from "../python/helpers.js";

const SECRET_NAME = "outside-secret-name";
const RUNS = 400;

let work = "";
let tree = "";
let outside = "";
let inner = "";

beforeAll(async () => {
	work = await realpath(await mkdtemp(join(tmpdir(), "keel-walk-swap-")));
	tree = join(work, "tree");
	outside = join(work, "outside");
	inner = makeSwapTrees({
		tree,
		outside,
		secretName: SECRET_NAME,
		insideText: "x\n",
		outsideText: "secret\n",
	});
});

afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

function startSwapper(stop: string): { proc: ChildProcess; swaps: Promise<number> } {
	const proc = spawn(PYTHON!, ["-c", DIR_LINK_SWAPPER, inner, outside, stop], {
		stdio: ["ignore", "pipe", "inherit"],
	});
	let out = "";
	proc.stdout!.on("data", (c) => {
		out += c;
	});
	return { proc, swaps: new Promise((resolve) => proc.on("close", () => resolve(swapsDone(out)))) };
}

describe.skipIf(NO_PYTHON)("the JS walk against a directory swapped for a link mid-walk", () => {
	it(`${RUNS} finds and greps report nothing from the outside`, async () => {
		const js = createLocalSearch({ engine: "js" });
		const stop = join(work, "stop");
		const swapper = startSwapper(stop);
		const leaks: string[] = [];
		let sawInner = 0;
		try {
			for (let i = 0; i < RUNS; i++) {
				const found = await js.find({ pattern: "", path: tree, limit: 10_000 });
				for (const p of found.paths) if (p.includes(SECRET_NAME)) leaks.push(`find #${i}: ${p}`);
				if (found.paths.includes("a/s15/inner/sub/own.txt")) sawInner++;
				const grep = await js.grep({ pattern: "secret", path: tree, context: 0, limit: 100 });
				for (const m of grep.matches) leaks.push(`grep #${i}: ${m.path}`);
			}
		} finally {
			writeFileSync(stop, "");
		}
		const swaps = await swapper.swaps;
		expect(leaks).toEqual([]);
		// The race really ran, and the walk still found the real directory's content at times.
		expect(swaps).toBeGreaterThan(RUNS);
		expect(sawInner).toBeGreaterThan(0);
	}, 120_000);
});
