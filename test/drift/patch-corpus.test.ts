/**
 * The drift corpus's patch-shaped cases (corpus.mjs PATCH_CASES) through keel's apply_patch: real
 * temp files, the expected file byte for byte and the rung each hunk matched on, or the refusal
 * with the file untouched.
 */
import { readFile, writeFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";
import { PATCH_CASES } from "./corpus.mjs";

let session: Session;

const ws = useWorkspace({ prefix: "keel-drift-patch-", shared: true, session: { profile: "unified" } });
beforeAll(async () => {
	session = ws().session;
});

describe("drift corpus: patch-shaped cases", () => {
	it("has the cases", () => {
		expect(PATCH_CASES.length).toBeGreaterThanOrEqual(15);
	});

	it.each(PATCH_CASES.map((c, i) => [c.name, i] as const))("%s", async (_, i) => {
		const c = PATCH_CASES[i];
		const name = `patch-case-${i}.txt`;
		const before = Buffer.from(c.file, "utf8");
		await writeFile(ws().path(name), before);
		const r = await session.call("apply_patch", { input: c.patch.replaceAll("FILE", name) });
		const after = await readFile(ws().path(name));
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
