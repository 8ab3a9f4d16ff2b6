/**
 * OpenSSH's client configuration (~/.ssh/config) for the ssh backend: the host, port, user, key
 * files and known_hosts name that `ssh ALIAS` would use. The ssh-config package parses the file;
 * it is evaluated here line by line the way OpenSSH's readconf.c does (its own `compute()` runs
 * `Match exec` commands and nslookup, lets `?` match no character, and skips `Include`):
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
import { homedir, hostname as localHostname } from "node:os";
import { isAbsolute, join } from "node:path";
import {
	and,
	type Entry,
	expandTilde,
	expandTokens,
	globFiles,
	hostLineMatches,
	localUser,
	MAX_INCLUDE_DEPTH,
	NOTED,
	patternList,
	readEntries,
	readText,
	type Tri,
	USED,
	where,
} from "./client-config-file.js";
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

class Evaluator {
	/** First value per option, with where it came from. */
	readonly first = new Map<string, Entry>();
	readonly identities: Entry[] = [];
	readonly noted = new Map<string, Entry>();
	wantFinal = false;
	finalPass = false;
	/** What `Host` lines match: the name as given, in the final pass the HostName. */
	hostForHostLines: string;

	constructor(
		readonly input: SshTargetInput,
		readonly local: string,
	) {
		this.hostForHostLines = input.host;
	}

	/** The HostName as far as decided (%h expanded), else the name as given: what `Match host` sees. */
	currentHost(): string {
		const e = this.first.get("hostname");
		return e ? expandTokens(e.args[0], { h: this.input.host }, e, false) : this.input.host;
	}

	currentUser(): string {
		return this.input.username ?? this.first.get("user")?.args[0] ?? process.env.USER ?? this.local;
	}

	/** Does an explicit value, or one decided earlier, make this option's line irrelevant? */
	decided(key: string): boolean {
		if (key === "user") return this.input.username !== undefined || this.first.has(key);
		if (key === "port") return this.input.port !== undefined || this.first.has(key);
		if (key === "identityfile") return !!this.input.explicitKey;
		if (key === "userknownhostsfile" || key === "globalknownhostsfile") {
			return this.input.knownHostsFile !== undefined || this.first.has(key);
		}
		return this.first.has(key);
	}

	matchLine(e: Entry): Tri {
		let result: Tri = true;
		const args = e.args;
		if (args.length === 0) throw unavailable(`${where(e)}: Match needs criteria.`);
		for (let i = 0; i < args.length; ) {
			const word = args[i++];
			const negated = word.startsWith("!");
			const kw = (negated ? word.slice(1) : word).toLowerCase();
			let r: Tri;
			if (kw === "all") r = true;
			else if (kw === "canonical" || kw === "final") {
				if (kw === "final") this.wantFinal = true;
				r = this.finalPass;
			} else {
				const arg = args[i++];
				if (arg === undefined) throw unavailable(`${where(e)}: Match ${word} needs an argument.`);
				switch (kw) {
					case "host":
						r = patternList(arg.toLowerCase(), this.currentHost().toLowerCase(), true);
						break;
					case "originalhost":
						r = patternList(arg.toLowerCase(), this.input.host.toLowerCase(), true);
						break;
					case "user":
						r = patternList(arg, this.currentUser(), false);
						break;
					case "localuser":
						r = patternList(arg, this.local, false);
						break;
					default:
						// exec (keel runs no commands from the file), localnetwork, tagged, version, ...
						r = "unknown";
				}
			}
			if (negated && r !== "unknown") r = !r;
			result = and(result, r);
		}
		return result;
	}

	apply(e: Entry, active: Tri, section: Entry | undefined): void {
		if (NOTED.has(e.key)) {
			if (active === true && !this.noted.has(e.key)) this.noted.set(e.key, e);
			return;
		}
		if (!USED.has(e.key)) return;
		if (e.args.length === 0) throw unavailable(`${where(e)}: ${e.param} needs a value.`);
		if (this.decided(e.key)) return;
		if (active === "unknown") {
			const block = section ? `"${section.param} ${section.args.join(" ")}" (${where(section)})` : "a block";
			throw unavailable(
				`${where(e)}: ${e.param} is set inside ${block}, which keel cannot evaluate (it runs no commands from the configuration and does not evaluate localnetwork, tagged or version), so it cannot tell where ssh would connect. Give the value explicitly (ssh://user@host:port/path, --identity FILE) or move it into a Host block.`,
			);
		}
		if (e.key === "identityfile") this.identities.push(e);
		else this.first.set(e.key, e);
	}

	processFile(file: string, parent: Tri, depth: number): void {
		const text = readText(file);
		if (text === undefined) return;
		let active: Tri = parent;
		let section: Entry | undefined;
		for (const e of readEntries(text, file)) {
			if (e.key === "host") {
				if (e.args.length === 0) throw unavailable(`${where(e)}: Host needs a pattern.`);
				section = e;
				active = and(parent, hostLineMatches(e.args, this.hostForHostLines));
			} else if (e.key === "match") {
				section = e;
				active = and(parent, this.matchLine(e));
			} else if (active === false) {
				// not for this host
			} else if (e.key === "include") {
				this.include(e, active, depth);
			} else {
				this.apply(e, active, section);
			}
		}
	}

	include(e: Entry, active: Tri, depth: number): void {
		if (depth + 1 > MAX_INCLUDE_DEPTH) {
			throw unavailable(`${where(e)}: Include nested more than ${MAX_INCLUDE_DEPTH} deep.`);
		}
		const tokens = this.localTokens();
		for (const arg of e.args) {
			let path = expandTokens(expandTilde(arg, e), tokens, e);
			if (!isAbsolute(path)) path = join(homedir(), ".ssh", path);
			for (const f of globFiles(path)) this.processFile(f, active, depth + 1);
		}
	}

	localTokens(): Record<string, string> {
		const full = localHostname();
		return {
			d: homedir(),
			u: this.local,
			i: String(process.getuid?.() ?? ""),
			l: full,
			L: full.split(".")[0],
			n: this.input.host,
		};
	}
}

/** Resolve where and how to connect for `input.host`, from explicit values, the file and defaults. */
export function resolveSshTarget(input: SshTargetInput): SshTarget {
	const local = localUser();
	const ev = new Evaluator(input, local);
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
