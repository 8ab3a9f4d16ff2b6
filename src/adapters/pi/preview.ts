/**
 * Bounded views of argument and result text. A collapsed preview copies at most
 * PREVIEW_CHARS characters of a string; lines are counted with indexOf over the original, so a
 * 5 MB argument is scanned once and never split or copied. Only an explicit expansion walks the
 * whole text into lines.
 */

export const PREVIEW_CHARS = 8192;

export interface Preview {
	/** The first (or, for a tail preview, last) PREVIEW_CHARS characters at most. */
	text: string;
	/** Length of the whole string. */
	chars: number;
	/** Lines in the whole string (a trailing newline does not start a new line). */
	lines: number;
	/** Whether `text` is shorter than the whole string. */
	truncated: boolean;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Lines of `s` without copying it. */
export function countLines(s: string): number {
	if (s.length === 0) return 0;
	let n = 1;
	for (let i = s.indexOf("\n"); i !== -1 && i < s.length - 1; i = s.indexOf("\n", i + 1)) n++;
	return n;
}

/** The head of `s`, never splitting a surrogate pair. */
export function headPreview(s: string, limit = PREVIEW_CHARS): Preview {
	let end = Math.min(s.length, limit);
	if (end < s.length && end > 0 && isHigh(s.charCodeAt(end - 1))) end--;
	return { text: s.slice(0, end), chars: s.length, lines: countLines(s), truncated: end < s.length };
}

/** The tail of `s` (command output: the end matters), never splitting a surrogate pair. */
export function tailPreview(s: string, limit = PREVIEW_CHARS): Preview {
	let start = Math.max(0, s.length - limit);
	if (start > 0 && isLow(s.charCodeAt(start))) start++;
	return { text: s.slice(start), chars: s.length, lines: countLines(s), truncated: start > 0 };
}

/** Up to `max` lines from the start of an already bounded text. */
export function firstLines(text: string, max: number): string[] {
	const out: string[] = [];
	let from = 0;
	while (out.length < max && from <= text.length) {
		const nl = text.indexOf("\n", from);
		if (nl === -1) {
			if (from < text.length) out.push(text.slice(from));
			break;
		}
		out.push(text.slice(from, nl));
		from = nl + 1;
	}
	return out;
}

/** Up to `max` lines from the end of an already bounded text (a trailing newline is ignored). */
export function lastLines(text: string, max: number): string[] {
	const out: string[] = [];
	let end = text.endsWith("\n") ? text.length - 1 : text.length;
	while (out.length < max && end >= 0) {
		const nl = text.lastIndexOf("\n", end - 1);
		out.push(text.slice(nl + 1, end));
		if (nl === -1) break;
		end = nl;
	}
	return out.reverse();
}

/** Every line of `s`: for expanded views only. */
export function allLines(s: string): string[] {
	return firstLines(s, Number.POSITIVE_INFINITY);
}

/** "12 lines, 3.4 KB" */
export function sizeLabel(p: Pick<Preview, "chars" | "lines">): string {
	const lines = `${p.lines} line${p.lines === 1 ? "" : "s"}`;
	return `${lines}, ${formatChars(p.chars)}`;
}

function formatChars(n: number): string {
	if (n < 1024) return `${n} chars`;
	if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)}K chars`;
	return `${(n / (1024 * 1024)).toFixed(1)}M chars`;
}
