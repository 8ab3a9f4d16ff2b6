/**
 * The matching ladder. Rungs, most to least strict:
 *   exact        the anchor is a substring of the file;
 *   normalized   per line: Unicode quotes/dashes/spaces folded, inner blank runs collapsed,
 *                trailing blanks ignored; indentation must still be equal;
 *   indentation  whole lines, indentation compared as relative levels (tabs and spaces, a uniform
 *                offset, another width); new lines are re-indented into the file's style;
 *   blankLines   as indentation, with blank lines skipped on both sides and a final newline the
 *                file lacks forgiven;
 *   unescaped    exact, once the anchor's (and the new text's) over-escapes are undone: `\n`, `\t`,
 *                `\"`, `\'`, `\$`, `\``, `\\` typed where the file has the character itself;
 *   spacing      as normalized, with blanks next to punctuation ignored (`f( a, b )` is `f(a,b)`);
 *   compat       as normalized, with compatibility forms folded too (NFKC, one character for one:
 *                `，` for `,`, `Ａ` for `A`, a letter and its combining accents for the composed
 *                letter). Last, because no raw-text probe can find its candidates: it reads every
 *                line (so does spacing, whose blanks the raw text has and the key has not).
 * The caller goes down the ladder and stops at the first rung with a match. Each rung is linear in
 * the file (search.ts).
 */
import { type LineAnchor, lineHits } from "./line-rungs.js";
import type { LineIndex } from "./lines.js";
import { lineKey, type NormalizedLine, normalizeLine } from "./normalize.js";
import { rebuild, type Unit } from "./preserve.js";
import { bestProbe, kmp, searchLines } from "./search.js";

export type Rung = "exact" | "normalized" | "indentation" | "blankLines" | "unescaped" | "spacing" | "compat";

export const RUNGS: readonly Rung[] = [
	"exact",
	"normalized",
	"indentation",
	"blankLines",
	"unescaped",
	"spacing",
	"compat",
];

/** A match: view range [start, end) and the LF text that replaces it. */
export interface Hit {
	start: number;
	end: number;
	text: string;
}

export interface LadderInput {
	/** LF view of the file, and its line index (built on first use). */
	text: string;
	lines: () => LineIndex;
	oldText: string;
	newText: string;
	/** Stop after this many hits. */
	max: number;
	/** replaceAll: overlapping hits are skipped rather than counted. */
	disjoint: boolean;
	/** The anchor as the line rungs split it (null: it cannot match), computed once. */
	lineAnchor?: LineAnchor | null;
}

export function findOnRung(rung: Rung, input: LadderInput): Hit[] {
	switch (rung) {
		case "exact":
			return exactHits(input);
		case "normalized":
			return normalizedHits(input, false, false);
		case "unescaped":
			return unescapedHits(input);
		case "spacing":
			return normalizedHits(input, false, true);
		case "compat":
			return normalizedHits(input, true, false);
		default:
			return lineHits(input, rung === "blankLines");
	}
}

function exactHits({ text, oldText, newText, max }: LadderInput): Hit[] {
	const hits: Hit[] = [];
	for (
		let i = text.indexOf(oldText);
		i !== -1 && hits.length < max;
		i = text.indexOf(oldText, i + oldText.length)
	)
		hits.push({ start: i, end: i + oldText.length, text: newText });
	return hits;
}

/** Escapes a model types for the character itself. */
const OVER_ESCAPED = /\\([nt"'$`\\])/g;

function readEscapes(s: string): string {
	return s.replace(OVER_ESCAPED, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
}

function unescapedHits(input: LadderInput): Hit[] {
	if (!input.oldText.includes("\\")) return [];
	const oldText = readEscapes(input.oldText);
	if (oldText === input.oldText || oldText.length === 0) return [];
	return exactHits({ ...input, oldText, newText: readEscapes(input.newText) });
}

function normalizedHits(input: LadderInput, compat: boolean, spacing: boolean): Hit[] {
	const lines = input.lines();
	const anchor = input.oldText.split("\n");
	const m = anchor.length;
	if (m > lines.count) return [];
	const key = (l: string) => lineKey(l, true, compat, spacing);
	const norm = (l: string) => normalizeLine(l, true, compat, spacing);
	const keys = anchor.map(key);
	if (keys.every((k) => k === "")) return [];
	// Compatibility forms fold onto ASCII, so under compat no character of a key is safe to probe
	// the raw text with: every line is a candidate (searchLines falls back to one KMP pass).
	if (compat && keys.every((k, j) => k === lineKey(anchor[j], true)) && !hasCompatForms(input.text))
		return [];
	const next = input.newText.split("\n");
	const hits: Hit[] = [];
	const { at, probe } = compat || spacing ? { at: 0, probe: "" } : bestProbe(keys);
	let lastWindow = -1;
	const push = (start: number, end: number) => {
		const pieces = input.text.slice(start, end).split("\n");
		const units: Unit[] = pieces.map((p, j) => ({ from: j, to: j + 1, file: [p] }));
		hits.push({ start, end, text: rebuild(anchor, next, units, (l) => l).join("\n") });
		return hits.length < input.max;
	};
	// Window w: the anchor's first line ends line w, its last line starts line w + m - 1.
	const tryWindow = (w: number, middleChecked: boolean) => {
		if (w <= lastWindow || w < 0 || w + m > lines.count) return true;
		lastWindow = w;
		if (m === 1) return singleLine(lines, w, keys[0], key, norm, push);
		if (!middleChecked) for (let j = 1; j < m - 1; j++) if (key(lines.line(w + j)) !== keys[j]) return true;
		const first = norm(lines.line(w));
		if (!first.text.endsWith(keys[0])) return true;
		const last = norm(lines.line(w + m - 1));
		if (!last.text.startsWith(keys[m - 1])) return true;
		const s = first.text.length - keys[0].length;
		const start = keys[0] === "" ? lines.end(w) : lines.start(w) + first.starts[s];
		// Like an exact match, the region ends with the anchor: trailing blanks after it stay.
		const end = lines.start(w + m - 1) + (keys[m - 1] === "" ? 0 : last.ends[keys[m - 1].length - 1]);
		if (input.disjoint && hits.length > 0 && start < hits[hits.length - 1].end) return true;
		return push(start, end);
	};
	searchLines(
		lines,
		probe,
		m,
		(line) => tryWindow(line - at, false),
		() =>
			kmp(
				keys.slice(1, m - 1),
				lines.count,
				(i) => key(lines.line(i)),
				(s) => tryWindow(s - 1, true),
			),
	);
	return hits;
}

function singleLine(
	lines: LineIndex,
	w: number,
	anchorKey: string,
	key: (line: string) => string,
	norm: (line: string) => NormalizedLine,
	push: (start: number, end: number) => boolean,
): boolean {
	if (!key(lines.line(w)).includes(anchorKey)) return true;
	const folded = norm(lines.line(w));
	const base = lines.start(w);
	for (
		let s = folded.text.indexOf(anchorKey);
		s !== -1;
		s = folded.text.indexOf(anchorKey, s + anchorKey.length)
	) {
		if (!push(base + folded.starts[s], base + folded.ends[s + anchorKey.length - 1])) return false;
	}
	return true;
}

/** Whether the text has any character the compatibility fold changes (cheap: a regex scan). */
function hasCompatForms(text: string): boolean {
	return /[\u00a0-\u4dff\ua000-\uabff\uf900-\uffef]/.test(text);
}
