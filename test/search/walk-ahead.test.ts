/**
 * The JS walk lists up to LIST_AHEAD directories of a level ahead of where it is (walk.ts). Its
 * order must stay the sorted depth-first one whatever order the listings complete in, a limit must
 * still cut at the same place, and listings left in flight when the walk stops must not fail the
 * call or leak. The reference order is computed here: every path, sorted as paths sort.
 */
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalSearch } from "../../src/backend/search/index.js";
import { comparePaths } from "../../src/backend/search/semantics.js";

const js = createLocalSearch({ engine: "js" });
const WIDTH = 13; // more than LIST_AHEAD directories at every level
let root = "";

/** Every entry below `dir`, relative, directories with a trailing "/". */
function everything(dir: string, rel = ""): string[] {
	const out: string[] = [];
	for (const d of readdirSync(join(dir, rel), { withFileTypes: true })) {
		const r = rel ? `${rel}/${d.name}` : d.name;
		out.push(d.isDirectory() ? `${r}/` : r);
		if (d.isDirectory()) out.push(...everything(dir, r));
	}
	return out;
}

const sorted = (paths: string[]) =>
	[...paths].sort((a, b) => comparePaths(a.replace(/\/$/, ""), b.replace(/\/$/, "")));

beforeAll(async () => {
	root = await realpath(await mkdtemp(join(tmpdir(), "keel-walk-ahead-")));
	// Names whose listing order differs from sorted order, at three levels; leaves of uneven size so
	// the listings ahead complete out of order.
	for (let a = WIDTH - 1; a >= 0; a--) {
		for (let b = 0; b < WIDTH; b++) {
			const dir = join(root, `a${(a * 7) % WIDTH}`, `b-${b}`, "c");
			mkdirSync(dir, { recursive: true });
			for (let f = 0; f < ((a + b) % 5) * 3; f++) writeFileSync(join(dir, `f${f}.txt`), "x\n");
		}
	}
});

afterAll(async () => {
	if (root) await rm(root, { recursive: true, force: true });
});

describe("the JS walk with listings ahead", () => {
	it("finds everything in sorted depth-first order", async () => {
		const r = await js.find({ pattern: "", path: root, limit: 100_000 });
		expect(r.limitReached).toBe(false);
		expect(r.paths).toEqual(sorted(everything(root)));
	});

	it("a limit cuts the same first N on every run, listings left in flight", async () => {
		const all = sorted(everything(root));
		for (const limit of [1, 5, 40, 300]) {
			for (let run = 0; run < 5; run++) {
				const r = await js.find({ pattern: "", path: root, limit });
				expect(r.paths).toEqual(all.slice(0, limit));
				expect(r.limitReached).toBe(true);
			}
		}
	});

	it("grep in the JS engine reads files in the same order and stops at the limit", async () => {
		const files = sorted(everything(root)).filter((p) => !p.endsWith("/"));
		const r = await js.grep({ pattern: "x", path: root, context: 0, limit: 25 });
		expect(r.matches.map((m) => m.path)).toEqual(files.slice(0, 25).map((p) => join(root, p)));
	});

	it("a directory removed, or one made unreadable, is skipped and the rest kept", async () => {
		const gone = join(root, "a3", "b-4");
		const locked = join(root, "a5", "b-2", "c");
		const before = sorted(everything(root));
		rmSync(gone, { recursive: true, force: true });
		chmodSync(locked, 0);
		try {
			const r = await js.find({ pattern: "", path: root, limit: 100_000 });
			const expected = before.filter((p) => !p.startsWith("a3/b-4/") && !p.startsWith("a5/b-2/c/"));
			// As root the locked directory is still listed (root bypasses the mode): both are right.
			const lockedSeen = process.getuid?.() === 0;
			expect(r.paths).toEqual(lockedSeen ? before.filter((p) => !p.startsWith("a3/b-4/")) : expected);
		} finally {
			chmodSync(locked, 0o755);
		}
	});
});
