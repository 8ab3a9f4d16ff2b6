/**
 * ~/.ssh/config evaluated for one host name, line by line as OpenSSH's readconf.c does: which
 * `Host` and `Match` blocks apply, `Include`s followed, the first value of each option kept (every
 * `IdentityFile` added), explicit values winning over the file. client-config.ts turns what it
 * kept into the connection's target; the rules are in its module comment.
 */
import { homedir, hostname as localHostname } from "node:os";
import { isAbsolute, join } from "node:path";
import type { SshTargetInput } from "./client-config.js";
import {
	and,
	type Entry,
	expandTilde,
	expandTokens,
	globFiles,
	hostLineMatches,
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

/** One evaluation of the file (and its Includes) for `input.host`. */
export class ConfigEvaluator {
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
