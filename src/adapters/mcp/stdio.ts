/** `keel serve` over stdio: one MCP connection, one keel session, for the life of the process. */
import { once } from "node:events";
import type { Readable, Writable } from "node:stream";
import type { SessionOptions } from "../../session.js";
import { createMcpServer, type McpServerOptions } from "./server.js";
import { type ClientRootsPolicy, LazySession } from "./sessions.js";
import { LimitedStdioTransport } from "./stdio-transport.js";

export interface StdioOptions {
	stdin: Readable;
	stdout: Writable;
	log: (line: string) => void;
	/** Aborted on SIGINT/SIGTERM. */
	stop: AbortSignal;
	/** Longest JSON-RPC message read from stdin (default 64 MiB). */
	maxMessageBytes?: number;
	clientRoots?: ClientRootsPolicy;
	server?: Omit<McpServerOptions, "log">;
}

/** Serves until stdin ends, the transport closes, or `stop` aborts; then closes the session. */
export async function serveStdio(base: SessionOptions, io: StdioOptions): Promise<void> {
	const provider = new LazySession(base, io.log, io.clientRoots);
	const server = createMcpServer(provider, { ...io.server, log: io.log });
	const transport = new LimitedStdioTransport(io.stdin, io.stdout, io.maxMessageBytes);
	const done = new AbortController();
	const finish = () => done.abort();
	io.stdin.once("end", finish);
	io.stdin.once("close", finish);
	io.stop.addEventListener("abort", finish, { once: true });
	server.onclose = finish;
	if (io.stop.aborted) finish();
	try {
		await server.connect(transport);
		if (!done.signal.aborted) await once(done.signal, "abort");
	} finally {
		io.stdin.off("end", finish);
		io.stdin.off("close", finish);
		io.stop.removeEventListener("abort", finish);
		// Aborts in-flight handlers' signals; the session then waits (bounded) for them to settle.
		await server.close();
		await provider.close();
	}
}
