/** Writes are serialized per canonical path by the session's queue and atomic. */
import { chmod, readdir, stat, symlink } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { MutationQueue } from "../../src/safety/mutation-queue.js";
import { useWorkspace } from "../fixtures/workspace.js";

describe("mutation queue", () => {
	it("runs tasks on one key in order and tasks on other keys independently", async () => {
		const q = new MutationQueue();
		const order: string[] = [];
		let release!: () => void;
		const gate = new Promise<void>((r) => {
			release = r;
		});
		const a1 = q.run("a", async () => {
			await gate;
			order.push("a1");
		});
		const a2 = q.run("a", async () => {
			order.push("a2");
		});
		await q.run("b", async () => {
			order.push("b");
		});
		expect(order).toEqual(["b"]);
		release();
		await Promise.all([a1, a2]);
		expect(order).toEqual(["b", "a1", "a2"]);
		await new Promise((r) => setTimeout(r, 0));
		expect(q.size).toBe(0);
	});

	it("a failed task does not block the next one", async () => {
		const q = new MutationQueue();
		await expect(q.run("k", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
		await expect(q.run("k", async () => 7)).resolves.toBe(7);
	});
});

describe("concurrent edits through one session", () => {
	const ws = useWorkspace({ prefix: "keel-queue-" });
	it("64 concurrent edits with distinct anchors on one file all land exactly once", async () => {
		const lines = Array.from({ length: 64 }, (_, i) => `line-${i}-old`);
		await ws().write("f.txt", `${lines.join("\n")}\n`);
		const s = ws().session;
		const results = await Promise.all(
			lines.map((_, i) =>
				s.call("edit", { path: "f.txt", edits: [{ oldText: `line-${i}-old`, newText: `line-${i}-new` }] }),
			),
		);
		expect(results.every((r) => r.ok)).toBe(true);
		const after = await ws().read("f.txt");
		expect(after).toBe(`${lines.map((_, i) => `line-${i}-new`).join("\n")}\n`);
	});

	it("edits through a symlink and through its target share one queue (canonical key)", async () => {
		const lines = Array.from({ length: 20 }, (_, i) => `v${i}`);
		await ws().write("t.txt", lines.join("\n"));
		await symlink("t.txt", ws().path("link.txt"));
		const s = ws().session;
		const results = await Promise.all(
			lines.map((_, i) =>
				s.call("edit", {
					path: i % 2 ? "link.txt" : "t.txt",
					edits: [{ oldText: `v${i}`.padEnd(3, "\n"), newText: `w${i}`.padEnd(3, "\n") }],
				}),
			),
		);
		expect(results.filter((r) => !r.ok)).toEqual([]);
		expect((await ws().read("t.txt")).split("\n")).toEqual(lines.map((_, i) => `w${i}`));
		expect((await stat(ws().path("link.txt"))).isFile()).toBe(true);
	});

	it("writes keep the exec bit and leave no temp files behind", async () => {
		await ws().write("run.sh", "#!/bin/sh\necho 1\n");
		await chmod(ws().path("run.sh"), 0o755);
		const s = ws().session;
		expect((await s.call("write", { path: "run.sh", content: "x" })).ok).toBe(false); // not read yet
		expect((await s.call("read", { path: "run.sh" })).ok).toBe(true);
		const r = await s.call("write", { path: "run.sh", content: "#!/bin/sh\necho 2\n" });
		expect(r.ok).toBe(true);
		expect((await stat(ws().path("run.sh"))).mode & 0o777).toBe(0o755);
		const bad = await s.call("edit", { path: "run.sh", edits: [{ oldText: "nope", newText: "x" }] });
		expect(bad.ok).toBe(false);
		expect((await readdir(ws().root)).sort()).toEqual(["run.sh"]);
	});
});
