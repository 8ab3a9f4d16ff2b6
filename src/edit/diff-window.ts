/**
 * The part of two texts that a diff needs: the changed lines plus `context` lines on each side.
 * Diffing whole 10 MB files line by line costs about ten times their size in memory; an edit
 * changes a few lines, and the unchanged prefix and suffix are found with a linear scan.
 */
export interface DiffWindow {
	before: string;
	after: string;
	/** Lines of the texts before the window (add to 1-based line numbers inside it). */
	lineOffset: number;
}

function countNewlines(s: string, end: number): number {
	let n = 0;
	for (let i = s.indexOf("\n"); i !== -1 && i < end; i = s.indexOf("\n", i + 1)) n++;
	return n;
}

/** Start of the line `lines` lines above the line that starts at `at`. */
function backLines(s: string, at: number, lines: number): number {
	let p = at;
	for (let k = 0; k < lines && p > 0; k++) p = (p >= 2 ? s.lastIndexOf("\n", p - 2) : -1) + 1;
	return p;
}

/** End (exclusive, after its newline) of the line `lines` lines below the line ending at `at`. */
function forwardLines(s: string, at: number, lines: number): number {
	let p = at;
	for (let k = 0; k < lines && p < s.length; k++) {
		const nl = s.indexOf("\n", p);
		p = nl === -1 ? s.length : nl + 1;
	}
	return p;
}

/** Chars compared per step by native string equality before falling back to a char loop. */
const CHUNK = 16 * 1024;

/** Length of the common prefix of a and b (at most `max`). */
function commonPrefix(a: string, b: string, max: number): number {
	let i = 0;
	// Native comparison of whole chunks: a char-by-char JS loop over 10 MB took ~70 ms.
	while (i + CHUNK <= max && a.slice(i, i + CHUNK) === b.slice(i, i + CHUNK)) i += CHUNK;
	while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++;
	return i;
}

/** Length of the common suffix of a and b (at most `max`). */
function commonSuffix(a: string, b: string, max: number): number {
	let j = 0;
	while (
		j + CHUNK <= max &&
		a.slice(a.length - j - CHUNK, a.length - j) === b.slice(b.length - j - CHUNK, b.length - j)
	)
		j += CHUNK;
	while (j < max && a.charCodeAt(a.length - 1 - j) === b.charCodeAt(b.length - 1 - j)) j++;
	return j;
}

export function diffWindow(before: string, after: string, context: number): DiffWindow {
	const max = Math.min(before.length, after.length);
	const i = commonPrefix(before, after, max);
	// The window starts at a line boundary, `context` lines above the first difference.
	const firstLine = i === 0 ? 0 : before.lastIndexOf("\n", i - 1) + 1;
	const start = backLines(before, firstLine, context);
	const j = commonSuffix(before, after, max - i);
	// ...and ends at a line boundary, `context` lines below the last difference.
	const endBefore = forwardLines(before, before.length - j, context + 1);
	const suffix = before.length - endBefore;
	const endAfter = after.length - suffix;
	return {
		before: before.slice(start, endBefore),
		after: after.slice(start, endAfter),
		lineOffset: countNewlines(before, start),
	};
}

/** Lines in `s` (a trailing newline ends a line; it does not start one... as split("\n") counts). */
export function lineCount(s: string): number {
	return countNewlines(s, s.length) + 1;
}

/** A unified patch of the window, with hunk headers moved back to whole-file line numbers. */
export function shiftHunks(patch: string, lineOffset: number): string {
	if (lineOffset === 0) return patch;
	return patch.replace(/^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@/gm, (_m, a, b, c, d) => {
		return `@@ -${Number(a) + lineOffset}${b} +${Number(c) + lineOffset}${d} @@`;
	});
}
