/**
 * Who may knock on the HTTP server: the Host and Origin headers must name this server (a web page
 * reached by DNS rebinding sends its own name), and the request must carry the bearer token. Both
 * hold on every address; a non-loopback listener accepts the names it is reachable by.
 */
import type { IncomingMessage } from "node:http";
import { hostname, networkInterfaces } from "node:os";
import type { BearerCheck } from "./auth.js";

export class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly rpcCode: number,
		message: string,
		readonly headers: Record<string, string> = {},
	) {
		super(message);
	}
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

export function isLoopback(host: string): boolean {
	return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

const bracketed = (address: string) => (address.includes(":") ? `[${address}]` : address);

/** The host names (as URL.hostname spells them) a request to a server bound on `bind` may carry. */
export function allowedHostNames(bind: string, extra: readonly string[] = []): Set<string> {
	const names = new Set([...LOOPBACK_NAMES, ...extra.map((h) => h.toLowerCase())]);
	if (bind === "0.0.0.0" || bind === "::") {
		for (const list of Object.values(networkInterfaces()))
			for (const a of list ?? []) names.add(bracketed(a.address.split("%")[0]).toLowerCase());
		names.add(hostname().toLowerCase());
	} else names.add(bracketed(bind).toLowerCase());
	return names;
}

function hostnameOf(value: string, withScheme: boolean): string | undefined {
	try {
		return new URL(withScheme ? value : `http://${value}`).hostname;
	} catch {
		return undefined;
	}
}

export class RequestGuard {
	constructor(
		private readonly hosts: Set<string>,
		private readonly bearer: BearerCheck,
	) {}

	/** Throws the HTTP refusal; checked before the body is read or anything is started. */
	check(req: IncomingMessage): void {
		const host = hostnameOf(req.headers.host ?? "", false);
		if (!host || !this.hosts.has(host))
			throw new HttpError(403, -32000, "Forbidden: the Host header does not name this server.");
		const origin = req.headers.origin;
		if (origin !== undefined && !this.hosts.has(hostnameOf(origin, true) ?? ""))
			throw new HttpError(403, -32000, "Forbidden: the Origin header does not name this server.");
		if (!this.bearer.accepts(req))
			throw new HttpError(
				401,
				-32001,
				"Unauthorized: send the server's token as 'Authorization: Bearer TOKEN' (keel serve names the token file on stderr).",
				{ "www-authenticate": 'Bearer realm="keel"' },
			);
	}
}
