/**
 * Contract: the mutation-safety cases on every backend. The interleaved writer is the
 * backend's own exec, run at the point a race would hit: after the read, or after planning and
 * before the commit (a wrapper around FileOps.writeFile).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { Backend, WriteOptions } from "../../src/backend/types.js";
import { expectCode, expectOk, forEachBackend, q, tempFiles } from "./harness.js";

/** Run a shell command through the backend's exec; throws when it fails. */
async function sh(backend: Backend, cwd: string, command: string): Promise<void> {
	let out = "";
	const r = await backend.exec.run({ command, cwd, onData: (c) => (out += c.toString()) });
	if (r.exitCode !== 0) throw new Error(`${command} failed (${r.exitCode}): ${out}`);
}

/** The backend, with `before` run once just before the first writeFile matching `when`. */
function interleaved(
	backend: Backend,
	when: (path: string, opts: WriteOptions) => boolean,
	before: () => Promise<void>,
): Backend {
	let fired = false;
	return {
		...backend,
		kind: backend.kind,
		fs: {
			...backend.fs,
			async writeFile(path, data, opts = {}) {
				if (!fired && when(path, opts)) {
					fired = true;
					await before();
				}
				return backend.fs.writeFile(path, data, opts);
			},
		},
	};
}

forEachBackend((x) => {
	it("overwriting a file never read is NOT_READ; one changed since the read is STALE_READ", async () => {
		const { root } = x();
		await writeFile(join(root, "f.txt"), "original\n");
		const s = await x().open();
		expectCode(await s.call("write", { path: "f.txt", content: "mine\n" }), "NOT_READ");
		expectOk(await s.call("read", { path: "f.txt" }));
		expectOk(await s.call("bash", { command: "printf 'theirs\\n' > f.txt" }));
		expectCode(await s.call("write", { path: "f.txt", content: "mine\n" }), "STALE_READ");
		expect(await readFile(join(root, "f.txt"), "utf8")).toBe("theirs\n");
		const u = await x().open({ profile: "unified" });
		expectOk(await u.call("read", { path: "f.txt" }));
		expectOk(await u.call("bash", { command: "printf 'again\\n' > f.txt" }));
		expectCode(
			await u.call("file", {
				queries: [
					{
						type: "edit",
						path: "f.txt",
						edits: [{ matchMode: "lineRange", startLine: 1, endLine: 1, newText: "x" }],
					},
				],
			}),
			"STALE_READ",
		);
		expect(await readFile(join(root, "f.txt"), "utf8")).toBe("again\n");
	});

	it("no-clobber create: a file that appears before the commit is kept (WRITE_COLLISION)", async () => {
		const { root, made } = x();
		const backend = interleaved(
			made.backend,
			(p, o) => p.endsWith("/race.txt") && o.expect === "absent",
			() => sh(made.backend, root, "printf 'theirs\\n' > race.txt"),
		);
		const s = await x().open({ backend });
		const r = await s.call("write", { path: "race.txt", content: "mine\n" });
		expectCode(r, "WRITE_COLLISION");
		expect(await readFile(join(root, "race.txt"), "utf8")).toBe("theirs\n");
		expect(await tempFiles(root)).toEqual([]);
	});

	it("compare-and-swap: a change between planning and commit is kept; an anchored edit re-plans, an overwrite is refused", async () => {
		const { root, made } = x();
		await writeFile(join(root, "cas.txt"), "alpha\nbeta\n");
		const change = (text: string) => () =>
			// Same size, in place (same inode): only the bytes and times tell.
			sh(made.backend, root, `printf %s ${q(text)} | dd of=cas.txt conv=notrunc status=none`);
		const edit = interleaved(
			made.backend,
			(p, o) => p.endsWith("/cas.txt") && typeof o.expect === "object",
			change("ALPHA"),
		);
		const s = await x().open({ backend: edit });
		// The other writer changed another line: the edit's anchor still matches, so it re-plans.
		const r = await s.call("edit", { path: "cas.txt", edits: [{ oldText: "beta", newText: "gamma" }] });
		expectOk(r);
		expect(JSON.stringify(r)).toContain("re-planned 1 time(s)");
		expect(await readFile(join(root, "cas.txt"), "utf8")).toBe("ALPHA\ngamma\n");

		// The other writer changed the anchor itself: a real conflict, its bytes kept.
		await writeFile(join(root, "cas.txt"), "alpha\nbeta\n");
		const conflicting = interleaved(
			made.backend,
			(p, o) => p.endsWith("/cas.txt") && typeof o.expect === "object",
			change("alpha\nBETA"),
		);
		const s1 = await x().open({ backend: conflicting });
		const c = await s1.call("edit", { path: "cas.txt", edits: [{ oldText: "beta", newText: "gamma" }] });
		expectCode(c, "NO_MATCH");
		expect(JSON.stringify(c)).toContain("changed by another writer");
		expect(await readFile(join(root, "cas.txt"), "utf8")).toBe("alpha\nBETA\n");

		await writeFile(join(root, "cas.txt"), "alpha\nbeta\n");
		const write = interleaved(
			made.backend,
			(p, o) => p.endsWith("/cas.txt") && typeof o.expect === "object",
			change("alpha"),
		);
		const s2 = await x().open({ backend: write });
		expectOk(await s2.call("read", { path: "cas.txt" }));
		expectCode(await s2.call("write", { path: "cas.txt", content: "mine\n" }), "CHANGED_ON_DISK");
		expect(await readFile(join(root, "cas.txt"), "utf8")).toBe("alpha\nbeta\n");
		expect(await tempFiles(root)).toEqual([]);
	});

	it("a create into missing directories that collides removes the directories it made", async () => {
		const { root, made } = x();
		const s = await x().open();
		const st = await made.backend.fs.writeFile(join(root, "x/y/z.txt"), Buffer.from("1\n"), {
			expect: "absent",
			mkdirs: true,
		});
		expect(st.type).toBe("file");
		await expect(
			made.backend.fs.writeFile(join(root, "x/y/z.txt"), Buffer.from("2\n"), {
				expect: "absent",
				mkdirs: true,
			}),
		).rejects.toMatchObject({ code: "WRITE_COLLISION" });
		expect(await readFile(join(root, "x/y/z.txt"), "utf8")).toBe("1\n");
		expectOk(await s.call("read", { path: "x/y/z.txt" }));
		expect(await tempFiles(root)).toEqual([]);
	});

	it("delete of a file changed since preflight is refused", async () => {
		const { root, made } = x();
		await writeFile(join(root, "d.txt"), "v1\n");
		const st = await made.backend.fs.lstat(join(root, "d.txt"));
		await sh(made.backend, root, "printf 'v2 longer\\n' > d.txt");
		await expect(made.backend.fs.unlink(join(root, "d.txt"), st)).rejects.toMatchObject({
			code: "CHANGED_ON_DISK",
		});
		expect(await readFile(join(root, "d.txt"), "utf8")).toBe("v2 longer\n");
		await made.backend.fs.unlink(join(root, "d.txt"), await made.backend.fs.lstat(join(root, "d.txt")));
		await expect(readFile(join(root, "d.txt"))).rejects.toThrow();
	});
});
