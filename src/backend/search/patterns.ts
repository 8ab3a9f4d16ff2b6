/** Grep regexes and glob patterns, compiled as rg and fd read them. */
import { createRequire } from "node:module";
import { type BackendFactError, type BackendFactExtras, backendFact } from "../../boundary/backend-facts.js";
import { type PathFactError, pathFact } from "../../boundary/path-facts.js";
import type { GrepRequest } from "../types.js";

// CommonJS, needed by the first glob (grep's glob filter, find): required then, cached by Node.
const requireHere = createRequire(import.meta.url);
const picomatch = (): typeof import("picomatch") => requireHere("picomatch");

/** A regex or glob refused, with the parser's (or the checker's) reason. */
export function invalidPattern(kind: "regex" | "glob", pattern: string, reason: string): BackendFactError {
	return backendFact("pattern-invalid", { kind, pattern, reason });
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

/** re2js's RE2JS class: linear-time matching (a Go/RE2 port), loaded on first use (~14 ms). */
export type Re2 = typeof import("re2js").RE2JS;

/** Node caches the module, so every call after the first costs one microtask. */
export async function loadRe2(): Promise<Re2> {
	return (await import("re2js")).RE2JS;
}

/** A compiled grep pattern, tested against one line (without its "\n") at a time. */
export interface LineMatcher {
	test(line: string): boolean;
}

/**
 * Caps on a pattern's compiled size, the same idea on every engine: rg gets
 * `--regex-size-limit`/`--dfa-size-limit`, the JS engines refuse a longer source or a larger
 * re2js program before matching anything.
 */
// 1 MiB holds what the JS engines accept (MAX_PROGRAM_SIZE instructions): x{20000}, a few thousand
// alternatives. Past it the cost per byte of a line grows with the size (x{99999} over one 200 KB
// line ran a minute), so a larger pattern is refused before it runs.
export const RG_REGEX_SIZE_LIMIT = "1M";
export const MAX_PATTERN_CHARS = 20_000;
export const MAX_PROGRAM_SIZE = 20_000;

/**
 * A search that skipped a directory nested past the system's path length limit (ENAMETOOLONG,
 * reported by rg and fd as "os error 36" on stderr and otherwise skipped): the answer would miss
 * what is there, so the call fails naming the limit. `line` is the tool's message about it.
 */
export function nestedTooDeep(path: string, line: string): PathFactError {
	const cut = line.lastIndexOf(": ");
	const where = (cut > 0 ? line.slice(0, cut) : line).replace(/^\[fd error\]: /, "");
	return pathFact("nested-too-deep", path, { where });
}

/** The line of a search tool's stderr that reports ENAMETOOLONG, if any. */
export function tooDeepLine(stderr: string): string | undefined {
	return stderr.split("\n").find((l) => l.trimEnd().endsWith("(os error 36)"));
}

/** A pattern past a size limit: what was measured, its size and the limit (or the engine's reason). */
export function patternTooLarge(
	pattern: string,
	size: Pick<BackendFactExtras, "measure" | "size" | "limit" | "reason">,
): BackendFactError {
	return backendFact("pattern-too-large", { ...size, patternChars: pattern.length });
}

/**
 * Regex pattern → a linear-time matcher (re2js), close to Rust regex as rg runs it line by line.
 * RE2 syntax is Rust regex syntax with a few differences (docs/ARCHITECTURE.md, "search"):
 * \w, \d, \s and \b are ASCII-only, class set operations (&&, --, ~~) and (?x) are missing.
 */
export function compileGrepMatcher(
	req: Pick<GrepRequest, "pattern" | "literal" | "ignoreCase">,
	re2: Re2,
): LineMatcher {
	// rg refuses patterns that could match a line terminator; do the same (a heuristic for "\n").
	if (req.pattern.includes("\n") || (!req.literal && hasNewlineEscape(req.pattern))) {
		throw invalidPattern("regex", req.pattern, 'the literal "\\n" is not allowed in a regex');
	}
	if (req.pattern.length > MAX_PATTERN_CHARS) {
		throw patternTooLarge(req.pattern, {
			measure: "characters",
			size: req.pattern.length,
			limit: MAX_PATTERN_CHARS,
		});
	}
	const source = req.literal ? re2.quote(req.pattern) : req.pattern;
	// DOTALL: like Rust regex, "." matches everything but "\n" (lines never contain one).
	const flags = re2.DOTALL | (req.ignoreCase ? re2.CASE_INSENSITIVE : 0);
	let compiled: InstanceType<Re2>;
	try {
		compiled = re2.compile(source, flags);
	} catch (e) {
		const why = (e as Error).message.replace(/^error parsing regexp: /, "");
		if (/invalid repeat count/.test(why))
			throw patternTooLarge(req.pattern, { measure: "repeat", reason: why });
		throw invalidPattern("regex", req.pattern, why);
	}
	const size = compiled.programSize();
	if (size > MAX_PROGRAM_SIZE) {
		throw patternTooLarge(req.pattern, { measure: "program", size, limit: MAX_PROGRAM_SIZE });
	}
	return { test: (line) => compiled.test(line) };
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

/** picomatch's guards against "." and ".." segments (which walked paths never hold): lookarounds RE2 lacks. */
const PM_LOOKAROUNDS = ["(?!(?:^|\\/)\\.{1,2}(?:\\/|$))", "(?!\\.{1,2}(?:\\/|$))", "(?=.)"];

/**
 * A glob matcher in linear time: picomatch translates the glob to a regex source, which runs
 * on re2js (JS RegExp backtracks: "*a*a*a*a*a*a*a*a*a*a*a*a*b" against a long name never ends).
 */
export function compileGlob(glob: string, re2: Re2): (path: string) => boolean {
	const source = toPicomatchGlob(glob);
	let regex: string;
	try {
		regex = picomatch().makeRe(source, PM_OPTIONS).source;
	} catch (e) {
		throw invalidPattern("glob", glob, (e as Error).message);
	}
	// "(?=.)" before a star asks for one character at least: say so without a lookahead.
	regex = regex.replaceAll("(?=.)[^/]*?", "[^/]+?");
	for (const guard of PM_LOOKAROUNDS) regex = regex.replaceAll(guard, "");
	if (regex.length > MAX_PATTERN_CHARS)
		throw patternTooLarge(glob, { measure: "glob-characters", size: glob.length });
	let compiled: InstanceType<Re2>;
	try {
		compiled = re2.compile(regex);
	} catch (e) {
		throw invalidPattern("glob", glob, (e as Error).message.replace(/^error parsing regexp: /, ""));
	}
	return (path) => compiled.test(path);
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
