/**
 * `keel serve` over stdio with the official SDK client (StdioClientTransport spawning runServe from
 * the build): the shared contract, plus progress, cancellation and shutdown when stdin closes.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
	BUILT,
	connectStdio,
	expectOk,
	LAUNCHER,
	makeDir,
	NOT_BUILT,
	removeDir,
	type StdioConnection,
} from "./helpers.js";
import { mcpContract } from "./suite.js";

if (!BUILT) console.warn(`skipping MCP stdio tests: ${NOT_BUILT}`);

describe.skipIf(!BUILT)("stdio", () => {
	mcpContract("stdio", (root, profile) => connectStdio(["--root", root, "--profile", profile]));

	describe("one connection", () => {
		let dir: string;
		let conn: StdioConnection | undefined;
		beforeEach(async () => {
			dir = await makeDir("stdio-extra");
		});
		afterEach(async () => {
			await conn?.close();
			conn = undefined;
			await removeDir(dir);
		});

		it("says on stderr where it serves", async () => {
			conn = await connectStdio(["--root", dir]);
			await conn.client.listTools();
			expect(conn.stderr()).toContain(`keel: MCP server on stdio (workspace ${dir}, profile pi)`);
		});

		it("forwards bash output as progress notifications when asked", async () => {
			conn = await connectStdio(["--root", dir]);
			const messages: string[] = [];
			const result = await conn.client.callTool(
				{ name: "bash", arguments: { command: "for i in 1 2 3 4 5 6; do echo tick$i; sleep 0.15; done" } },
				undefined,
				{ onprogress: (p) => messages.push(p.message ?? "") },
			);
			expect(expectOk(result as never)).toContain("tick6");
			expect(messages.length).toBeGreaterThan(0);
			expect(messages.some((m) => m.includes("tick"))).toBe(true);
		});

		it("cancels a running call: the client's abort kills the command", async () => {
			conn = await connectStdio(["--root", dir]);
			const controller = new AbortController();
			const pending = conn.client.callTool(
				{ name: "bash", arguments: { command: "sleep 2 && echo late > marker.txt" } },
				undefined,
				{ signal: controller.signal },
			);
			await sleep(300);
			controller.abort();
			await expect(pending).rejects.toThrow();
			await sleep(2500);
			expect(existsSync(join(dir, "marker.txt"))).toBe(false);
			// The connection is still usable.
			expect(expectOk((await conn.client.callTool({ name: "ls", arguments: {} })) as never)).toBeDefined();
		});
	});

	it("exits 0 when stdin closes, and 2 when the root does not exist", async () => {
		const dir = await makeDir("stdio-exit");
		try {
			const run = (args: string[]) =>
				new Promise<{ code: number | null; stderr: string }>((resolve) => {
					const child = spawn(process.execPath, [LAUNCHER, ...args], { stdio: ["pipe", "pipe", "pipe"] });
					let stderr = "";
					child.stderr.on("data", (d: Buffer) => {
						stderr += d.toString();
					});
					child.on("close", (code) => resolve({ code, stderr }));
					child.stdin.end();
				});
			expect((await run(["--root", dir])).code).toBe(0);
			const bad = await run(["--root", join(dir, "missing")]);
			expect(bad.code).toBe(2);
			expect(bad.stderr).toContain("Root does not exist");
		} finally {
			await removeDir(dir);
		}
	});
});
