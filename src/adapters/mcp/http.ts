/**
 * `keel serve --http PORT`: Streamable HTTP at /mcp with MCP session management. Each `initialize`
 * opens a new transport, SDK server and keel session; the keel session closes with its transport
 * (DELETE, eviction when idle at the cap, or shutdown). Bound to 127.0.0.1 by default. Every request
 * passes the RequestGuard first (Host/Origin name this server, bearer token), so a refused request
 * reads no body and starts nothing.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { SessionOptions } from "../../session.js";
import { BearerCheck } from "./auth.js";
import { allowedHostNames, HttpError, isLoopback, RequestGuard } from "./http-guard.js";
import { SessionTable } from "./http-sessions.js";
import { createMcpServer, type McpServerOptions } from "./server.js";
import { type ClientRootsPolicy, LazySession } from "./sessions.js";

export const MCP_PATH = "/mcp";
export const DEFAULT_HOST = "127.0.0.1";
/** POST bodies above this are refused (413): a write payload travels in the body. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Open MCP sessions kept at most (--max-sessions). */
export const MAX_SESSIONS = 64;
/** A session idle this long may be closed to make room for a new one (--session-idle-timeout). */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

export interface HttpServeOptions {
	/** 0 picks a free port; the handle says which. */
	port: number;
	host?: string;
	/** The bearer token every request must carry (see auth.ts for where it comes from). */
	token: string;
	/** Extra Host names accepted besides loopback and the bound address. */
	allowedHosts?: string[];
	log: (line: string) => void;
	maxBodyBytes?: number;
	maxSessions?: number;
	sessionIdleMs?: number;
	/** Clock for idleness (tests). */
	now?: () => number;
	server?: Omit<McpServerOptions, "log">;
	clientRoots?: ClientRootsPolicy;
}

export interface HttpHandle {
	readonly url: string;
	readonly port: number;
	/** Open MCP sessions. */
	sessionCount(): number;
	close(): Promise<void>;
}

interface Connection {
	transport: StreamableHTTPServerTransport;
	close(): Promise<void>;
}

async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of req as AsyncIterable<Buffer>) {
		size += chunk.length;
		if (size > max) throw new HttpError(413, -32000, `Request body is larger than ${max} bytes.`);
		chunks.push(chunk);
	}
	try {
		return JSON.parse(Buffer.concat(chunks).toString("utf8"));
	} catch (e) {
		throw new HttpError(400, -32700, `Parse error: ${(e as Error).message}`);
	}
}

function replyError(res: ServerResponse, e: HttpError): void {
	if (res.headersSent) {
		res.end();
		return;
	}
	res.writeHead(e.status, { "content-type": "application/json", connection: "close", ...e.headers });
	res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: e.rpcCode, message: e.message }, id: null }));
}

export async function startHttp(base: SessionOptions, opts: HttpServeOptions): Promise<HttpHandle> {
	const host = opts.host ?? DEFAULT_HOST;
	if (!opts.token) throw new Error("startHttp needs a bearer token");
	const guard = new RequestGuard(allowedHostNames(host, opts.allowedHosts), new BearerCheck(opts.token));
	const maxBody = opts.maxBodyBytes ?? MAX_BODY_BYTES;
	const maxSessions = opts.maxSessions ?? MAX_SESSIONS;
	const idleMs = opts.sessionIdleMs ?? SESSION_IDLE_MS;
	const table = new SessionTable<Connection>({ maxSessions, idleMs, now: opts.now }, opts.log);
	const closing = new Set<Promise<void>>();

	const open = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
		const release = table.reserve();
		if (!release) {
			throw new HttpError(
				503,
				-32000,
				`Server full: ${maxSessions} MCP sessions are open and none has been idle for ${Math.round(idleMs / 1000)} s. ` +
					"Close a session (DELETE /mcp) or start keel with a larger --max-sessions.",
			);
		}
		try {
			const provider = new LazySession(base, opts.log, opts.clientRoots);
			const server = createMcpServer(provider, { ...opts.server, log: opts.log });
			const conn: Connection = {
				transport: new StreamableHTTPServerTransport({
					sessionIdGenerator: () => randomUUID(),
					onsessioninitialized: (id) => table.add(id, conn),
				}),
				close: async () => {
					await server.close();
					await provider.close();
				},
			};
			// DELETE, a transport failure, eviction or shutdown: forget the session and close the keel session.
			server.onclose = () => {
				if (conn.transport.sessionId) table.delete(conn.transport.sessionId);
				const p = provider.close().catch((e) => opts.log(`keel: closing a session failed: ${e}`));
				closing.add(p);
				p.finally(() => closing.delete(p));
			};
			await server.connect(conn.transport);
			await conn.transport.handleRequest(req, res, body);
		} finally {
			release();
		}
	};

	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		const path = new URL(req.url ?? "/", "http://localhost").pathname;
		if (path !== MCP_PATH) throw new HttpError(404, -32000, `Not found: the MCP endpoint is ${MCP_PATH}.`);
		guard.check(req);
		const body = req.method === "POST" ? await readJson(req, maxBody) : undefined;
		const header = req.headers["mcp-session-id"];
		const sid = Array.isArray(header) ? header[0] : header;
		if (sid !== undefined) {
			const conn = table.get(sid);
			if (!conn) throw new HttpError(404, -32001, "Session not found; initialize a new one.");
			if (req.method === "POST") res.once("close", table.begin(sid));
			await conn.transport.handleRequest(req, res, body);
			return;
		}
		if (req.method === "POST" && isInitializeRequest(body)) return open(req, res, body);
		throw new HttpError(400, -32000, "Bad Request: no valid session ID; start with initialize.");
	};

	const http = createServer((req, res) => {
		handle(req, res).catch((e) => {
			if (e instanceof HttpError) replyError(res, e);
			else {
				opts.log(`keel: HTTP request failed: ${(e as Error).stack ?? e}`);
				replyError(res, new HttpError(500, -32603, "Internal server error."));
			}
		});
	});
	await new Promise<void>((resolve, reject) => {
		http.once("error", reject);
		http.listen(opts.port, host, () => {
			http.off("error", reject);
			resolve();
		});
	});
	const port = (http.address() as AddressInfo).port;
	const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}${MCP_PATH}`;
	if (!isLoopback(host))
		opts.log(
			`keel: ${host} is not a loopback address: every request must carry the bearer token (no way to turn it off).`,
		);

	return {
		url,
		port,
		sessionCount: () => table.size,
		async close() {
			const closed = new Promise<void>((r) => http.close(() => r()));
			// SSE streams and keep-alive sockets would hold close() open.
			http.closeAllConnections();
			await Promise.allSettled(table.values().map((c) => c.close()));
			await Promise.allSettled([...closing]);
			await closed;
		},
	};
}
