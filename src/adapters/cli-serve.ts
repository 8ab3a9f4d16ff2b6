/** `keel serve`'s own CLI options (token, sessions, message size, client roots), checked. */
import type { ServeOptions } from "./mcp/serve.js";

export class UsageError extends Error {}

interface Values {
	"token-file"?: string;
	"allow-host"?: string[];
	"max-sessions"?: string;
	"session-idle-timeout"?: string;
	"max-message-mib"?: string;
	"client-roots"?: boolean;
}

/** A positive number option, or undefined when absent. */
function positive(
	values: Values,
	name: "max-sessions" | "session-idle-timeout" | "max-message-mib",
	max: number,
	integer = true,
): number | undefined {
	const raw = values[name];
	if (raw === undefined) return undefined;
	const n = Number(raw);
	if (!(Number.isFinite(n) && n > 0 && n <= max && (!integer || Number.isInteger(n))))
		throw new UsageError(
			`--${name} needs a ${integer ? "whole " : ""}number above 0, at most ${max} (got "${raw}")`,
		);
	return n;
}

export function serveOptions(values: Values, command: string): ServeOptions {
	const serveOnly = [
		"token-file",
		"allow-host",
		"max-sessions",
		"session-idle-timeout",
		"max-message-mib",
		"client-roots",
	] as const;
	const given = serveOnly.find((k) => values[k] !== undefined);
	if (given && command !== "serve") throw new UsageError(`--${given} applies to serve only`);
	const idle = positive(values, "session-idle-timeout", 7 * 24 * 3600, false);
	const mib = positive(values, "max-message-mib", 4096);
	return {
		tokenFile: values["token-file"],
		allowedHosts: values["allow-host"],
		maxSessions: positive(values, "max-sessions", 100_000),
		sessionIdleMs: idle === undefined ? undefined : Math.round(idle * 1000),
		maxMessageBytes: mib === undefined ? undefined : mib * 1024 * 1024,
		clientRoots: values["client-roots"] ? "always" : undefined,
	};
}
