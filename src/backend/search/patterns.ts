/** Grep regexes and glob patterns, compiled as rg and fd read them. */
import picomatch from "picomatch";
import { KeelError } from "../../boundary/errors.js";
import type { GrepRequest } from "../types.js";

export function invalidPattern(what: string, pattern: string, why: string): KeelError {
	return new KeelError("INVALID_PATTERN", `Invalid ${what} ${JSON.stringify(pattern)}: ${why}`, {
		details: { pattern },
	});
}

/** Whether a regex has a "\\n" escape outside a character class (rg rejects those). */
function hasNewlineEscape(pattern: string): boolean {
	let inClass = false;
	for (let i = 0; i < pattern.length; i++) {
		const c = pattern[i];
		if (c === "\\") {
			if (pattern[i + 1] === "n" && !inClass) return true;
			i++;
		} else if (c === "[") {
			inClass = true;
		} else if (c === "]") {
			inClass = false;
		}
	}
	return false;
}

/** Regex pattern → JS RegExp, pragmatically close to Rust regex as rg runs it line by line. */
export function compileGrepRegExp(req: Pick<GrepRequest, "pattern" | "literal" | "ignoreCase">): RegExp {
	// rg refuses patterns that could match a line terminator; do the same (a heuristic for "\n").
	if (req.pattern.includes("\n") || (!req.literal && hasNewlineEscape(req.pattern))) {
		throw invalidPattern("regex", req.pattern, 'the literal "\\n" is not allowed in a regex');
	}
	let source = req.literal ? req.pattern.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") : req.pattern;
	let ignoreCase = req.ignoreCase === true;
	if (!req.literal) {
		if (source.startsWith("(?i)")) {
			ignoreCase = true;
			source = source.slice(4);
		}
		source = source.replaceAll("(?P<", "(?<");
	}
	// "s": like Rust regex, "." matches everything but "\n" (lines never contain one).
	const flags = `s${ignoreCase ? "i" : ""}`;
	try {
		return new RegExp(source, `${flags}u`);
	} catch {
		try {
			// Without "u" JS accepts escapes such as "\-" that Rust regex allows.
			return new RegExp(source, flags);
		} catch (e) {
			throw invalidPattern("regex", req.pattern, (e as Error).message);
		}
	}
}

/**
 * Check a glob the way rg/fd's globset does and translate it for picomatch: reject dangling
 * "\", unclosed "[" or "{", nested "{"; rewrite a class negation "[!" to "[^"; escape what is
 * literal to globset but special to picomatch.
 */
function toPicomatchGlob(glob: string): string {
	let out = "";
	let depth = 0;
	for (let i = 0; i < glob.length; i++) {
		const c = glob[i];
		if (c === "\\") {
			if (i + 1 >= glob.length) throw invalidPattern("glob", glob, "dangling '\\'");
			out += c + glob[++i];
		} else if (c === "[") {
			let j = i + 1;
			let cls = "[";
			if (glob[j] === "!" || glob[j] === "^") {
				cls += "^";
				j++;
			}
			// A "]" right after the opening is a literal member.
			if (glob[j] === "]") {
				cls += "\\]";
				j++;
			}
			while (j < glob.length && glob[j] !== "]") {
				cls += glob[j] === "\\" || glob[j] === "[" ? `\\${glob[j]}` : glob[j];
				j++;
			}
			if (j >= glob.length) throw invalidPattern("glob", glob, "unclosed character class");
			out += `${cls}]`;
			i = j;
		} else if (c === "{") {
			if (depth > 0) throw invalidPattern("glob", glob, "nested alternate groups are not allowed");
			depth++;
			out += c;
		} else if (c === "}" && depth > 0) {
			depth--;
			out += c;
		} else if ("}()|+@!".includes(c)) {
			// Literal in globset; special (or potentially special) to picomatch.
			out += `\\${c}`;
		} else {
			out += c;
		}
	}
	if (depth > 0) throw invalidPattern("glob", glob, "unclosed alternate group");
	// globset's "dir/**" matches what is inside dir, not dir itself; picomatch's matches both.
	return out.endsWith("/**") ? `${out}/*` : out;
}

export const PM_OPTIONS = { dot: true, noextglob: true, nonegate: true } as const;

export function compileGlob(glob: string): (path: string) => boolean {
	const source = toPicomatchGlob(glob);
	try {
		return picomatch(source, PM_OPTIONS);
	} catch (e) {
		throw invalidPattern("glob", glob, (e as Error).message);
	}
}

/**
 * A find pattern is matched against the entry's name unless it contains "/"; then against the
 * path relative to the search directory, anchored there when it starts with "/" and at any
 * depth otherwise ("**\/" is prepended), like `fd --glob --full-path` on the absolute path.
 */
export function findGlobTarget(pattern: string): { fullPath: boolean; glob: string } {
	if (!pattern.includes("/")) return { fullPath: false, glob: pattern };
	if (pattern.startsWith("/")) return { fullPath: true, glob: pattern.slice(1) };
	return { fullPath: true, glob: pattern.startsWith("**/") ? pattern : `**/${pattern}` };
}

/** Escape a literal path for use inside a globset/picomatch glob. */
export function escapeGlob(literal: string): string {
	return literal.replace(/[*?[\]{}\\]/g, "\\$&");
}
