/**
 * `keel serve --http` with the official SDK client (StreamableHTTPClientTransport): the shared
 * contract against startHttp on an ephemeral port, one keel session per MCP session (closed with it),
 * the loopback Host/Origin guard, and runServe as a process (stderr names the URL; SIGTERM exits 0).
 */
import { spawn } from "node:child_process";
import { request } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type HttpHandle, startHttp } from "../../src/adapters/mcp/http.js";
import {
	BUILT,
	call,
	connectHttp,
	expectOk,
	type HttpConnection,
	LAUNCHER,
	makeDir,
	NOT_BUILT,
	removeDir,
} from "./helpers.js";
import { mcpContract } from "./suite.js";

const quiet = () => {};

mcpContract("HTTP", async (root, profile) => {
	const server = await startHttp({ root, profile }, { port: 0, log: quiet });
	const conn = await connectHttp(server.url);
	return {
		client: conn.client,
		async close() {
			await conn.close();
			await server.close();
		},
	};
});

/** A raw POST, to send headers the SDK client would not. */
function rawPost(url: string, headers: Record<string, string>, body: unknown): Promise<number> {
	return new Promise((resolve, reject) => {
		const req = request(
			url,
			{
				method: "POST",
				headers: {
					"content-type": "application/json",
					accept: "application/json, text/event-stream",
					...headers,
				},
			},
			(res) => {
				res.resume();
				resolve(res.statusCode ?? 0);
			},
		);
		req.on("error", reject);
		req.end(JSON.stringify(body));
	});
}

const INITIALIZE = {
	jsonrpc: "2.0",
	id: 1,
	method: "initialize",
	params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};

describe("HTTP sessions", () => {
	let dir: string;
	let server: HttpHandle;
	const conns: HttpConnection[] = [];
	beforeEach(async () => {
		dir = await makeDir("http", { "a.txt": "alpha\n" });
		server = await startHttp({ root: dir }, { port: 0, log: quiet });
	});
	afterEach(async () => {
		for (const c of conns.splice(0)) await c.close();
		await server.close();
		await removeDir(dir);
	});

	it("listens on 127.0.0.1 at /mcp", () => {
		expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
		expect(server.port).toBeGreaterThan(0);
	});

	it("gives each MCP session its own keel session and closes it with the session", async () => {
		const a = await connectHttp(server.url);
		const b = await connectHttp(server.url);
		conns.push(a, b);
		expect(a.transport.sessionId).toBeDefined();
		expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
		expect(server.sessionCount()).toBe(2);
		const [ra, rb] = await Promise.all([
			call(a.client, "read", { path: "a.txt" }),
			call(b.client, "read", { path: "a.txt" }),
		]);
		expect(expectOk(ra)).toContain("alpha");
		expect(expectOk(rb)).toContain("alpha");
		await a.transport.terminateSession();
		expect(server.sessionCount()).toBe(1);
		// The other session is unaffected.
		expect(expectOk(await call(b.client, "ls", {}))).toContain("a.txt");
	});

	it("refuses requests without a session, with an unknown session, or on another path", async () => {
		const base = server.url;
		const ping = { jsonrpc: "2.0", id: 2, method: "ping" };
		expect(await rawPost(base, {}, ping)).toBe(400);
		expect(await rawPost(base, { "mcp-session-id": "no-such-session" }, ping)).toBe(404);
		expect(await rawPost(base.replace(/\/mcp$/, "/other"), {}, INITIALIZE)).toBe(404);
		expect(await rawPost(base, {}, INITIALIZE)).toBe(200);
	});

	it("keeps at most maxSessions sessions, closing the least recently used", async () => {
		const small = await startHttp({ root: dir }, { port: 0, log: quiet, maxSessions: 2 });
		try {
			const a = await connectHttp(small.url);
			const b = await connectHttp(small.url);
			conns.push(a, b);
			await call(a.client, "ls", {}); // a is now more recent than b
			const c = await connectHttp(small.url);
			conns.push(c);
			expect(small.sessionCount()).toBe(2);
			expect(expectOk(await call(a.client, "ls", {}))).toContain("a.txt");
			expect(expectOk(await call(c.client, "ls", {}))).toContain("a.txt");
			await expect(call(b.client, "ls", {})).rejects.toThrow();
		} finally {
			for (const x of conns.splice(0)) await x.close().catch(() => {});
			await small.close();
		}
	});

	it("refuses a non-loopback Host or Origin (DNS rebinding)", async () => {
		expect(await rawPost(server.url, { host: `evil.example:${server.port}` }, INITIALIZE)).toBe(403);
		expect(await rawPost(server.url, { origin: "http://evil.example" }, INITIALIZE)).toBe(403);
		expect(await rawPost(server.url, { host: `localhost:${server.port}` }, INITIALIZE)).toBe(200);
		expect(await rawPost(server.url, { origin: "http://localhost:3000" }, INITIALIZE)).toBe(200);
		expect(server.sessionCount()).toBe(2);
	});
});

describe.skipIf(!BUILT)("runServe --http as a process", () => {
	it("prints its URL on stderr, serves, and exits 0 on SIGTERM", async () => {
		if (!BUILT) throw new Error(NOT_BUILT);
		const dir = await makeDir("http-proc", { "a.txt": "alpha\n" });
		const child = spawn(process.execPath, [LAUNCHER, "--root", dir, "--http", "0"], {
			stdio: ["ignore", "ignore", "pipe"],
		});
		try {
			let stderr = "";
			const url = await new Promise<string>((resolve, reject) => {
				child.stderr.on("data", (d: Buffer) => {
					stderr += d.toString();
					const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
					if (m) resolve(m[1]);
				});
				child.on("exit", () => reject(new Error(`server exited: ${stderr}`)));
			});
			const conn = await connectHttp(url);
			expect(expectOk(await call(conn.client, "read", { path: "a.txt" }))).toContain("alpha");
			await conn.close();
			const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
			child.kill("SIGTERM");
			expect(await exited).toBe(0);
		} finally {
			child.kill("SIGKILL");
			await removeDir(dir);
		}
	});
});
