/**
 * Over MCP, a `process` wait sends the output that arrives meanwhile as progress notifications
 * (when the client asked with a progress token), so a client sees a background command's output
 * while the wait runs; the answer still holds all of it. In-process HTTP server, the SDK client.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHttp } from "../../src/adapters/mcp/http.js";
import { call, connectHttp, expectOk, makeDir, removeDir, TEST_TOKEN } from "./helpers.js";

describe("MCP: a process wait's output as progress notifications", () => {
	let dir: string;
	let close: (() => Promise<void>) | undefined;
	beforeEach(async () => {
		dir = await makeDir("process-progress");
	});
	afterEach(async () => {
		await close?.();
		close = undefined;
		await removeDir(dir);
	});

	it("each line printed during the wait reaches the client before the answer", async () => {
		const server = await startHttp(
			{ root: dir, profile: "unified" },
			{ port: 0, log: () => {}, token: TEST_TOKEN, server: {} },
		);
		const conn = await connectHttp(server.url);
		close = async () => {
			await conn.close();
			await server.close();
		};
		// Prints a line every 300 ms, then the line the wait looks for.
		const started = await call(conn.client, "bash", {
			command: "for i in 1 2 3 4; do echo tick-$((i*11)); sleep 0.3; done; echo all-done; sleep 1000",
			background: true,
		});
		const id = (started.structuredContent as { process?: { id: number } } | undefined)?.process?.id ?? 1;
		const messages: string[] = [];
		const r = await conn.client.callTool(
			{ name: "process", arguments: { action: "wait", id, cursor: 0, pattern: "all-done", timeout: 20 } },
			undefined,
			{ onprogress: (p) => messages.push(p.message ?? "") },
		);
		const answer = expectOk(r as never);
		expect(answer).toContain("tick-44");
		expect(answer).toContain("all-done");
		// Output before the match came as progress (throttled: at least one, each the newest tail).
		const progressed = messages.filter((m) => m.includes("tick-"));
		expect(progressed.length).toBeGreaterThan(0);
		expect(progressed.at(-1)).toMatch(/tick-\d+\n$/);
		await call(conn.client, "process", { action: "kill", id });
	});
});
