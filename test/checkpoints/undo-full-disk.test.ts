/**
 * Checkpoints on a full disk: when keel's state directory cannot take a file's bytes, the call
 * still runs, the file is named as not restorable, and a restore over it is a conflict (with
 * `force`, everything else is restored). Needs a tiny tmpfs (root); skipped with a message else.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { useWorkspace } from "../fixtures/workspace.js";

// The test opens its session itself, its state dir on a tiny disk beside the root.
const ws = useWorkspace({
	prefix: "keel-undo-full-",
	files: { "small.txt": "small\n", "big.bin": Buffer.alloc(400 * 1024, 1) },
	session: false,
});
const mounted: string[] = [];
// Registered after the workspace's hook, so it runs before the workspace is removed.
afterEach(() => {
	for (const m of mounted.splice(0)) spawnSync("umount", ["-l", m]);
});

function tinyTmpfs(at: string): string | undefined {
	mkdirSync(at, { recursive: true });
	const r = spawnSync("mount", ["-t", "tmpfs", "-o", "size=128k,mode=0700", "tmpfs", at]);
	if (r.status !== 0) return undefined;
	mounted.push(at);
	return at;
}

describe("checkpoints when keel's state directory is full (ENOSPC)", () => {
	it("the call runs, the file too big for the disk is named, a restore over it is a conflict", async (ctx) => {
		const state = tinyTmpfs(ws().outside("tiny-state"));
		if (!state) {
			console.warn("skipping the ENOSPC checkpoint test: cannot mount a tmpfs here (needs root)");
			return ctx.skip();
		}
		const session = await ws().open({ profile: "unified", stateDir: state, checkpoints: true });
		try {
			const r = await session.call("bash", { command: "echo changed > small.txt && printf x >> big.bin" });
			expect(r.ok).toBe(true);
			const list = await session.call("checkpoints", { action: "list" });
			expect((list.ok && (list.details as { notRestorable: string[] }).notRestorable) || []).toContain(
				ws().path("big.bin"),
			);
			const refused = await session.call("checkpoints", { action: "restore" });
			expect(refused.ok).toBe(false);
			if (!refused.ok) expect(refused.error.message).toContain("big.bin");
			expect(readFileSync(ws().path("small.txt"), "utf8")).toBe("changed\n");
			const forced = await session.call("checkpoints", { action: "restore", force: true });
			expect(forced.ok).toBe(true);
			expect(readFileSync(ws().path("small.txt"), "utf8")).toBe("small\n");
		} finally {
			await session.close();
		}
	});
});
