/**
 * `keel serve --http PORT`: Streamable HTTP at /mcp with MCP session management. Each `initialize`
 * opens a new transport, SDK server and keel session; the keel session closes with its transport
 * (DELETE, or shutdown). Bound to 127.0.0.1 by default; on a loopback address the Host and Origin
 * headers must name a loopback host too, so a web page cannot reach the tools by DNS rebinding.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { SessionOptions } from "../../session.js";
import { createMcpServer } from "./server.js";
import { LazySession } from "./sessions.js";

export const MCP_PATH = "/mcp";
export const DEFAULT_HOST = "127.0.0.1";
/** POST bodies above this are refused (413): a write payload travels in the body. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Open MCP sessions kept at most; past it the least recently used one is closed (its client re-initializes). */
export const MAX_SESSIONS = 64;

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

export interface HttpServeOptions {
	/** 0 picks a free port; the handle says which. */
	port: number;
	host?: string;
	log: (line: string) => void;
	maxBodyBytes?: number;
	maxSessions?: number;
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

class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly rpcCode: number,
		message: string,
	) {
		super(message);
	}
}

function isLoopback(host: string): boolean {
	return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function hostnameOf(value: string, withScheme: boolean): string | undefined {
	try {
		return new URL(withScheme ? value : `http://${value}`).hostname;
	} catch {
		return undefined;
	}
}

/** DNS-rebinding guard for a loopback listener. */
function checkHeaders(req: IncomingMessage): void {
	const host = hostnameOf(req.headers.host ?? "", false);
	if (!host || !LOOPBACK_NAMES.has(host))
		throw new HttpError(403, -32000, "Forbidden: Host is not loopback.");
	const origin = req.headers.origin;
	if (origin !== undefined && !LOOPBACK_NAMES.has(hostnameOf(origin, true) ?? "")) {
		throw new HttpError(403, -32000, "Forbidden: Origin is not loopback.");
	}
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

function replyError(res: ServerResponse, status: number, code: number, message: string): void {
	if (res.headersSent) {
		res.end();
		return;
	}
	res.writeHead(status, { "content-type": "application/json", connection: "close" });
	res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

export async function startHttp(base: SessionOptions, opts: HttpServeOptions): Promise<HttpHandle> {
	const host = opts.host ?? DEFAULT_HOST;
	const loopback = isLoopback(host);
	const maxBody = opts.maxBodyBytes ?? MAX_BODY_BYTES;
	const maxSessions = opts.maxSessions ?? MAX_SESSIONS;
	// Insertion order is recency order: a request moves its session to the end.
	const connections = new Map<string, Connection>();
	const closing = new Set<Promise<void>>();

	const open = async (req: IncomingMessage, res: ServerResponse, body: unknown) => {
		const provider = new LazySession(base, opts.log);
		const server = createMcpServer(provider, { log: opts.log });
		const transport = new StreamableHTTPServerTransport({
			sessionIdGenerator: () => randomUUID(),
			onsessioninitialized: (id) => {
				connections.set(id, conn);
				if (connections.size <= maxSessions) return;
				const [oldestId, oldest] = connections.entries().next().value as [string, Connection];
				connections.delete(oldestId);
				opts.log(`keel: more than ${maxSessions} MCP sessions; closing the least recently used.`);
				oldest.close().catch(() => {});
			},
		});
		const conn: Connection = {
			transport,
			close: async () => {
				await server.close();
				await provider.close();
			},
		};
		// DELETE, a transport failure or shutdown: forget the MCP session and close the keel session.
		server.onclose = () => {
			if (transport.sessionId) connections.delete(transport.sessionId);
			const p = provider.close().catch((e) => opts.log(`keel: closing a session failed: ${e}`));
			closing.add(p);
			p.finally(() => closing.delete(p));
		};
		await server.connect(transport);
		await transport.handleRequest(req, res, body);
	};

	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		const path = new URL(req.url ?? "/", "http://localhost").pathname;
		if (path !== MCP_PATH) throw new HttpError(404, -32000, `Not found: the MCP endpoint is ${MCP_PATH}.`);
		if (loopback) checkHeaders(req);
		const body = req.method === "POST" ? await readJson(req, maxBody) : undefined;
		const header = req.headers["mcp-session-id"];
		const sid = Array.isArray(header) ? header[0] : header;
		if (sid !== undefined) {
			const conn = connections.get(sid);
			if (!conn) throw new HttpError(404, -32001, "Session not found; initialize a new one.");
			connections.delete(sid);
			connections.set(sid, conn);
			await conn.transport.handleRequest(req, res, body);
			return;
		}
		if (req.method === "POST" && isInitializeRequest(body)) return open(req, res, body);
		throw new HttpError(400, -32000, "Bad Request: no valid session ID; start with initialize.");
	};

	const http = createServer((req, res) => {
		handle(req, res).catch((e) => {
			if (e instanceof HttpError) replyError(res, e.status, e.rpcCode, e.message);
			else {
				opts.log(`keel: HTTP request failed: ${(e as Error).stack ?? e}`);
				replyError(res, 500, -32603, "Internal server error.");
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
	if (!loopback)
		opts.log(`keel: warning: ${host} is not a loopback address; anyone who can reach it can run tools.`);

	return {
		url,
		port,
		sessionCount: () => connections.size,
		async close() {
			const closed = new Promise<void>((r) => http.close(() => r()));
			// SSE streams and keep-alive sockets would hold close() open.
			http.closeAllConnections();
			await Promise.allSettled([...connections.values()].map((c) => c.close()));
			await Promise.allSettled([...closing]);
			await closed;
		},
	};
}
