/**
 * Where a hunk's old lines are in a file. Rungs, strictest first; the first rung with a match
 * anywhere after the cursor decides (each hunk is searched after the previous one); a second
 * match on that rung makes the hunk ambiguous, which the caller refuses (patch/apply.ts):
 *   exact       line for line;
 *   rstrip      trailing whitespace ignored;
 *   trim        leading and trailing whitespace ignored;
 *   fold        as trim, with Unicode quotes, dashes and spaces folded to ASCII and inner runs of
 *               blanks collapsed (edit/normalize.ts);
 *   blankLines  as fold, with blank lines skipped on both sides (keel's rung; Codex has none).
 * A match maps every old line to the file line it matched (-1: a blank line the file lacks), so
 * the caller keeps the file's own bytes for context lines.
 */
import { isBlankLine } from "../edit/indent.js";
import { lineKey } from "../edit/normalize.js";

export type PatchRung = "exact" | "rstrip" | "trim" | "fold" | "blankLines";

export interface LineMatch {
	rung: PatchRung;
	/** File line index per pattern line, or -1. */
	map: number[];
	/** File lines [start, end) the match covers. */
	start: number;
	end: number;
}

type Eq = (fileLine: string, patternLine: string) => boolean;

const CONTIGUOUS: Array<[PatchRung, Eq]> = [
	["exact", (a, b) => a === b],
	["rstrip", (a, b) => a.trimEnd() === b.trimEnd()],
	["trim", (a, b) => a.trim() === b.trim()],
	["fold", (a, b) => lineKey(a, false) === lineKey(b, false)],
];

function contiguous(file: string[], pattern: string[], from: number, eof: boolean, eq: Eq): number {
	const m = pattern.length;
	if (m > file.length) return -1;
	const first = eof ? file.length - m : from;
	for (let i = Math.max(first, 0); i + m <= file.length; i++) {
		let j = 0;
		while (j < m && eq(file[i + j], pattern[j])) j++;
		if (j === m) return i;
	}
	return -1;
}

function blankSkipping(file: string[], pattern: string[], from: number, eof: boolean): LineMatch | undefined {
	const pat: number[] = [];
	for (let j = 0; j < pattern.length; j++) if (!isBlankLine(pattern[j])) pat.push(j);
	if (pat.length === 0) return undefined;
	const keys = pat.map((j) => lineKey(pattern[j], false));
	const lines: number[] = [];
	for (let i = Math.max(from, 0); i < file.length; i++) if (!isBlankLine(file[i])) lines.push(i);
	const fileKeys = new Map<number, string>();
	const key = (k: number) => {
		let v = fileKeys.get(k);
		if (v === undefined) {
			v = lineKey(file[lines[k]], false);
			fileKeys.set(k, v);
		}
		return v;
	};
	const m = keys.length;
	const first = eof ? lines.length - m : 0;
	for (let k = Math.max(first, 0); k + m <= lines.length; k++) {
		let j = 0;
		while (j < m && key(k + j) === keys[j]) j++;
		if (j < m) continue;
		const map = pattern.map(() => -1);
		pat.forEach((pj, n) => {
			map[pj] = lines[k + n];
		});
		return { rung: "blankLines", map, start: lines[k], end: lines[k + m - 1] + 1 };
	}
	return undefined;
}

/** Find `pattern` in `file` at or after line `from`; with `eof`, only where it ends the file. */
export function seekLines(
	file: string[],
	pattern: string[],
	from: number,
	eof: boolean,
): LineMatch | undefined {
	if (pattern.length === 0) return { rung: "exact", map: [], start: from, end: from };
	for (const [rung, eq] of CONTIGUOUS) {
		const at = contiguous(file, pattern, from, eof, eq);
		if (at !== -1) return { rung, map: pattern.map((_, j) => at + j), start: at, end: at + pattern.length };
	}
	return undefined;
}

/** The blank-line-skipping rung, tried only after every contiguous attempt failed. */
export function seekSkippingBlanks(
	file: string[],
	pattern: string[],
	from: number,
	eof: boolean,
): LineMatch | undefined {
	return blankSkipping(file, pattern, from, eof);
}
