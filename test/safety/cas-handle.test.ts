/**
 * The compare-and-swap checks the target through one handle: opened without following
 * links, identity and bytes checked through it, then the rename. Another writer strikes between
 * the plan and the commit (the backend's beforeCommit point, after the temp file is durable), on a
 * small file (checked synchronously) and on one above 64 KiB (hashed asynchronously, then checked
 * again by handle and by name): its bytes must never be lost, and nothing may be written through
 * a link planted in the target's place.
 */
import { lstat, readdir, readFile, rename, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

// Each test opens its session itself, on a backend with the trap.
const ws = useWorkspace({ prefix: "keel-cas-", session: false });

/** A session whose backend runs `strike` once, right before the commit of `name`. */
async function trapped(name: string, strike: (path: string) => Promise<void>): Promise<Session> {
	let fired = false;
	const target = ws().path(name);
	const backend = createLocalBackend({
		hooks: {
			beforeCommit: async (t) => {
				if (fired || t !== target) return;
				fired = true;
				await strike(t);
			},
		},
	});
	return ws().open({ backend });
}

const sizes: Array<[string, number]> = [
	["small (2 KB)", 40],
	["large (200 KB, above the synchronous limit)", 4000],
];

function body(lines: number): string {
	return Array.from({ length: lines }, (_, i) =>
		i === 5 ? "ANCHOR = 1" : `line ${i} lorem ipsum dolor sit`,
	).join("\n");
}

describe.each(sizes)("compare-and-swap by handle, %s file", (_label, lines) => {
	it("an in-place write of the same size with the mtime put back is kept; the edit lands on top", async () => {
		const path = ws().path("f.txt");
		const original = `${body(lines)}\n`;
		await writeFile(path, original);
		const theirs = original.replace("line 9 lorem", "LINE 9 LOREM");
		const s = await trapped("f.txt", async (p) => {
			const before = await stat(p);
			await writeFile(p, theirs); // same inode, same size
			await utimes(p, before.atime, before.mtime);
		});
		const r = await s.call("edit", {
			path: "f.txt",
			edits: [{ oldText: "ANCHOR = 1", newText: "ANCHOR = 2" }],
		});
		expect(r.ok).toBe(true);
		expect(await readFile(path, "utf8")).toBe(theirs.replace("ANCHOR = 1", "ANCHOR = 2"));
	});

	it("a replacement that removes the anchor is kept byte for byte and the edit fails", async () => {
		const path = ws().path("f.txt");
		await writeFile(path, `${body(lines)}\n`);
		const theirs = `${body(lines).replace("ANCHOR = 1", "gone")}\n`;
		const s = await trapped("f.txt", async (p) => {
			await writeFile(`${p}.new`, theirs);
			await rename(`${p}.new`, p);
		});
		const r = await s.call("edit", {
			path: "f.txt",
			edits: [{ oldText: "ANCHOR = 1", newText: "ANCHOR = 2" }],
		});
		expect(r.ok).toBe(false);
		expect(await readFile(path, "utf8")).toBe(theirs);
		const left = (await readdir(ws().root)).filter((n) => n.startsWith(".keel-tmp-"));
		expect(left).toEqual([]);
	});

	it("a link planted in the target's place is not written through", async () => {
		const path = ws().path("f.txt");
		const outside = ws().outside("outside.txt");
		const original = `${body(lines)}\n`;
		await writeFile(path, original);
		await writeFile(outside, original);
		const s = await trapped("f.txt", async (p) => {
			await rename(p, `${p}.moved`);
			await symlink(outside, p);
		});
		const r = await s.call("edit", {
			path: "f.txt",
			edits: [{ oldText: "ANCHOR = 1", newText: "ANCHOR = 2" }],
		});
		expect(r.ok).toBe(false);
		expect(await readFile(outside, "utf8")).toBe(original);
		expect((await lstat(path)).isSymbolicLink()).toBe(true);
	});
});
