/**
 * ~/.ssh/config read as OpenSSH reads it, before any evaluation (client-config-eval.ts
 * evaluates): the directives of one file with their line numbers (the ssh-config package parses),
 * OpenSSH's pattern matching for \`Host\` and \`Match\`, \`~\`, \`\${VAR}\` and \`%x\` expansion,
 * and glob(3) for \`Include\`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import { type Line, LineType, parse } from "ssh-config";
import { unavailable } from "./errors.js";

/** One directive with where it is. */
export interface Entry {
	/** Lower case option name. */
	key: string;
	param: string;
	args: string[];
	file: string;
	line: number;
}

export const MAX_INCLUDE_DEPTH = 16;

/** Options keel takes from the file; the first value wins (IdentityFile accumulates). */
export const USED = new Set([
	"hostname",
	"user",
	"port",
	"identityfile",
	"hostkeyalias",
	"userknownhostsfile",
	"globalknownhostsfile",
]);
/** Options keel does not honour but names when a connection fails. */
export const NOTED = new Set(["proxyjump", "proxycommand", "canonicalizehostname"]);

export type Tri = boolean | "unknown";
export const and = (a: Tri, b: Tri): Tri =>
	a === false || b === false ? false : a === true && b === true ? true : "unknown";

export function where(e: Entry): string {
	return `${e.file} line ${e.line}`;
}

/** OpenSSH's match_pattern: `*` and `?` wildcards over the whole string. */
export function wildcard(pattern: string, text: string, ignoreCase: boolean): boolean {
	const re = pattern
		.replace(/[.+^${}()|[\]\\]/g, "\\$&")
		.replace(/\*/g, ".*")
		.replace(/\?/g, ".");
	return new RegExp(`^${re}$`, ignoreCase ? "is" : "s").test(text);
}

/** OpenSSH's match_pattern_list: a comma list; a matching `!pattern` wins over any match. */
export function patternList(list: string, text: string, ignoreCase: boolean): boolean {
	let positive = false;
	for (const raw of list.split(",")) {
		const negated = raw.startsWith("!");
		if (!wildcard(negated ? raw.slice(1) : raw, text, ignoreCase)) continue;
		if (negated) return false;
		positive = true;
	}
	return positive;
}

/** A `Host` line: each argument one pattern (commas are not lists here); `!` excludes. */
export function hostLineMatches(patterns: string[], host: string): boolean {
	let positive = false;
	for (const p of patterns) {
		const negated = p.startsWith("!");
		if (!wildcard(negated ? p.slice(1) : p, host, false)) continue;
		if (negated) return false;
		positive = true;
	}
	return positive;
}

export function lineCount(s: string): number {
	return s.match(/\r\n|\r|\n/g)?.length ?? 0;
}

/** The directives of one file in order, with line numbers; BACKEND_UNAVAILABLE when it does not parse. */
export function readEntries(text: string, file: string): Entry[] {
	let parsed: Line[];
	try {
		parsed = parse(text);
	} catch (e) {
		// The parser does not say where: lines parse independently, so find the first that fails.
		const lines = text.split(/\r\n|\r|\n/);
		let at = 0;
		for (let i = 0; i < lines.length && at === 0; i++) {
			try {
				parse(lines[i]);
			} catch {
				at = i + 1;
			}
		}
		throw unavailable(
			`The SSH client configuration ${file} cannot be parsed${at ? ` at line ${at}` : ""} (${(e as Error).message}); fix that line (keel reads the file as ssh does, for the host names it connects to).`,
			e,
		);
	}
	const out: Entry[] = [];
	let line = 1;
	const walk = (lines: Line[]) => {
		for (const l of lines) {
			line += lineCount(l.before);
			if (l.type === LineType.DIRECTIVE && l.param) {
				const args = Array.isArray(l.value) ? l.value.map((v) => v.val) : l.value === "" ? [] : [l.value];
				out.push({ key: l.param.toLowerCase(), param: l.param, args, file, line });
			}
			line += lineCount(l.after);
			if ("config" in l) walk(l.config);
		}
	};
	walk(parsed);
	return out;
}

export function readText(file: string): string | undefined {
	try {
		return readFileSync(file, "utf8");
	} catch {
		return undefined; // missing or unreadable: no configuration (as ssh)
	}
}

export function localUser(): string {
	try {
		return userInfo().username;
	} catch {
		return process.env.USER ?? "root";
	}
}

/** `~` and `~/...` (and `~me/...` for the local user) → the home directory. */
export function expandTilde(path: string, e: Entry): string {
	if (!path.startsWith("~")) return path;
	const slash = path.indexOf("/");
	const user = path.slice(1, slash === -1 ? undefined : slash);
	if (user && user !== localUser()) {
		throw unavailable(`${where(e)}: ${e.param} ${path}: keel expands ~ only for the local user.`);
	}
	return homedir() + (slash === -1 ? "" : path.slice(slash));
}

/** `${VAR}` from the environment (unless `env` is false), then `%x` tokens (`%%` is `%`). */
export function expandTokens(value: string, tokens: Record<string, string>, e: Entry, env = true): string {
	if (!env) return expandPercent(value, tokens, e);
	const withEnv = value.replace(/\$\{([^}]*)\}/g, (_, name: string) => {
		const v = process.env[name];
		if (v === undefined) throw unavailable(`${where(e)}: ${e.param} uses \${${name}}, which is not set.`);
		return v;
	});
	return expandPercent(withEnv, tokens, e);
}

export function expandPercent(value: string, tokens: Record<string, string>, e: Entry): string {
	return value.replace(/%(.?)/gs, (_, c: string) => {
		if (c === "%") return "%";
		if (c && Object.hasOwn(tokens, c)) return tokens[c];
		const known = Object.keys(tokens)
			.map((k) => `%${k}`)
			.join(" ");
		throw unavailable(
			`${where(e)}: ${e.param} uses %${c}, which keel does not expand there (it expands ${known} and %%).`,
		);
	});
}

/** glob(3) for Include: `*`, `?` and `[...]` in any component; sorted; dot files only when asked. */
export function globFiles(pattern: string): string[] {
	if (!/[*?[]/.test(pattern)) return [pattern];
	let paths = ["/"];
	for (const seg of pattern.split("/").filter(Boolean)) {
		if (!/[*?[]/.test(seg)) {
			paths = paths.map((p) => join(p, seg));
			continue;
		}
		let re: RegExp;
		try {
			re = new RegExp(
				`^${seg
					.replace(/[.+^${}()|\\]/g, "\\$&")
					.replace(/\*/g, "[^/]*")
					.replace(/\?/g, "[^/]")
					.replace(/\[!/g, "[^")}$`,
				"s",
			);
		} catch {
			return []; // an unbalanced [ matches nothing
		}
		const next: string[] = [];
		for (const p of paths) {
			let names: string[];
			try {
				names = readdirSync(p);
			} catch {
				continue;
			}
			for (const n of names)
				if (re.test(n) && (seg.startsWith(".") || !n.startsWith("."))) next.push(join(p, n));
		}
		paths = next;
	}
	return paths.sort();
}
