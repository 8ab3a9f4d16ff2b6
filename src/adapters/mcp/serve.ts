/**
 * `keel serve [options] [--http PORT]`: stdio by default, Streamable HTTP on 127.0.0.1:PORT/mcp with
 * --http. Resolves with an exit code once the client goes away (stdin ends) or on SIGINT/SIGTERM:
 * 0 after a clean shutdown, 1 when the port cannot be bound, 2 for unusable options.
 */
import { resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import type { Backend } from "../../backend/types.js";
import { QueueRegistry } from "../../safety/mutation-queue.js";
import { Session, type SessionOptions } from "../../session.js";
import type { HttpHandle } from "./http.js";
import { serveStdio } from "./stdio.js";

export interface ServeOptions {
	/** Serve Streamable HTTP on this port (0: any free port) instead of stdio. */
	http?: number;
	/** Interface to bind for --http (default 127.0.0.1). */
	host?: string;
}

export interface ServeIO {
	/** Diagnostics, one line each (default: process.stderr). */
	stderr?: (line: string) => void;
	/** The stdio transport's streams (default: process.stdin/stdout). */
	stdin?: Readable;
	stdout?: Writable;
	/** Stops the server like SIGINT does (for embedding and tests). */
	signal?: AbortSignal;
	/** Called with the HTTP endpoint once it listens. */
	onListening?: (url: string) => void;
}

/** The caller's backend, shared by every session: a session closing must not close it. */
function borrowed(backend: Backend): Backend {
	return {
		kind: backend.kind,
		fs: backend.fs,
		exec: backend.exec,
		search: backend.search,
		close: async () => {},
	};
}

export async function runServe(
	sessionOptions: SessionOptions,
	opts: ServeOptions = {},
	io: ServeIO = {},
): Promise<number> {
	const log = io.stderr ?? ((line: string) => process.stderr.write(`${line}\n`));
	if (opts.http !== undefined && !(Number.isInteger(opts.http) && opts.http >= 0 && opts.http <= 65535)) {
		log(`keel: --http needs a port number from 0 to 65535 (got ${opts.http})`);
		return 2;
	}
	const owned = sessionOptions.backend;
	// One queue registry for every connection: sessions on one workspace share its per-file queue.
	const shared: SessionOptions = { queues: new QueueRegistry(), ...sessionOptions };
	const base: SessionOptions = owned ? { ...shared, backend: borrowed(owned) } : shared;
	// Fail now, not at the first tool call, when the roots are unusable.
	try {
		await (await Session.create(base)).close();
	} catch (e) {
		log(`keel: ${(e as Error).message}`);
		await owned?.close();
		return 2;
	}
	const stop = new AbortController();
	const onSignal = () => stop.abort();
	process.once("SIGINT", onSignal);
	process.once("SIGTERM", onSignal);
	io.signal?.addEventListener("abort", onSignal, { once: true });
	if (io.signal?.aborted) stop.abort();
	const where = `workspace ${resolve(base.root ?? process.cwd())}, profile ${base.profile ?? "pi"}`;
	try {
		if (opts.http === undefined) {
			log(`keel: MCP server on stdio (${where})`);
			await serveStdio(base, {
				stdin: io.stdin ?? process.stdin,
				stdout: io.stdout ?? process.stdout,
				log,
				stop: stop.signal,
			});
			return 0;
		}
		// Loaded only for --http: the HTTP transport pulls in more of the SDK.
		const { startHttp } = await import("./http.js");
		let handle: HttpHandle;
		try {
			handle = await startHttp(base, { port: opts.http, host: opts.host, log });
		} catch (e) {
			log(`keel: cannot listen on ${opts.host ?? "127.0.0.1"}:${opts.http}: ${(e as Error).message}`);
			return 1;
		}
		log(`keel: MCP server listening on ${handle.url} (${where})`);
		io.onListening?.(handle.url);
		if (!stop.signal.aborted) {
			await new Promise((r) => stop.signal.addEventListener("abort", r, { once: true }));
		}
		await handle.close();
		return 0;
	} finally {
		process.off("SIGINT", onSignal);
		process.off("SIGTERM", onSignal);
		io.signal?.removeEventListener("abort", onSignal);
		await owned?.close();
	}
}
