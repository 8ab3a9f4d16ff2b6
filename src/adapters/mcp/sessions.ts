/**
 * Where an MCP connection's tool calls run. One connection is one keel session.
 *
 * A Session's roots are fixed when it is created, and the client's roots are only known after the
 * handshake, so `LazySession` creates the session on the first tool call: it asks the client for its
 * roots then (if the client declared the roots capability) and opens the session on them. Listing the
 * tools needs no session. Explicit configuration wins: the client's roots are asked for only when the
 * server was given no --root and no --allow (policy "unless-configured"), or always with
 * --client-roots ("always"); the log names the roots in force when the session opens. Later `roots/list_changed` notifications do not move an open session: its
 * read state and mutation queue are tied to its roots; the client reconnects to change them.
 */

import { resolve } from "node:path";
import type { Root } from "@modelcontextprotocol/sdk/types.js";
import { KeelError } from "../../boundary/errors.js";
import { fromSystemError } from "../../boundary/system-errors.js";
import { type CallOptions, type CallResult, Session, type SessionOptions } from "../../session.js";
import { paletteFor } from "../../session-options.js";
import type { ToolDefinition } from "../../tools/types.js";
import { clientRootsApply, optionsWithRoots } from "./roots.js";

/** What the server knows about the client, for one call. */
export interface ClientPeer {
	supportsRoots: boolean;
	listRoots(): Promise<Root[]>;
}

export interface SessionProvider {
	readonly tools: ToolDefinition[];
	call(name: string, args: unknown, opts: CallOptions, peer: ClientPeer): Promise<CallResult>;
	/** The client said its roots changed. */
	rootsChanged?(): void;
}

/** When the client's roots replace the server's: "unless-configured" (the default), "always", "never". */
export type ClientRootsPolicy = "unless-configured" | "always" | "never";

export function rootsConfigured(base: SessionOptions): boolean {
	return base.root !== undefined || (base.allow?.length ?? 0) > 0;
}

function describeRoots(o: SessionOptions): string {
	const root = resolve(o.root ?? process.cwd());
	const parts = [`workspace ${root}`];
	if (o.allow?.length) parts.push(`read-write ${o.allow.map((p) => resolve(root, p)).join(", ")}`);
	if (o.allowRead?.length) parts.push(`read-only ${o.allowRead.map((p) => resolve(root, p)).join(", ")}`);
	return parts.join("; ");
}

/** A session the caller created and will close. */
export function fixedSession(session: Session): SessionProvider {
	return { tools: session.tools, call: (name, args, opts) => session.call(name, args, opts) };
}

/** How long in-flight calls get to finish after close() before the session closes anyway. */
const DRAIN_MS = 5000;

export class LazySession implements SessionProvider {
	readonly tools: ToolDefinition[];
	private opening?: Promise<Session>;
	private readonly inflight = new Set<Promise<unknown>>();
	private closing?: Promise<void>;

	constructor(
		private readonly base: SessionOptions,
		private readonly log: (line: string) => void = () => {},
		private readonly clientRoots: ClientRootsPolicy = "unless-configured",
	) {
		// The palette Session.create builds, without opening a session (bad options throw here).
		this.tools = paletteFor(base);
	}

	async call(name: string, args: unknown, opts: CallOptions, peer: ClientPeer): Promise<CallResult> {
		const started = performance.now();
		let session: Session;
		try {
			session = await this.session(peer);
		} catch (e) {
			const err = e instanceof KeelError ? e : fromSystemError(e);
			return {
				ok: false,
				error: err.toJSON(),
				elapsedMs: Math.round((performance.now() - started) * 10) / 10,
			};
		}
		const p = session.call(name, args, opts);
		this.inflight.add(p);
		try {
			return await p;
		} finally {
			this.inflight.delete(p);
		}
	}

	rootsChanged(): void {
		if (this.opening)
			this.log("keel: the client's roots changed; this connection keeps its roots (reconnect to apply).");
	}

	/** Waits (bounded) for running calls, then closes the session. */
	close(): Promise<void> {
		this.closing ??= this.drainAndClose();
		return this.closing;
	}

	private async drainAndClose(): Promise<void> {
		let timer: NodeJS.Timeout | undefined;
		const drained = Promise.allSettled([...this.inflight]);
		const timeout = new Promise<void>((r) => {
			timer = setTimeout(r, DRAIN_MS);
		});
		await Promise.race([drained, timeout]);
		clearTimeout(timer);
		const session = await this.opening?.catch(() => undefined);
		await session?.close();
	}

	private session(peer: ClientPeer): Promise<Session> {
		if (this.closing) {
			return Promise.reject(new KeelError("BACKEND_UNAVAILABLE", "This MCP connection is closing."));
		}
		if (!this.opening) {
			// A failed open (e.g. a root that vanished) is not cached: the next call tries again.
			this.opening = this.open(peer).catch((e) => {
				this.opening = undefined;
				throw e;
			});
		}
		return this.opening;
	}

	private async open(peer: ClientPeer): Promise<Session> {
		let opts = this.base;
		let from = rootsConfigured(this.base) ? "the server's options" : "the server's working directory";
		const wanted =
			this.clientRoots === "always" ||
			(this.clientRoots === "unless-configured" && !rootsConfigured(this.base));
		if (wanted && peer.supportsRoots && clientRootsApply(this.base)) {
			try {
				const withRoots = await optionsWithRoots(this.base, await peer.listRoots());
				if (withRoots) {
					opts = withRoots;
					from = "the client's roots";
				} else from += " (the client offered no usable file:// root)";
			} catch (e) {
				from += ` (could not list the client's roots: ${(e as Error).message})`;
			}
		} else if (peer.supportsRoots && !wanted)
			from += "; the client's roots are not used (--client-roots uses them)";
		const session = await Session.create(opts);
		this.log(`keel: session roots: ${describeRoots(opts)} (from ${from})`);
		return session;
	}
}
