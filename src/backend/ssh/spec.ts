/**
 * `ssh://user@host:port/path` → connection fields and the remote workspace root (for the CLI). The
 * host may be a ~/.ssh/config alias; user and port are optional there.
 */
import { KeelError } from "../../boundary/errors.js";

/** A parsed `ssh://user@host[:port]/path` backend spec. */
export interface SshSpec {
	/** Undefined when the spec names no user (then ~/.ssh/config's User, else the local user name). */
	username?: string;
	host: string;
	port: number;
	/** Absolute remote path, or undefined when the spec has none (use the remote home). */
	root?: string;
}

/** The spec as written: `port` is undefined when it names none (the ssh config file, then 22, decides). */
export type SshSpecAsWritten = Omit<SshSpec, "port"> & { port?: number };

/** `port` 22 when the spec names none. */
export function parseSshSpec(spec: string): SshSpec {
	const s = parseSshSpecAsWritten(spec);
	return { ...s, port: s.port ?? 22 };
}

export function parseSshSpecAsWritten(spec: string): SshSpecAsWritten {
	const bad = (why: string) =>
		new KeelError("INVALID_ARGS", `Invalid SSH backend "${spec}": ${why}; use ssh://user@host[:port]/path.`);
	let url: URL;
	try {
		url = new URL(spec);
	} catch {
		throw bad("not a URL");
	}
	if (url.protocol !== "ssh:") throw bad("the scheme must be ssh://");
	if (url.password) throw bad("passwords are not accepted (use a key or ssh-agent)");
	if (url.search || url.hash) throw bad("no query or fragment is allowed");
	const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
	if (!host) throw bad("the host is missing");
	const port = url.port ? Number(url.port) : undefined;
	const path = decodeURIComponent(url.pathname);
	if (path.includes("\0")) throw bad("the path contains a NUL byte");
	return {
		username: url.username ? decodeURIComponent(url.username) : undefined,
		host,
		port,
		root: path === "" ? undefined : path.replace(/(.)\/+$/, "$1"),
	};
}
