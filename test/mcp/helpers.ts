/**
 * Shared pieces of the MCP suites: temp trees, the official SDK client over stdio (spawning
 * test/mcp/launcher.mjs, i.e. runServe from the build) and over Streamable HTTP, and result helpers.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const LAUNCHER = join(REPO, "test", "mcp", "launcher.mjs");
export const BUILT = existsSync(join(REPO, "dist", "adapters", "mcp", "index.js"));
export const NOT_BUILT = "needs the build (npm run build): the launcher imports dist/adapters/mcp";

/** A 1x1 PNG. */
export const PNG_1x1 = Buffer.from(
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
	"base64",
);

/** A fresh directory (canonical path) with `files` in it. */
export async function makeDir(prefix: string, files: Record<string, string | Buffer> = {}): Promise<string> {
	const dir = await realpath(await mkdtemp(join(tmpdir(), `keel-mcp-${prefix}-`)));
	for (const [rel, body] of Object.entries(files)) {
		await mkdir(dirname(join(dir, rel)), { recursive: true });
		await writeFile(join(dir, rel), body);
	}
	return dir;
}

export const removeDir = (dir: string) => rm(dir, { recursive: true, force: true });

export interface ClientOptions {
	/** file:// roots the client offers (declares the roots capability). */
	roots?: string[];
	/** Raw root URIs, for non-file roots. */
	rootUris?: string[];
}

function newClient(opts: ClientOptions): Client {
	const uris = [...(opts.roots ?? []).map((d) => pathToFileURL(d).href), ...(opts.rootUris ?? [])];
	const offersRoots = opts.roots !== undefined || opts.rootUris !== undefined;
	const client = new Client(
		{ name: "keel-mcp-test", version: "0.0.0" },
		{ capabilities: offersRoots ? { roots: { listChanged: true } } : {} },
	);
	if (offersRoots) {
		client.setRequestHandler(ListRootsRequestSchema, async () => ({
			roots: uris.map((uri, i) => ({ uri, name: `root ${i}` })),
		}));
	}
	return client;
}

export interface StdioConnection {
	client: Client;
	stderr: () => string;
	close(): Promise<void>;
}

/** The SDK client over stdio, spawning `command args` (default: the launcher). */
export async function connectStdio(
	serverArgs: string[],
	opts: ClientOptions & { command?: string[] } = {},
): Promise<StdioConnection> {
	const [cmd, ...pre] = opts.command ?? [process.execPath, LAUNCHER];
	const transport = new StdioClientTransport({ command: cmd, args: [...pre, ...serverArgs], stderr: "pipe" });
	let err = "";
	transport.stderr?.on("data", (d: Buffer) => {
		err += d.toString("utf8");
	});
	const client = newClient(opts);
	await client.connect(transport);
	return { client, stderr: () => err, close: () => client.close() };
}

export interface HttpConnection {
	client: Client;
	transport: StreamableHTTPClientTransport;
	close(): Promise<void>;
}

/** The token the in-process HTTP servers of the tests are started with. */
export const TEST_TOKEN = "keel-test-token-0123456789abcdef";

/** The SDK client over Streamable HTTP, sending `token` as a bearer token (null: no header). */
export async function connectHttp(
	url: string,
	opts: ClientOptions & { token?: string | null } = {},
): Promise<HttpConnection> {
	const token = opts.token === undefined ? TEST_TOKEN : opts.token;
	const transport = new StreamableHTTPClientTransport(new URL(url), {
		requestInit: token === null ? {} : { headers: { authorization: `Bearer ${token}` } },
	});
	const client = newClient(opts);
	await client.connect(transport);
	return { client, transport, close: () => client.close() };
}

export type Result = CallToolResult;

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Result> {
	return (await client.callTool({ name, arguments: args })) as Result;
}

export function textOf(r: Result): string {
	return r.content
		.filter((c) => c.type === "text")
		.map((c) => (c as { text: string }).text)
		.join("\n");
}

/** A successful result, with its text. */
export function expectOk(r: Result): string {
	expect(r.isError ?? false, `expected success, got ${textOf(r)}`).toBe(false);
	expect(r._meta?.["keel/elapsedMs"]).toEqual(expect.any(Number));
	return textOf(r);
}

/** An isError result with `code` in the text and in structuredContent.error. */
export function expectCode(r: Result, code: string): { code: string; message: string; retry: string } {
	expect(r.isError, `expected ${code}, got success: ${textOf(r).slice(0, 300)}`).toBe(true);
	expect(textOf(r).startsWith(`[${code}] `), textOf(r)).toBe(true);
	const error = (r.structuredContent as { error: { code: string; message: string; retry: string } }).error;
	expect(error.code).toBe(code);
	expect(error.message.length).toBeGreaterThan(0);
	expect(["retry", "change-approach", "retarget"]).toContain(error.retry);
	return error;
}
