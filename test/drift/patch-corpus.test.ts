/**
 * The drift corpus's patch-shaped cases (corpus.mjs PATCH_CASES) through keel's apply_patch: real
 * temp files, the expected file byte for byte and the rung each hunk matched on, or the refusal
 * with the file untouched.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import { PATCH_CASES } from "./corpus.mjs";

let base: string;
let dir: string;
let session: Session;

beforeAll(async () => {
	base = await mkdtemp(join(tmpdir(), "keel-drift-patch-"));
	dir = join(base, "ws");
	await mkdir(dir);
	// keel's state beside the root, not in it (there keel would move it and say so).
	session = await Session.create({ root: dir, profile: "unified", stateDir: join(base, "state") });
});
afterAll(async () => {
	await session?.close();
	if (base) await rm(base, { recursive: true, force: true });
});

describe("drift corpus: patch-shaped cases", () => {
	it("has the cases", () => {
		expect(PATCH_CASES.length).toBeGreaterThanOrEqual(15);
	});

	it.each(PATCH_CASES.map((c, i) => [c.name, i] as const))("%s", async (_, i) => {
		const c = PATCH_CASES[i];
		const name = `patch-case-${i}.txt`;
		const before = Buffer.from(c.file, "utf8");
		await writeFile(join(dir, name), before);
		const r = await session.call("apply_patch", { input: c.patch.replaceAll("FILE", name) });
		const after = await readFile(join(dir, name));
		if ("refuse" in c.expect) {
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.error.code).toBe(c.expect.refuse);
			expect(after.equals(before)).toBe(true);
			return;
		}
		expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
		expect(after.toString("utf8")).toBe(c.expect.file);
		const files = (r as { details?: { files: Array<{ matched?: string[] }> } }).details!.files;
		expect(files[0].matched).toEqual(c.expect.rungs);
	});
});
