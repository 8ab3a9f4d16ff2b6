/**
 * The line rungs of the ladder: "indentation" (whole lines, indentation compared as relative
 * levels) and "blankLines" (the same with blank lines skipped on both sides and a final newline
 * the file lacks forgiven). The replacement is rebuilt line by line (preserve.ts) with new lines
 * re-indented into the file's style (indent.ts).
 */
import { columns, indentScale, isBlankLine, reindenter } from "./indent.js";
import type { Hit, LadderInput } from "./ladder.js";
import type { LineIndex } from "./lines.js";
import { lineKey } from "./normalize.js";
import { rebuild, type Unit } from "./preserve.js";
import { bestProbe, kmp, searchLines } from "./search.js";

/** Split off one final "\n": the anchor then says whether the line break after it is included. */
function splitEol(s: string): { lines: string[]; eol: boolean } {
	const eol = s.endsWith("\n");
	return { lines: (eol ? s.slice(0, -1) : s).split("\n"), eol };
}

/** The anchor split for the line rungs, shared by both; undefined when it cannot match. */
export interface LineAnchor {
	eol: boolean;
	anchor: string[];
	keys: string[];
	nonBlank: number[];
	at: number;
	probe: string;
}

function lineAnchor(input: LadderInput, lines: LineIndex): LineAnchor | undefined {
	const old = splitEol(input.oldText);
	const anchor = old.lines;
	const nonBlank: number[] = [];
	const keys: string[] = [];
	for (let j = 0; j < anchor.length; j++) {
		keys.push(lineKey(anchor[j], false));
		// More non-blank anchor lines than the file has lines: no match, and no more work.
		if (keys[j] !== "" && nonBlank.push(j) > lines.count) return undefined;
	}
	if (nonBlank.length === 0) return undefined;
	return { eol: old.eol, anchor, keys, nonBlank, ...bestProbe(keys) };
}

export function lineHits(input: LadderInput, skipBlanks: boolean): Hit[] {
	const lines = input.lines();
	if (input.lineAnchor === undefined) input.lineAnchor = lineAnchor(input, lines) ?? null;
	const a = input.lineAnchor;
	if (!a || (!skipBlanks && a.anchor.length > lines.count)) return [];
	const { anchor, keys, nonBlank, at } = a;
	const next = splitEol(input.newText);
	const hits: Hit[] = [];
	let lastEndLine = -1;
	/** fileOf[j]: the file line of anchor line j (non-blank ones only when skipping blanks). */
	const found = (fileOf: number[]) => {
		const first = fileOf[nonBlank[0]];
		// Without skipping, blank anchor lines at the edges are part of the window.
		const from = skipBlanks ? first : fileOf[0];
		const to = skipBlanks ? fileOf[nonBlank[nonBlank.length - 1]] : fileOf[anchor.length - 1];
		if (a.eol && !skipBlanks && !lines.hasBreak(to)) return true;
		const scale = indentScale(nonBlank.map((j) => [columns(anchor[j]), columns(lines.line(fileOf[j]))]));
		if (scale === null) return true;
		if (input.disjoint && from <= lastEndLine) return true;
		lastEndLine = to;
		const withBreak = a.eol && lines.hasBreak(to);
		const fresh = reindenter(
			lines,
			{ anchorFirst: anchor[nonBlank[0]], fileFirst: lines.line(first), scale, from, to },
			[...anchor, ...next.lines],
		);
		const units = skipBlanks ? blankUnits(lines, anchor, nonBlank, fileOf) : lineUnits(lines, anchor, fileOf);
		const body = rebuild(anchor, next.lines, units, fresh).join("\n");
		// A final newline the anchor had but the file lacks is not added by the replacement either.
		const text = next.eol && (withBreak || !a.eol) ? `${body}\n` : body;
		hits.push({ start: lines.start(from), end: lines.end(to) + (withBreak ? 1 : 0), text });
		return hits.length < input.max;
	};
	const key = (i: number) => lineKey(lines.line(i), false);
	if (skipBlanks) {
		const rank = nonBlank.indexOf(at);
		const pattern = nonBlank.map((j) => keys[j]);
		searchLines(
			lines,
			a.probe,
			pattern.length,
			(line) => {
				const fileOf = walkSkippingBlanks(lines, keys, nonBlank, rank, line);
				return fileOf ? found(fileOf) : true;
			},
			() => {
				const nb: number[] = [];
				for (let i = 0; i < lines.count; i++) if (!isBlankLine(lines.line(i))) nb.push(i);
				kmp(
					pattern,
					nb.length,
					(i) => key(nb[i]),
					(s) => found(spread(nonBlank, (p) => nb[s + p])),
				);
			},
		);
	} else {
		const byWindow = (w: number) => found(anchor.map((_, j) => w + j));
		searchLines(
			lines,
			a.probe,
			anchor.length,
			(line) => (window(lines, keys, line - at) ? byWindow(line - at) : true),
			() => kmp(keys, lines.count, key, byWindow),
		);
	}
	return hits;
}

/** fileOf for the non-blank anchor lines: nonBlank[p] maps to lineOf(p). */
function spread(nonBlank: number[], lineOf: (p: number) => number): number[] {
	const fileOf: number[] = [];
	nonBlank.forEach((j, p) => {
		fileOf[j] = lineOf(p);
	});
	return fileOf;
}

/** True when the window of anchor lines starting at file line w matches line for line. */
function window(lines: LineIndex, keys: string[], w: number): boolean {
	if (w < 0 || w + keys.length > lines.count) return false;
	for (let j = 0; j < keys.length; j++) if (lineKey(lines.line(w + j), false) !== keys[j]) return false;
	return true;
}

/**
 * File line of every non-blank anchor line, walking out from anchor line nonBlank[rank] at file
 * line `line` and skipping blank lines on both sides; undefined if a line differs.
 */
function walkSkippingBlanks(
	lines: LineIndex,
	keys: string[],
	nonBlank: number[],
	rank: number,
	line: number,
): number[] | undefined {
	const fileOf: number[] = [];
	if (lineKey(lines.line(line), false) !== keys[nonBlank[rank]]) return undefined;
	fileOf[nonBlank[rank]] = line;
	for (let p = rank - 1, i = line; p >= 0; p--) {
		do i--;
		while (i >= 0 && isBlankLine(lines.line(i)));
		if (i < 0 || lineKey(lines.line(i), false) !== keys[nonBlank[p]]) return undefined;
		fileOf[nonBlank[p]] = i;
	}
	for (let p = rank + 1, i = line; p < nonBlank.length; p++) {
		do i++;
		while (i < lines.count && isBlankLine(lines.line(i)));
		if (i >= lines.count || lineKey(lines.line(i), false) !== keys[nonBlank[p]]) return undefined;
		fileOf[nonBlank[p]] = i;
	}
	return fileOf;
}

function lineUnits(lines: LineIndex, anchor: string[], fileOf: number[]): Unit[] {
	return anchor.map((_, j) => ({ from: j, to: j + 1, file: [lines.line(fileOf[j])] }));
}

/** Units when blank lines were skipped: each blank run of the anchor stands for the file's run there. */
function blankUnits(lines: LineIndex, anchor: string[], nonBlank: number[], fileOf: number[]): Unit[] {
	const units: Unit[] = [];
	const fileRun = (a: number, b: number) => {
		const out: string[] = [];
		for (let i = a; i < b; i++) out.push(lines.line(i));
		return out;
	};
	if (nonBlank[0] > 0) units.push({ from: 0, to: nonBlank[0], file: [], run: true, outside: true });
	nonBlank.forEach((j, p) => {
		units.push({ from: j, to: j + 1, file: [lines.line(fileOf[j])] });
		if (p + 1 === nonBlank.length) return;
		const k = nonBlank[p + 1];
		const gap = fileRun(fileOf[j] + 1, fileOf[k]);
		if (k > j + 1) units.push({ from: j + 1, to: k, file: gap, run: true });
		else if (gap.length > 0) units.push({ from: k, to: k, file: gap });
	});
	const last = nonBlank[nonBlank.length - 1];
	if (last < anchor.length - 1)
		units.push({ from: last + 1, to: anchor.length, file: [], run: true, outside: true });
	return units;
}
