/** The unified `file` tool and the mutation-safety policy. Real files, real processes. */
import { execFileSync } from "node:child_process";
import {
	chmod,
	lstat,
	mkdir,
	readdir,
	readFile,
	readlink,
	rm,
	stat,
	symlink,
	utimes,
	writeFile,
} from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { CallResult, Session } from "../../src/session.js";
import type { SessionOptions } from "../../src/session-types.js";
import { useWorkspace } from "../fixtures/workspace.js";

// Each test opens its sessions itself, unified unless it says otherwise.
const ws = useWorkspace({ prefix: "keel-file-", session: false });

function open(opts: Omit<SessionOptions, "root"> = {}): Promise<Session> {
	return ws().open({ profile: "unified", ...opts });
}

function fail(r: CallResult) {
	if (r.ok) throw new Error(`expected failure, got ${JSON.stringify(r.content)}`);
	return r.error;
}

function ok(r: CallResult) {
	if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.error)}`);
	return r as Extract<CallResult, { ok: true }> & { details: { results: Array<Record<string, any>> } };
}

const p = (name: string) => ws().path(name);

describe("file tool: how many places an edit replaced", () => {
	it("a replaceAll edit reports every place it replaced, in the summary and the details", async () => {
		await writeFile(p("f.txt"), "apple\nbanana\napple\norange\napple\n");
		const s = await open();
		const r = ok(
			await s.call("file", {
				queries: [
					{
						type: "edit",
						path: "f.txt",
						edits: [
							{ oldText: "apple", newText: "pear", replaceAll: true },
							{ oldText: "banana", newText: "kiwi" },
						],
					},
				],
			}),
		);
		expect(r.details.results[0].replacements).toBe(4);
		expect(r.content[0]).toMatchObject({
			type: "text",
			text: expect.stringMatching(/^edited f\.txt: 4 replacement\(s\)/),
		});
		expect(await readFile(p("f.txt"), "utf8")).toBe("pear\nkiwi\npear\norange\npear\n");
	});
});

describe("file tool: shape and preflight", () => {
	it("unified profile has read, file, apply_patch, bash, process, grep, find, ls, python and no write/edit", async () => {
		const s = await open();
		expect(s.tools.map((t) => t.name)).toEqual([
			"read",
			"file",
			"apply_patch",
			"bash",
			"process",
			"grep",
			"find",
			"ls",
			"python",
			"python_jobs",
		]);
	});

	it("writes, edits and deletes in one call, reporting each", async () => {
		await writeFile(p("b.txt"), "one\ntwo\n");
		await writeFile(p("c.txt"), "gone");
		const s = await open();
		const r = ok(
			await s.call("file", {
				queries: [
					{ type: "write", path: "new/a.txt", content: "hello\n" },
					{ type: "edit", path: "b.txt", edits: [{ oldText: "two", newText: "TWO" }] },
					{ type: "delete", path: "c.txt" },
				],
			}),
		);
		expect(await readFile(p("new/a.txt"), "utf8")).toBe("hello\n");
		expect(await readFile(p("b.txt"), "utf8")).toBe("one\nTWO\n");
		await expect(stat(p("c.txt"))).rejects.toThrow();
		const [w, e, d] = r.details.results;
		expect(w.contentRef).toMatch(/^cr_/);
		expect(e.diff).toContain("+2 TWO");
		expect(e.patch).toContain("@@");
		expect(d.ok).toBe(true);
	});

	it("a batch whose third query fails preflight leaves the first two undone", async () => {
		await writeFile(p("b.txt"), "keep\n");
		const s = await open();
		const err = fail(
			await s.call("file", {
				queries: [
					{ type: "write", path: "a.txt", content: "x" },
					{ type: "edit", path: "b.txt", edits: [{ oldText: "keep", newText: "changed" }] },
					{ type: "edit", path: "b2.txt", edits: [{ oldText: "a", newText: "b" }] },
				],
			}),
		);
		expect(err.code).toBe("NOT_FOUND");
		expect(err.message).toContain("queries[2]");
		await expect(stat(p("a.txt"))).rejects.toThrow();
		expect(await readFile(p("b.txt"), "utf8")).toBe("keep\n");
	});

	it("rejects duplicate canonical paths, including through a symlink", async () => {
		await writeFile(p("t.txt"), "t");
		await symlink("t.txt", p("l.txt"));
		const s = await open();
		const err = fail(
			await s.call("file", {
				queries: [
					{ type: "edit", path: "t.txt", edits: [{ oldText: "t", newText: "u" }] },
					{ type: "edit", path: "./l.txt", edits: [{ oldText: "t", newText: "v" }] },
				],
			}),
		);
		expect(err.code).toBe("INVALID_ARGS");
		expect(await readFile(p("t.txt"), "utf8")).toBe("t");
	});

	it.each([
		[{ type: "delete", path: "a", content: "x" }],
		[{ type: "write", path: "a", edits: [{ oldText: "a", newText: "b" }] }],
		[{ type: "write", path: "a" }],
		[{ type: "write", path: "a", content: "x", contentRef: "cr_1" }],
		[{ type: "edit", path: "a", content: "x" }],
		[{ type: "edit", path: "a" }],
		[{ type: "edit", path: "a", edits: [{ newText: "b" }] }],
		[{ type: "edit", path: "a", edits: [{ oldText: "a", newText: "b", startLine: 1 }] }],
		[{ type: "edit", path: "a", edits: [{ newText: "b", matchMode: "lineRange", startLine: 1 }] }],
		[
			{
				type: "edit",
				path: "a",
				edits: [{ newText: "b", matchMode: "lineRange", startLine: 1, endLine: 1, replaceAll: true }],
			},
		],
		[{ type: "move", path: "a" }],
		[{ type: "write", path: "a", content: "x", extra: 1 }],
	])("fields that do not belong are INVALID_ARGS: %j", async (q) => {
		await writeFile(p("a"), "a");
		const s = await open();
		expect(fail(await s.call("file", { queries: [q] })).code).toBe("INVALID_ARGS");
		expect(await readFile(p("a"), "utf8")).toBe("a");
	});
});

describe("write policy and payloadRef", () => {
	it("overwrite needs a fresh read; an unread existing file keeps the payload for a retarget", async () => {
		await writeFile(p("taken.txt"), "theirs");
		const s = await open();
		const big = "payload ".repeat(10_000);
		const err = fail(await s.call("file", { queries: [{ type: "write", path: "taken.txt", content: big }] }));
		expect(err.code).toBe("NOT_READ");
		expect(err.payloadRef).toMatch(/^pl_/);
		expect(await readFile(p("taken.txt"), "utf8")).toBe("theirs");
		const r = ok(
			await s.call("file", { queries: [{ type: "write", path: "free.txt", payloadRef: err.payloadRef }] }),
		);
		expect(await readFile(p("free.txt"), "utf8")).toBe(big);
		expect(r.details.results[0].ok).toBe(true);
		// a ref is single use once it succeeded
		expect(
			fail(
				await s.call("file", { queries: [{ type: "write", path: "again.txt", payloadRef: err.payloadRef }] }),
			).code,
		).toBe("INVALID_ARGS");
	});

	it("a missing edit target keeps the edits for a retry on the right path", async () => {
		await writeFile(p("real.ts"), "let a = 1;\n");
		const s = await open();
		const err = fail(
			await s.call("file", {
				queries: [{ type: "edit", path: "rael.ts", edits: [{ oldText: "a = 1", newText: "a = 2" }] }],
			}),
		);
		expect(err.code).toBe("NOT_FOUND");
		expect(err.payloadRef).toBeDefined();
		ok(await s.call("file", { queries: [{ type: "edit", path: "real.ts", payloadRef: err.payloadRef }] }));
		expect(await readFile(p("real.ts"), "utf8")).toBe("let a = 2;\n");
	});

	it("payload refs are session-owned", async () => {
		await writeFile(p("taken.txt"), "theirs");
		const a = await open();
		const b = await open();
		const err = fail(
			await a.call("file", { queries: [{ type: "write", path: "taken.txt", content: "mine" }] }),
		);
		expect(
			fail(await b.call("file", { queries: [{ type: "write", path: "x.txt", payloadRef: err.payloadRef }] }))
				.code,
		).toBe("INVALID_ARGS");
	});

	it("two concurrent creates of one path: exactly one succeeds, the other gets WRITE_COLLISION", async () => {
		const a = await open();
		const b = await open();
		const results = await Promise.all([
			a.call("file", { queries: [{ type: "write", path: "same.txt", content: "from a" }] }),
			b.call("file", { queries: [{ type: "write", path: "same.txt", content: "from b" }] }),
		]);
		const wins = results.filter((r) => r.ok);
		expect(wins).toHaveLength(1);
		const loser = results.find((r) => !r.ok)!;
		expect(["WRITE_COLLISION", "NOT_READ"]).toContain(fail(loser).code);
		expect(["from a", "from b"]).toContain(await readFile(p("same.txt"), "utf8"));
	});

	it("contentRef copies the exact bytes without resending them", async () => {
		const s = await open();
		const body = Buffer.from("α😀\r\n".repeat(1000));
		const w = ok(
			await s.call("file", { queries: [{ type: "write", path: "src.txt", content: body.toString() }] }),
		);
		const ref = w.details.results[0].contentRef;
		ok(await s.call("file", { queries: [{ type: "write", path: "copy/one.txt", contentRef: ref }] }));
		expect(Buffer.compare(await readFile(p("copy/one.txt")), body)).toBe(0);
		// once the source changes, the ref is refused rather than copying other bytes
		await writeFile(p("src.txt"), "changed");
		expect(
			fail(await s.call("file", { queries: [{ type: "write", path: "copy/two.txt", contentRef: ref }] }))
				.code,
		).toBe("INVALID_ARGS");
		await expect(stat(p("copy/two.txt"))).rejects.toThrow();
	});
});

describe("delete", () => {
	it("removes a symlink, not its target; refuses directories", async () => {
		await writeFile(p("target.txt"), "stay");
		await symlink("target.txt", p("link.txt"));
		await mkdir(p("d"));
		const s = await open();
		ok(await s.call("file", { queries: [{ type: "delete", path: "link.txt" }] }));
		await expect(lstat(p("link.txt"))).rejects.toThrow();
		expect(await readFile(p("target.txt"), "utf8")).toBe("stay");
		expect(fail(await s.call("file", { queries: [{ type: "delete", path: "d" }] })).code).toBe(
			"IS_DIRECTORY",
		);
		expect(fail(await s.call("file", { queries: [{ type: "delete", path: "nope" }] })).code).toBe(
			"NOT_FOUND",
		);
		expect((await stat(p("d"))).isDirectory()).toBe(true);
	});

	it("a dangling link to outside the roots can be removed (the link is inside)", async () => {
		await symlink("/nonexistent/outside", p("dangling"));
		const s = await open();
		ok(await s.call("file", { queries: [{ type: "delete", path: "dangling" }] }));
		await expect(lstat(p("dangling"))).rejects.toThrow();
	});

	it("a file replaced between preflight and the queue is not deleted", async () => {
		await writeFile(p("f.txt"), "old");
		const s = await open({
			probes: {
				afterAdmission: async () => {
					await rm(p("f.txt"));
					await writeFile(p("f.txt"), "someone else's");
				},
			},
		});
		expect(fail(await s.call("file", { queries: [{ type: "delete", path: "f.txt" }] })).code).toBe(
			"CHANGED_ON_DISK",
		);
		expect(await readFile(p("f.txt"), "utf8")).toBe("someone else's");
	});
});

describe("interleavings: another writer at every boundary", () => {
	const original = "alpha\nbeta\ngamma\n";

	it("after the read: an overwrite is STALE_READ", async () => {
		await writeFile(p("f.txt"), original);
		const s = await open();
		ok(await s.call("read", { path: "f.txt" }));
		await writeFile(p("f.txt"), "other writer\n");
		expect(
			fail(await s.call("file", { queries: [{ type: "write", path: "f.txt", content: "mine" }] })).code,
		).toBe("STALE_READ");
		expect(await readFile(p("f.txt"), "utf8")).toBe("other writer\n");
	});

	it("after the read: a lineRange edit is STALE_READ, even for a same-size same-mtime replacement", async () => {
		await writeFile(p("f.txt"), original);
		const s = await open();
		ok(await s.call("read", { path: "f.txt" }));
		const before = await stat(p("f.txt"));
		await writeFile(p("f.txt"), "ALPHA\nbeta\ngamma\n"); // same size
		await utimes(p("f.txt"), before.atime, before.mtime); // same mtime
		const err = fail(
			await s.call("file", {
				queries: [
					{
						type: "edit",
						path: "f.txt",
						edits: [{ matchMode: "lineRange", startLine: 2, endLine: 2, newText: "B" }],
					},
				],
			}),
		);
		expect(err.code).toBe("STALE_READ");
		expect(await readFile(p("f.txt"), "utf8")).toBe("ALPHA\nbeta\ngamma\n");
	});

	it("after queue admission: an anchored edit re-plans on the other writer's bytes, which survive", async () => {
		await writeFile(p("f.txt"), original);
		const s = await open({
			probes: { afterAdmission: () => writeFile(p("f.txt"), "alpha\nbeta\ngamma\nother\n") },
		});
		const r = ok(
			await s.call("file", {
				queries: [{ type: "edit", path: "f.txt", edits: [{ oldText: "beta", newText: "BETA" }] }],
			}),
		);
		expect(JSON.stringify(r)).toContain('"replanned":1');
		expect(await readFile(p("f.txt"), "utf8")).toBe("alpha\nBETA\ngamma\nother\n");
	});

	it("after queue admission: a lineRange edit does not re-plan (CHANGED_ON_DISK), the other writer's bytes survive", async () => {
		await writeFile(p("f.txt"), original);
		const s = await open({
			probes: { afterAdmission: () => writeFile(p("f.txt"), "alpha\nbeta\ngamma\nother\n") },
		});
		ok(await s.call("read", { path: "f.txt" }));
		const err = fail(
			await s.call("file", {
				queries: [
					{
						type: "edit",
						path: "f.txt",
						edits: [{ matchMode: "lineRange", startLine: 2, endLine: 2, newText: "B" }],
					},
				],
			}),
		);
		expect(err.code).toBe("CHANGED_ON_DISK");
		expect(await readFile(p("f.txt"), "utf8")).toBe("alpha\nbeta\ngamma\nother\n");
	});

	for (const [name, disturb, outcome] of [
		[
			"an in-place write",
			async (f: string) => writeFile(f, "alpha\nbeta\ngamma\nother\n"),
			"alpha\nBETA\ngamma\nother\n",
		],
		[
			"a same-size same-mtime in-place write",
			async (f: string) => {
				const st = await stat(f);
				await writeFile(f, "ALPHA\nbeta\ngamma\n");
				await utimes(f, st.atime, st.mtime);
			},
			"ALPHA\nBETA\ngamma\n",
		],
		[
			"a replacement by rename",
			async (f: string) => {
				await writeFile(`${f}.other`, "replaced\n");
				execFileSync("mv", [`${f}.other`, f]);
			},
			"NO_MATCH",
		],
		[
			"a symlink swap",
			async (f: string) => {
				await writeFile(`${f}.elsewhere`, "elsewhere\n");
				await rm(f);
				await symlink(`${f}.elsewhere`, f);
			},
			"CHANGED_ON_DISK",
		],
	] as const) {
		// An overwrite never re-plans; an anchored edit re-plans on the new bytes (expected: the
		// merged content) or fails on a real conflict (expected: the code).
		const anchored = (outcome as string).includes("\n") ? { content: outcome as string } : { code: outcome };
		it(`between plan and rename (${name}): write is CHANGED_ON_DISK; edit and file ${"content" in anchored ? "re-plan" : `fail with ${anchored.code}`}`, async () => {
			for (const tool of ["edit", "file", "write"] as const) {
				await rm(p("f.txt"), { force: true });
				await rm(p("f.txt.elsewhere"), { force: true });
				await writeFile(p("f.txt"), original);
				let armed = true;
				const backend = createLocalBackend({
					hooks: {
						beforeCommit: async (target) => {
							if (!armed || !target.endsWith("f.txt")) return;
							armed = false;
							await disturb(target);
						},
					},
				});
				const s = await open({ backend, profile: tool === "file" ? "unified" : "pi" });
				ok(await s.call("read", { path: "f.txt" }));
				const expected = await readFile(p("f.txt"), "utf8").then(() => null);
				let r: CallResult;
				if (tool === "edit")
					r = await s.call("edit", { path: "f.txt", edits: [{ oldText: "beta", newText: "BETA" }] });
				else if (tool === "write") r = await s.call("write", { path: "f.txt", content: "mine\n" });
				else
					r = await s.call("file", {
						queries: [{ type: "edit", path: "f.txt", edits: [{ oldText: "beta", newText: "BETA" }] }],
					});
				expect(expected).toBeNull();
				const now = await readFile(p("f.txt"), "utf8");
				if (tool !== "write" && "content" in anchored) {
					expect(JSON.stringify(ok(r))).toMatch(/re-planned 1 time|"replanned":1/);
					expect(now).toBe(anchored.content);
				} else {
					expect(fail(r).code).toBe(tool === "write" ? "CHANGED_ON_DISK" : anchored.code);
					expect(now).not.toContain("BETA");
				}
				expect(now).not.toContain("mine");
				expect((await readdir(ws().root)).filter((n) => n.startsWith(".keel-tmp-"))).toEqual([]);
			}
		});
	}
});

describe("two sessions on one workspace", () => {
	it("64 concurrent anchor edits split across two sessions all land exactly once", async () => {
		const lines = Array.from({ length: 64 }, (_, i) => `row ${i} old`);
		await writeFile(p("f.txt"), `${lines.join("\n")}\n`);
		const a = await open();
		const b = await open();
		const results = await Promise.all(
			lines.map((_, i) =>
				(i % 2 ? a : b).call("file", {
					queries: [
						{ type: "edit", path: "f.txt", edits: [{ oldText: `row ${i} old`, newText: `row ${i} new` }] },
					],
				}),
			),
		);
		// Sessions do not share a queue: a commit that raced the other session fails closed, and a
		// retry (as a model would do) lands it. No edit is lost and none lands twice.
		for (let attempt = 0; attempt < 20; attempt++) {
			const pending = results.map((r, i) => (r.ok ? -1 : i)).filter((i) => i >= 0);
			if (pending.length === 0) break;
			for (const i of pending) {
				expect(["CHANGED_ON_DISK"]).toContain(fail(results[i]).code);
				results[i] = await (i % 2 ? a : b).call("file", {
					queries: [
						{ type: "edit", path: "f.txt", edits: [{ oldText: `row ${i} old`, newText: `row ${i} new` }] },
					],
				});
			}
		}
		expect(results.every((r) => r.ok)).toBe(true);
		expect(await readFile(p("f.txt"), "utf8")).toBe(`${lines.map((_, i) => `row ${i} new`).join("\n")}\n`);
	});
});

describe("encoding", () => {
	it("invalid UTF-8 and NUL bytes are ENCODING_UNSAFE (change-approach), file byte-identical", async () => {
		const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]); // "café\n" in latin-1
		const nul = Buffer.from("a\0b\nkeep\n");
		await writeFile(p("l1.txt"), latin1);
		await writeFile(p("nul.txt"), nul);
		const s = await open();
		for (const [name, bytes] of [
			["l1.txt", latin1],
			["nul.txt", nul],
		] as const) {
			const err = fail(
				await s.call("file", {
					queries: [{ type: "edit", path: name, edits: [{ oldText: "ca", newText: "CA" }] }],
				}),
			);
			expect(err.code).toBe("ENCODING_UNSAFE");
			expect(err.retry).toBe("change-approach");
			expect(Buffer.compare(await readFile(p(name)), bytes)).toBe(0);
		}
	});

	it("BOM, per-line endings and the exec bit survive an edit", async () => {
		const body = "\uFEFFa\r\nb\nc\r\n";
		await writeFile(p("x.sh"), body);
		await chmod(p("x.sh"), 0o750);
		const s = await open();
		ok(
			await s.call("file", {
				queries: [{ type: "edit", path: "x.sh", edits: [{ oldText: "b", newText: "B\nB2" }] }],
			}),
		);
		// the new line break inside a one-line anchor takes the file's dominant ending (CRLF here)
		expect(await readFile(p("x.sh"), "utf8")).toBe("\uFEFFa\r\nB\r\nB2\nc\r\n");
		expect((await stat(p("x.sh"))).mode & 0o777).toBe(0o750);
	});

	it("normalized matching lands a drifted anchor and changes only the matched text", async () => {
		await writeFile(p("q.ts"), "const s = “quoted” – text;   \nnext();\n");
		const s = await open();
		const r = ok(
			await s.call("file", {
				queries: [
					{
						type: "edit",
						path: "q.ts",
						edits: [
							{ oldText: 'const s = "quoted" - text;', newText: "const s = 1;", matchMode: "normalized" },
						],
					},
				],
			}),
		);
		expect(await readFile(p("q.ts"), "utf8")).toBe("const s = 1;   \nnext();\n");
		expect(r.details.results[0].matched).toEqual(["normalized"]);
	});

	it("writes through a symlink inside the roots change the target and keep the link", async () => {
		await writeFile(p("real.txt"), "v1");
		await symlink("real.txt", p("alias.txt"));
		const s = await open();
		ok(await s.call("read", { path: "alias.txt" }));
		ok(await s.call("file", { queries: [{ type: "write", path: "alias.txt", content: "v2" }] }));
		expect(await readlink(p("alias.txt"))).toBe("real.txt");
		expect(await readFile(p("real.txt"), "utf8")).toBe("v2");
	});
});
