/** Ordering, lines, context and abort handling shared by every search engine. */
import { backendFact } from "../../boundary/backend-facts.js";
import type { KeelError } from "../../boundary/errors.js";
import type { GrepMatch } from "../types.js";
import type { LineMatcher } from "./patterns.js";

/**
 * Longest line text an engine returns (UTF-16 units). rg prints at most RG_MAX_COLUMNS bytes of
 * a line (--max-columns-preview), which always holds more than this many characters, so both
 * engines cut to the same text; the tools show less still (GREP_MAX_LINE_CHARS).
 */
export const MAX_LINE_CHARS = 1000;
export const RG_MAX_COLUMNS = 4096;

const clipLine = (text: string) => (text.length > MAX_LINE_CHARS ? text.slice(0, MAX_LINE_CHARS) : text);

/**
 * Order of relative POSIX paths: UTF-8 byte order of their components, with "/" below every
 * other character, so "a/", "a/b" come before "a.txt" — the order of a depth-first walk with
 * sorted names, which is what `rg --sort path` produces.
 */
export function comparePaths(a: string, b: string): number {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) {
		const x = a.charCodeAt(i);
		const y = b.charCodeAt(i);
		if (x === y) continue;
		if (x === 0x2f) return -1;
		if (y === 0x2f) return 1;
		// A surrogate encodes a code point above U+FFFF, which sorts after every BMP character in
		// UTF-8 even though its UTF-16 unit may be smaller (e.g. than U+E000).
		const sx = x >= 0xd800 && x <= 0xdfff;
		const sy = y >= 0xd800 && y <= 0xdfff;
		if (sx !== sy) return sx ? 1 : -1;
		return x - y;
	}
	return a.length - b.length;
}

/** Drop one trailing "\n", then one trailing "\r". */
export function stripEol(text: string): string {
	const t = text.endsWith("\n") ? text.slice(0, -1) : text;
	return t.endsWith("\r") ? t.slice(0, -1) : t;
}

/**
 * Build the matches of one file. `before`/`after` are the lines in [line-C, line-1] and
 * [line+1, line+C] that exist, computed per file so overlapping windows share lines.
 */
export function withContext(
	path: string,
	matchLines: readonly number[],
	lineAt: (n: number) => string | undefined,
	context: number,
): GrepMatch[] {
	const around = (from: number, to: number) => {
		const out = [];
		for (let n = Math.max(1, from); n <= to; n++) {
			const text = lineAt(n);
			if (text !== undefined) out.push({ line: n, text: clipLine(text) });
		}
		return out;
	};
	return matchLines.map((line) => ({
		path,
		line,
		text: clipLine(lineAt(line) ?? ""),
		before: around(line - context, line - 1),
		after: around(line + 1, line + context),
	}));
}

export function abortedError(): KeelError {
	return backendFact("search-aborted");
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
	if (signal?.aborted) throw abortedError();
}

/**
 * Text of a file, or undefined when it is binary (contains a NUL byte anywhere: rg stops at the
 * first NUL and the rg engine drops such files). UTF-16 with a BOM is decoded, as rg does.
 */
function decodeText(buf: Buffer): string | undefined {
	let text: string;
	if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe) {
		text = new TextDecoder("utf-16le").decode(buf.subarray(2));
	} else if (buf.length >= 2 && buf[0] === 0xfe && buf[1] === 0xff) {
		text = new TextDecoder("utf-16be").decode(buf.subarray(2));
	} else {
		if (buf.includes(0)) return undefined;
		text = buf.toString("utf8");
	}
	if (text.includes("\0")) return undefined;
	return text.startsWith("\uFEFF") ? text.slice(1) : text;
}

/** Matches of one file's bytes, at most `max` (the context of the last one stays complete). */
export function grepBuffer(
	path: string,
	buf: Buffer,
	regex: LineMatcher,
	context: number,
	max: number,
): GrepMatch[] {
	const text = decodeText(buf);
	if (text === undefined) return [];
	const lines = text.split("\n");
	if (lines[lines.length - 1] === "") lines.pop();
	const matchLines: number[] = [];
	// Lines keep a "\r" while matching, like rg without --crlf.
	for (let i = 0; i < lines.length && matchLines.length < max; i++) {
		if (regex.test(lines[i])) matchLines.push(i + 1);
	}
	if (matchLines.length === 0) return [];
	return withContext(
		path,
		matchLines,
		(n) => (n <= lines.length ? stripEol(lines[n - 1]) : undefined),
		context,
	);
}
