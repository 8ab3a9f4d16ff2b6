/**
 * A 2 GiB file is never read into memory: read streams it through two fixed 1 MiB chunk buffers
 * (src/backend/read-window.ts, chunk-arena.ts). A child process (a private build of keel) reads
 * a sparse 2 GiB file (10,000 text lines, then a hole) with limit 3 and reports its peak resident
 * set before and after; the parent asserts the answer and that the peak grew by less than 64 MiB.
 */
import { writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildKeel, runNode } from "../durability/build-keel.js";

const SIZE = 2 * 1024 * 1024 * 1024;
const MAX_GROWTH_KB = 64 * 1024;

const CHILD_SOURCE = `
const [bundle, root] = process.argv.slice(2);
const { createSession } = await import(bundle);
const s = await createSession({ root });
// Warm up every module and the chunk arena on a small large file (above the 256 KiB window line).
await s.call("read", { path: "warm.txt" });
const before = process.resourceUsage().maxRSS;
const r = await s.call("read", { path: "huge.txt", limit: 3 });
const after = process.resourceUsage().maxRSS;
await s.close();
process.stdout.write(JSON.stringify({ r, before, after }) + "\\n");
`;

let work = "";
let root = "";
let script = "";
let bundle = "";

beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), "keel-read-memory-"));
	root = join(work, "root");
	await mkdir(root);
	bundle = await buildKeel(work);
	script = join(work, "child.mjs");
	writeFileSync(script, CHILD_SOURCE);
	writeFileSync(join(root, "warm.txt"), "w\n".repeat(200_000));
	const huge = join(root, "huge.txt");
	writeFileSync(huge, Array.from({ length: 10_000 }, (_, i) => `l${i + 1}\n`).join(""));
	await truncate(huge, SIZE);
}, 120_000);

afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

describe("read of a 2 GiB file", () => {
	it("shows the lines asked for and counts the whole file with its peak memory up by under 64 MiB", async () => {
		const { code, stdout, stderr } = await runNode([script, bundle, root]);
		expect(code, stderr).toBe(0);
		const { r, before, after } = JSON.parse(stdout) as {
			r: { ok: boolean; content?: { text: string }[] };
			before: number;
			after: number;
		};
		expect(r.ok).toBe(true);
		// 10,000 lines and the hole as one more (it has no "\\n").
		expect(r.content?.[0].text).toBe("l1\nl2\nl3\n\n[9998 more lines in file. Use offset=4 to continue.]");
		expect(after - before, `peak RSS ${before} KB -> ${after} KB`).toBeLessThan(MAX_GROWTH_KB);
	}, 300_000);
});
