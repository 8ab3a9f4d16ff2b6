/**
 * What real MCP clients do to a server, through the official SDK client: stdio messages
 * past the SDK's 10 MiB reader (a large write), one past keel's limit (an error naming the limit, and
 * the server keeps serving), results bounded below the SDK client's 10 MiB, arguments a client adds
 * for its own control (Gemini CLI's wait_for_previous), error results whose structuredContent alone
 * says what failed (Codex), and progress heartbeats that keep a quiet long call alive in a client
 * that resets its timeout on progress.
 */

import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHttp } from "../../src/adapters/mcp/http.js";
import { IMAGE_BOUNDS } from "../../src/boundary/image-bound.js";
import {
	BUILT,
	call,
	connectHttp,
	connectStdio,
	expectCode,
	expectOk,
	makeDir,
	NOT_BUILT,
	PNG_1x1,
	removeDir,
	TEST_TOKEN,
	textOf,
} from "./helpers.js";

if (!BUILT) console.warn(`skipping MCP client-robustness stdio tests: ${NOT_BUILT}`);

const MiB = 1024 * 1024;

describe.skipIf(!BUILT)("stdio message size", () => {
	let dir: string;
	let close: (() => Promise<void>) | undefined;
	beforeEach(async () => {
		dir = await makeDir("msg-size");
	});
	afterEach(async () => {
		await close?.();
		close = undefined;
		await removeDir(dir);
	});

	it("takes a 24 MiB write (past the SDK's 10 MiB reader) by default", async () => {
		const conn = await connectStdio(["--root", dir]);
		close = conn.close;
		const line = `${"0123456789abcdef".repeat(7)}\n`;
		const content = line.repeat(Math.ceil((24 * MiB) / line.length));
		expectOk(await call(conn.client, "write", { path: "big.txt", content }));
		expect((await stat(join(dir, "big.txt"))).size).toBe(content.length);
		expect(await readFile(join(dir, "big.txt"), "utf8")).toBe(content);
		expect(expectOk(await call(conn.client, "ls", {}))).toContain("big.txt");
	});

	it("answers a message over the limit with an error naming the limit, and keeps serving", async () => {
		const conn = await connectStdio(["--root", dir, "--max-message-mib", "1"]);
		close = conn.close;
		const refused = call(conn.client, "write", { path: "over.txt", content: "x".repeat(2 * MiB) });
		await expect(refused).rejects.toThrow(/over keel's stdio message limit of 1048576 bytes/);
		await expect(stat(join(dir, "over.txt"))).rejects.toMatchObject({ code: "ENOENT" });
		// Just under the limit still works, and so does everything after.
		expectOk(await call(conn.client, "write", { path: "under.txt", content: "y".repeat(MiB - 4096) }));
		expect((await stat(join(dir, "under.txt"))).size).toBe(MiB - 4096);
		expect(expectOk(await call(conn.client, "ls", {}))).toContain("under.txt");
		expect(conn.stderr()).toContain("over keel's stdio message limit");
	});

	it("bounds a result below the client's 10 MiB: a 12 MB image never comes back whole", async () => {
		const big = Buffer.concat([PNG_1x1, Buffer.alloc(12 * 1000 * 1000, 7)]);
		await makeDirFiles(dir, { "huge.png": big, "small.png": PNG_1x1 });
		const conn = await connectStdio(["--root", dir]);
		close = conn.close;
		const r = await call(conn.client, "read", { path: "huge.png" });
		expect(Buffer.byteLength(JSON.stringify(r))).toBeLessThan(10 * MiB);
		// read bounds images itself (boundary/image-bound.ts): scaled under the cap, or omitted with a note.
		for (const c of r.content)
			if (c.type === "image") expect(c.data.length).toBeLessThanOrEqual(IMAGE_BOUNDS.maxBase64);
		expect(textOf(r)).toMatch(/Read image file/);
		// The connection survived, and a small image still comes back whole.
		const small = await call(conn.client, "read", { path: "small.png" });
		expect(small.content).toContainEqual({
			type: "image",
			data: PNG_1x1.toString("base64"),
			mimeType: "image/png",
		});
	});
});

async function makeDirFiles(dir: string, files: Record<string, Buffer>) {
	const { writeFile } = await import("node:fs/promises");
	for (const [name, body] of Object.entries(files)) await writeFile(join(dir, name), body);
}

describe("what clients add and what they forward", () => {
	let dir: string;
	let close: (() => Promise<void>) | undefined;
	const open = async (heartbeatMs?: number) => {
		const server = await startHttp(
			{ root: dir, profile: "unified" },
			{ port: 0, log: () => {}, token: TEST_TOKEN, server: { heartbeatMs } },
		);
		const conn = await connectHttp(server.url);
		close = async () => {
			await conn.close();
			await server.close();
		};
		return conn.client;
	};
	beforeEach(async () => {
		dir = await makeDir("clients", { "a.txt": "alpha\n" });
	});
	afterEach(async () => {
		await close?.();
		close = undefined;
		await removeDir(dir);
	});

	it("ignores Gemini CLI's wait_for_previous, but still names a misspelled field", async () => {
		const client = await open();
		expect(expectOk(await call(client, "read", { path: "a.txt", wait_for_previous: true }))).toContain(
			"alpha",
		);
		expectOk(
			await call(client, "file", {
				queries: [{ type: "write", path: "b.txt", content: "beta\n" }],
				wait_for_previous: false,
			}),
		);
		expect(await readFile(join(dir, "b.txt"), "utf8")).toBe("beta\n");
		const typo = expectCode(
			await call(client, "read", { pathh: "a.txt", wait_for_previous: true }),
			"INVALID_ARGS",
		);
		expect(typo.message).toContain("pathh");
		// Only the top level is the client's: inside a query the name is still a mistake.
		const nested = expectCode(
			await call(client, "file", { queries: [{ type: "read", path: "a.txt", wait_for_previous: true }] }),
			"INVALID_ARGS",
		);
		expect(nested.message).toContain("wait_for_previous");
	});

	it("puts the failure, its code and message in structuredContent (all Codex forwards)", async () => {
		const client = await open();
		const r = await call(client, "read", { path: "missing.txt" });
		expect(r.isError).toBe(true);
		const sc = r.structuredContent as Record<string, unknown>;
		expect(sc.ok).toBe(false);
		expect(sc.code).toBe("NOT_FOUND");
		expect(sc.message).toEqual(expect.stringContaining("missing.txt"));
		expect(sc.retry).toBe("retarget");
		expect(textOf(r)).toBe(`[NOT_FOUND] ${sc.message}`);
	});

	it("marks file and search tools openWorldHint false, code-running tools true", async () => {
		const client = await open();
		const { tools } = await client.listTools();
		for (const t of tools) {
			const open = ["bash", "python", "python_jobs", "exec_command", "write_stdin", "process"].includes(
				t.name,
			);
			expect(t.annotations?.openWorldHint, t.name).toBe(open);
		}
	});

	it("sends progress heartbeats while a quiet call runs, so a resetting client keeps waiting", async () => {
		const client = await open(150);
		const command = "sleep 1.5; echo done-quietly";
		const messages: string[] = [];
		const r = await client.callTool({ name: "bash", arguments: { command } }, undefined, {
			timeout: 700,
			resetTimeoutOnProgress: true,
			onprogress: (p) => messages.push(p.message ?? ""),
		});
		expect(expectOk(r as never)).toContain("done-quietly");
		expect(messages.filter((m) => m.startsWith("still running")).length).toBeGreaterThanOrEqual(2);
		// The same call without a progress token gets no heartbeat, and the client gives up.
		await expect(
			client.callTool({ name: "bash", arguments: { command } }, undefined, { timeout: 700 }),
		).rejects.toThrow(/timed out/i);
	});
});
