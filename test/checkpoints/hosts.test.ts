/**
 * How a host offers undo: the CLI's --checkpoints and KEEL_CHECKPOINTS (batch and MCP share the
 * parse), the pi extension's --keel-checkpoints and its /undo command. A bad switch value is an
 * error, never a silent default.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "../../src/adapters/cli-args.js";
import { UsageError } from "../../src/adapters/cli-serve.js";
import { resolveConfig } from "../../src/adapters/pi/config.js";
import { undoCommand } from "../../src/adapters/pi/undo.js";
import { useWorkspace } from "../fixtures/workspace.js";

describe("the CLI and MCP settings", () => {
	it("--checkpoints and KEEL_CHECKPOINTS turn them on; the flag wins; a bad value is a usage error", () => {
		expect(parse(["batch", "--checkpoints"]).session.checkpoints).toBe(true);
		expect(parse(["serve"], { KEEL_CHECKPOINTS: "1" }).session.checkpoints).toBe(true);
		expect(parse(["batch"], { KEEL_CHECKPOINTS: "off" }).session.checkpoints).toBeUndefined();
		expect(parse(["batch"]).session.checkpoints).toBeUndefined();
		expect(() => parse(["batch"], { KEEL_CHECKPOINTS: "maybe" })).toThrow(UsageError);
	});

	it("pi's --keel-checkpoints and KEEL_CHECKPOINTS", () => {
		const none = () => undefined;
		expect(resolveConfig({ cwd: "/w", flag: none, env: {} }).checkpoints).toBe(false);
		expect(
			resolveConfig({ cwd: "/w", flag: (n) => (n === "keel-checkpoints" ? true : undefined), env: {} })
				.checkpoints,
		).toBe(true);
		expect(resolveConfig({ cwd: "/w", flag: none, env: { KEEL_CHECKPOINTS: "yes" } }).checkpoints).toBe(true);
		const bad = resolveConfig({ cwd: "/w", flag: none, env: { KEEL_CHECKPOINTS: "maybe" } });
		expect(bad.error).toMatch(/KEEL_CHECKPOINTS is "maybe"/);
	});
});

describe("pi's /undo", () => {
	// The test opens its sessions itself: checkpoints on, then off.
	const ws = useWorkspace({ prefix: "keel-undo-pi-", files: { "a.txt": "before\n" }, session: false });

	it("undoes the last bash change, lists, and says when checkpoints are off", async () => {
		const session = await ws().open({ checkpoints: true });
		try {
			expect((await session.call("bash", { command: "echo after > a.txt" })).ok).toBe(true);
			const [listed] = await undoCommand(session, "list");
			expect(listed).toContain("1 bash");
			const [said, level] = await undoCommand(session, "");
			expect(level).toBe("info");
			expect(said).toContain("restored 1 path(s) to checkpoint 0");
			expect(readFileSync(ws().path("a.txt"), "utf8")).toBe("before\n");
			expect((await undoCommand(session, "x"))[1]).toBe("warning");
		} finally {
			await session.close();
		}
		const off = await ws().open();
		try {
			expect((await undoCommand(off, ""))[0]).toMatch(/--keel-checkpoints/);
		} finally {
			await off.close();
		}
	});
});
