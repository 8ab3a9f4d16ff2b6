/**
 * `keel serve --http` with the official SDK client (StreamableHTTPClientTransport): the shared
 * contract against startHttp on an ephemeral port, one keel session per MCP session (closed with it),
 * the Host/Origin guard and the bearer token (SDK client and node:http), the session cap (evicts only
 * idle sessions). runServe as a process and the token file: http-token.test.ts.
 */
import { existsSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type HttpHandle, startHttp } from "../../src/adapters/mcp/http.js";
import {
	call,
	connectHttp,
	expectOk,
	type HttpConnection,
	makeDir,
	removeDir,
	TEST_TOKEN,
} from "./helpers.js";
import { mcpContract } from "./suite.js";

const quiet = () => {};

mcpContract("HTTP", async (root, profile) => {
	const server = await startHttp({ root, profile }, { port: 0, log: quiet, token: TEST_TOKEN });
	const conn = await connectHttp(server.url);
	return {
		client: conn.client,
		async close() {
			await conn.close();
			await server.close();
		},
	};
});

interface RawReply {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	body: string;
}

/** A raw POST with node:http, to send headers (or leave out ones) the SDK client would not. */
function rawPost(url: string, headers: Record<string, string>, body: unknown): Promise<RawReply> {
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
				let text = "";
				res.on("data", (d: Buffer) => {
					text += d.toString();
				});
				res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
			},
		);
		req.on("error", reject);
		req.end(typeof body === "string" ? body : JSON.stringify(body));
	});
}

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };

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
		server = await startHttp({ root: dir }, { port: 0, log: quiet, token: TEST_TOKEN });
	});
	afterEach(async () => {
		for (const c of conns.splice(0)) await c.close().catch(() => {});
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
		expect((await rawPost(base, AUTH, ping)).status).toBe(400);
		expect((await rawPost(base, { ...AUTH, "mcp-session-id": "no-such-session" }, ping)).status).toBe(404);
		expect((await rawPost(base.replace(/\/mcp$/, "/other"), AUTH, INITIALIZE)).status).toBe(404);
		expect((await rawPost(base, AUTH, INITIALIZE)).status).toBe(200);
	});

	it("refuses a non-loopback Host or Origin even with the token (DNS rebinding)", async () => {
		const evilHost = await rawPost(server.url, { ...AUTH, host: `evil.example:${server.port}` }, INITIALIZE);
		expect(evilHost.status).toBe(403);
		expect(evilHost.body).toContain("Host");
		expect((await rawPost(server.url, { ...AUTH, origin: "http://evil.example" }, INITIALIZE)).status).toBe(
			403,
		);
		// A rebinding page's Host names the attacker's domain even when it resolves to 127.0.0.1.
		expect(
			(await rawPost(server.url, { ...AUTH, host: `127.0.0.1.evil.example:${server.port}` }, INITIALIZE))
				.status,
		).toBe(403);
		expect(server.sessionCount()).toBe(0);
		expect(
			(await rawPost(server.url, { ...AUTH, host: `localhost:${server.port}` }, INITIALIZE)).status,
		).toBe(200);
		expect((await rawPost(server.url, { ...AUTH, origin: "http://localhost:3000" }, INITIALIZE)).status).toBe(
			200,
		);
		expect(server.sessionCount()).toBe(2);
	});
});

describe("HTTP bearer token", () => {
	let dir: string;
	let server: HttpHandle;
	const conns: HttpConnection[] = [];
	beforeEach(async () => {
		dir = await makeDir("http-auth", { "a.txt": "alpha\n" });
		server = await startHttp({ root: dir }, { port: 0, log: quiet, token: TEST_TOKEN });
	});
	afterEach(async () => {
		for (const c of conns.splice(0)) await c.close().catch(() => {});
		await server.close();
		await removeDir(dir);
	});

	it("the SDK client with the token works; without it or with a wrong one it cannot connect", async () => {
		await expect(connectHttp(server.url, { token: null })).rejects.toThrow(/401|Unauthorized/);
		await expect(connectHttp(server.url, { token: `${TEST_TOKEN}x` })).rejects.toThrow(/401|Unauthorized/);
		await expect(connectHttp(server.url, { token: TEST_TOKEN.slice(0, -1) })).rejects.toThrow(
			/401|Unauthorized/,
		);
		expect(server.sessionCount()).toBe(0);
		const ok = await connectHttp(server.url);
		conns.push(ok);
		expect(expectOk(await call(ok.client, "read", { path: "a.txt" }))).toContain("alpha");
		expect(server.sessionCount()).toBe(1);
	});

	it("a raw client gets 401 without the token, with a wrong one, or another scheme; nothing starts", async () => {
		const wrong: Record<string, string>[] = [
			{},
			{ authorization: "Bearer not-the-token-at-all-000000" },
			{ authorization: `Basic ${Buffer.from(`x:${TEST_TOKEN}`).toString("base64")}` },
			{ authorization: TEST_TOKEN },
			{ authorization: `Bearer ${TEST_TOKEN} extra` },
			{ authorization: "Bearer " },
		];
		for (const headers of wrong) {
			const r = await rawPost(server.url, headers, INITIALIZE);
			expect(r.status, JSON.stringify(headers)).toBe(401);
			expect(r.headers["www-authenticate"]).toBe('Bearer realm="keel"');
			expect(JSON.parse(r.body).error.message).toContain("Authorization: Bearer");
		}
		// An existing session's id is no substitute for the token.
		const good = await rawPost(server.url, AUTH, INITIALIZE);
		expect(good.status).toBe(200);
		const sid = good.headers["mcp-session-id"] as string;
		const call = {
			jsonrpc: "2.0",
			id: 3,
			method: "tools/call",
			params: { name: "bash", arguments: { command: "touch pwned" } },
		};
		expect((await rawPost(server.url, { "mcp-session-id": sid }, call)).status).toBe(401);
		expect(existsSync(join(dir, "pwned"))).toBe(false);
		expect(server.sessionCount()).toBe(1);
		// The scheme is case-insensitive (RFC 7235).
		expect((await rawPost(server.url, { authorization: `bearer ${TEST_TOKEN}` }, INITIALIZE)).status).toBe(
			200,
		);
	});

	it("refuses before reading the body: a huge unauthenticated POST gets 401", async () => {
		const r = await rawPost(server.url, {}, "x".repeat(8 * 1024 * 1024));
		expect(r.status).toBe(401);
	});

	it("on a non-loopback address still requires the token and checks Host, and says so", async () => {
		const lines: string[] = [];
		const open = await startHttp(
			{ root: dir },
			{ port: 0, host: "0.0.0.0", log: (l) => lines.push(l), token: TEST_TOKEN },
		);
		try {
			expect(lines.join("\n")).toMatch(/not a loopback address.*bearer token/);
			const url = `http://127.0.0.1:${open.port}/mcp`;
			expect((await rawPost(url, {}, INITIALIZE)).status).toBe(401);
			expect((await rawPost(url, { ...AUTH, host: `evil.example:${open.port}` }, INITIALIZE)).status).toBe(
				403,
			);
			expect((await rawPost(url, AUTH, INITIALIZE)).status).toBe(200);
		} finally {
			await open.close();
		}
	});
});

describe("HTTP session cap", () => {
	let dir: string;
	let clock = 0;
	let server: HttpHandle;
	const conns: HttpConnection[] = [];
	const lines: string[] = [];
	beforeEach(async () => {
		dir = await makeDir("http-cap", { "a.txt": "alpha\n" });
		clock = 0;
		server = await startHttp(
			{ root: dir },
			{
				port: 0,
				log: (l) => lines.push(l),
				token: TEST_TOKEN,
				maxSessions: 2,
				sessionIdleMs: 1000,
				now: () => clock,
			},
		);
	});
	afterEach(async () => {
		for (const c of conns.splice(0)) await c.close().catch(() => {});
		await server.close();
		await removeDir(dir);
	});

	it("refuses a session past the cap while the others are recent, with a clear error", async () => {
		conns.push(await connectHttp(server.url), await connectHttp(server.url));
		await expect(connectHttp(server.url)).rejects.toThrow(/503|Server full: 2 MCP sessions/);
		const raw = await rawPost(server.url, AUTH, INITIALIZE);
		expect(raw.status).toBe(503);
		expect(JSON.parse(raw.body).error.message).toContain("--max-sessions");
		expect(server.sessionCount()).toBe(2);
		for (const c of conns) expect(expectOk(await call(c.client, "ls", {}))).toContain("a.txt");
	});

	it("closes only a session idle past the timeout, the longest idle first", async () => {
		const a = await connectHttp(server.url);
		const b = await connectHttp(server.url);
		conns.push(a, b);
		clock = 500;
		await call(a.client, "ls", {});
		clock = 1200; // b idle 1200 ms, a idle 700 ms
		const c = await connectHttp(server.url);
		conns.push(c);
		expect(server.sessionCount()).toBe(2);
		expect(lines.some((l) => l.includes("closing one idle"))).toBe(true);
		await expect(call(b.client, "ls", {})).rejects.toThrow();
		expect(expectOk(await call(a.client, "ls", {}))).toContain("a.txt");
		expect(expectOk(await call(c.client, "ls", {}))).toContain("a.txt");
	});

	it("never closes a session with a call in flight, however long it has run", async () => {
		const a = await connectHttp(server.url);
		const b = await connectHttp(server.url);
		conns.push(a, b);
		const marker = join(dir, "started");
		const running = call(a.client, "bash", { command: `touch ${marker}; sleep 1.5; echo finished` });
		while (!existsSync(marker)) await sleep(20);
		await call(b.client, "ls", {});
		clock = 10_000; // both past the timeout by the clock, but a is busy: b goes
		conns.push(await connectHttp(server.url));
		await expect(connectHttp(server.url)).rejects.toThrow(/503|Server full/);
		expect(expectOk(await running)).toContain("finished");
	});
});
