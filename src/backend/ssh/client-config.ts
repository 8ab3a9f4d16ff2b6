/**
 * OpenSSH's client configuration (~/.ssh/config) for the ssh backend: the host, port, user, key
 * files and known_hosts name that `ssh ALIAS` would use. The ssh-config package parses the file
 * (client-config-file.ts reads it); it is evaluated line by line (client-config-eval.ts) the way
 * OpenSSH's readconf.c does (the package's own `compute()` runs `Match exec` commands and
 * nslookup, lets `?` match no character, and skips `Include`), and the values kept are turned
 * into the target here:
 *
 * - `Host` patterns (`*`, `?`, `!negation`, case-sensitive) match the name as given; `Match` with
 *   `all`, `host`, `originalhost`, `user`, `localuser`, `final` and `canonical` (a final pass, as
 *   OpenSSH runs it, with `Host` matched against the HostName); `Include` (globs, `~`, relative to
 *   ~/.ssh, nested up to 16 deep, inside a block only when the block applies).
 * - First obtained value wins; every `IdentityFile` adds a key. Explicit values win over the file.
 * - A `Match` criterion keel cannot decide (`exec` — keel runs no commands from the file —,
 *   `localnetwork`, `tagged`, `version`, ...) makes its block unknown: ignored when it sets nothing
 *   keel uses (or only values already decided); otherwise the connection is refused, naming the line.
 * - Other directives are ignored; ProxyJump/ProxyCommand and CanonicalizeHostName become a note
 *   in connection errors (keel connects directly and does not canonicalize).
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { ConfigEvaluator } from "./client-config-eval.js";
import { type Entry, expandTilde, expandTokens, localUser, where } from "./client-config-file.js";
import { unavailable } from "./errors.js";
import { hostLookupName } from "./known-hosts.js";

export interface SshTargetInput {
	/** The name the caller gave (ssh://NAME/...): what `Host` patterns match. */
	host: string;
	port?: number;
	username?: string;
	/** A key was given explicitly (--identity FILE, privateKey): the file's IdentityFile is unused. */
	explicitKey?: boolean;
	/** known_hosts was given explicitly: the file's UserKnownHostsFile/GlobalKnownHostsFile are unused. */
	knownHostsFile?: string;
	/** Default ~/.ssh/config; false: read none. */
	sshConfigFile?: string | false;
}

export interface SshTarget {
	/** The name as given. */
	alias: string;
	/** Where to connect: the HostName (tokens expanded, lower case), else the name as given. */
	host: string;
	port: number;
	username: string;
	/** IdentityFile values (expanded), in order; empty when none applies or a key was explicit. */
	identityFiles: string[];
	/** known_hosts files to read: explicit, else the file's User/GlobalKnownHostsFile, else defaults. */
	knownHostsFiles: string[];
	/** The name looked up in known_hosts: HostKeyAlias, else `host` (port 22) or `[host]:port`. */
	knownHostsName: string;
	hostKeyAlias?: string;
	/** The configuration file that was read, when one was. */
	configFile?: string;
	/** Where each value keel took from the file came from ("~/.ssh/config line 3"), by option name. */
	from: Record<string, string>;
	/** Directives that apply to this host but keel ignores and that may explain a failure. */
	notes: string[];
}

/** Resolve where and how to connect for `input.host`, from explicit values, the file and defaults. */
export function resolveSshTarget(input: SshTargetInput): SshTarget {
	const local = localUser();
	const ev = new ConfigEvaluator(input, local);
	const configFile =
		input.sshConfigFile === false ? undefined : (input.sshConfigFile ?? join(homedir(), ".ssh", "config"));
	if (configFile) {
		ev.processFile(configFile, true, 0);
		if (ev.wantFinal) {
			// OpenSSH's final pass: Host lines now match the HostName; values already set stay.
			ev.finalPass = true;
			ev.hostForHostLines = ev.currentHost().toLowerCase();
			if (!ev.first.has("hostname")) {
				ev.first.set("hostname", {
					key: "hostname",
					param: "HostName",
					args: [ev.hostForHostLines.replace(/%/g, "%%")],
					file: configFile,
					line: 0,
				});
			}
			ev.processFile(configFile, true, 0);
		}
	}
	const from: Record<string, string> = {};
	const taken = (key: string): Entry | undefined => {
		const e = ev.first.get(key);
		if (e && e.line > 0) from[key] = where(e);
		return e;
	};

	const hostEntry = taken("hostname");
	const host = (
		hostEntry ? expandTokens(hostEntry.args[0], { h: input.host }, hostEntry, false) : input.host
	).toLowerCase();
	if (!host) throw unavailable(`${hostEntry ? where(hostEntry) : "The SSH target"}: the host name is empty.`);

	let port = input.port;
	if (port === undefined) {
		const e = taken("port");
		if (e) {
			port = /^\d+$/.test(e.args[0]) ? Number(e.args[0]) : Number.NaN;
			if (!(port >= 1 && port <= 65535)) throw unavailable(`${where(e)}: bad Port "${e.args.join(" ")}".`);
		}
	}
	port ??= 22;

	const username = input.username ?? taken("user")?.args.join(" ") ?? process.env.USER ?? local;

	const aliasEntry = taken("hostkeyalias");
	const hostKeyAlias = aliasEntry?.args[0];
	const tokens: Record<string, string> = {
		...ev.localTokens(),
		h: host,
		p: String(port),
		r: username,
		k: hostKeyAlias ?? input.host,
	};
	const path = (arg: string, e: Entry) => expandTokens(expandTilde(arg, e), tokens, e);

	// ssh skips a repeated identity (the final pass sees the same lines again).
	const identityFiles = [...new Set(ev.identities.map((e) => path(e.args.join(" "), e)))];
	if (ev.identities.length > 0) from.identityfile = [...new Set(ev.identities.map(where))].join(", ");

	let knownHostsFiles: string[];
	if (input.knownHostsFile) knownHostsFiles = [input.knownHostsFile];
	else {
		const list = (key: string, fallback: string[]) => {
			const e = taken(key);
			if (!e) return fallback;
			return e.args.filter((a) => a.toLowerCase() !== "none").map((a) => path(a, e));
		};
		knownHostsFiles = [
			...list("userknownhostsfile", [join(homedir(), ".ssh", "known_hosts")]),
			...list("globalknownhostsfile", ["/etc/ssh/ssh_known_hosts"]),
		];
	}

	const notes: string[] = [];
	for (const [key, e] of ev.noted) {
		const value = e.args.join(" ");
		if (key === "canonicalizehostname") {
			if (value.toLowerCase() !== "no") {
				notes.push(
					`${where(e)} sets CanonicalizeHostName ${value}, which keel ignores (it resolves ${host} as given)`,
				);
			}
		} else if (value.toLowerCase() !== "none") {
			notes.push(
				`${where(e)} sets ${e.param} ${value}, which keel ignores (it connects to ${host}:${port} directly)`,
			);
		}
	}

	return {
		alias: input.host,
		host,
		port,
		username,
		identityFiles,
		knownHostsFiles,
		knownHostsName: hostKeyAlias ?? hostLookupName(host, port),
		hostKeyAlias,
		configFile: configFile && Object.keys(from).length > 0 ? configFile : undefined,
		from,
		notes,
	};
}
