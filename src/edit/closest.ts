/**
 * The region of a file most like an anchor that did not match, so a failed edit can say where the
 * text probably is and which of its lines differ: the next call fixes the anchor without a new
 * read. Shared by edit's NO_MATCH (anchor.ts) and apply_patch's (patch/apply.ts).
 *
 * Lines are compared by their fold key (normalize.ts: trimmed, quotes/dashes/blanks folded). A
 * window's score is its equal lines plus half the character-bigram similarity of the others, so a
 * misremembered line still pulls the window towards it. Candidate windows come from lines whose key
 * equals an anchor line's (each votes for the window that would align them), or, when no line is
 * equal, from the lines most like the anchor's longest lines. The work is bounded: a key that occurs
 * very often casts no votes, and the similarity scan stops after a fixed number of comparisons.
 */
import { truncateLine } from "../boundary/truncate.js";
import { lineKey } from "./normalize.js";

/** At most this many differing lines are shown. */
const MAX_DIFFERING = 6;
/** Characters shown per line. */
const MAX_LINE_CHARS = 160;
/** A key on more lines than this casts no votes (a `}` or a blank line says nothing). */
const MAX_VOTES_PER_KEY = 64;
/** Windows scored in full. */
const MAX_CANDIDATES = 8;
/** Line comparisons of the similarity scan (anchor lines × file lines). */
const SIMILARITY_BUDGET = 200_000;
/** Anchor lines considered at all (a longer anchor is judged on its first lines). */
const MAX_ANCHOR_LINES = 400;

export interface DifferingLine {
	/** 1-based line of the file. */
	line: number;
	/** The file's line there, and the anchor's (truncated). */
	file: string;
	yours: string;
}

export interface Closest {
	/** 1-based first and last line of the region. */
	startLine: number;
	endLine: number;
	/** Anchor lines equal to the file's there (once blanks and quotes are folded), of `of`. */
	same: number;
	of: number;
	/** The first lines that differ (bounded). */
	differing: DifferingLine[];
}

/** Sørensen–Dice similarity of two strings' character bigrams, 0..1. */
function similarity(a: string, b: string): number {
	if (a === b) return 1;
	if (a.length < 2 || b.length < 2) return 0;
	const grams = new Map<string, number>();
	for (let i = 0; i + 1 < a.length; i++) {
		const g = a.slice(i, i + 2);
		grams.set(g, (grams.get(g) ?? 0) + 1);
	}
	let shared = 0;
	for (let i = 0; i + 1 < b.length; i++) {
		const g = b.slice(i, i + 2);
		const n = grams.get(g);
		if (n) {
			shared++;
			grams.set(g, n - 1);
		}
	}
	return (2 * shared) / (a.length - 1 + (b.length - 1));
}

/**
 * The window of `file` (0-based lines, searched from line `from`) most like `pattern`, or
 * undefined when nothing in the file resembles it.
 */
export function closestLines(file: string[], pattern: string[], from = 0): Closest | undefined {
	const pat = pattern.slice(0, MAX_ANCHOR_LINES);
	const m = pat.length;
	if (m === 0 || file.length <= from) return undefined;
	const keys = pat.map((l) => lineKey(l, false));
	const fileKeys = new Map<number, string>();
	const keyAt = (i: number) => {
		let k = fileKeys.get(i);
		if (k === undefined) {
			k = lineKey(file[i], false);
			fileKeys.set(i, k);
		}
		return k;
	};
	const lastStart = Math.max(from, file.length - m);
	const clamp = (s: number) => Math.min(Math.max(s, from), lastStart);
	// Votes: each file line whose key equals an anchor line's votes for the window aligning them.
	const wanted = new Map<string, number[]>();
	keys.forEach((k, j) => {
		if (k !== "") wanted.set(k, [...(wanted.get(k) ?? []), j]);
	});
	const seen = new Map<string, number[]>();
	for (let i = from; i < file.length; i++) {
		const k = keyAt(i);
		if (!wanted.has(k)) continue;
		const at = seen.get(k) ?? [];
		if (at.length <= MAX_VOTES_PER_KEY) at.push(i);
		seen.set(k, at);
	}
	const votes = new Map<number, number>();
	for (const [k, lines] of seen) {
		if (lines.length > MAX_VOTES_PER_KEY) continue;
		for (const j of wanted.get(k)!)
			for (const i of lines) votes.set(clamp(i - j), (votes.get(clamp(i - j)) ?? 0) + 1);
	}
	let starts = [...votes.entries()]
		.sort((a, b) => b[1] - a[1] || a[0] - b[0])
		.slice(0, MAX_CANDIDATES)
		.map(([s]) => s);
	if (starts.length === 0) starts = similarStarts(file, keys, from, keyAt, clamp);
	let best: { start: number; score: number } | undefined;
	for (const s of starts) {
		let score = 0;
		for (let j = 0; j < m && s + j < file.length; j++) {
			const k = keyAt(s + j);
			score += k === keys[j] ? 1 : similarity(k, keys[j]) / 2;
		}
		if (!best || score > best.score || (score === best.score && s < best.start)) best = { start: s, score };
	}
	if (!best || best.score < Math.min(1, m / 4)) return undefined;
	const end = Math.min(file.length, best.start + m);
	const differing: DifferingLine[] = [];
	let same = 0;
	for (let j = 0; j < m; j++) {
		const i = best.start + j;
		if (i < end && keyAt(i) === keys[j]) {
			same++;
			continue;
		}
		if (differing.length < MAX_DIFFERING)
			differing.push({
				line: i + 1,
				file: i < end ? truncateLine(file[i], MAX_LINE_CHARS).text : "",
				yours: truncateLine(pat[j], MAX_LINE_CHARS).text,
			});
	}
	return { startLine: best.start + 1, endLine: end, same, of: m, differing };
}

/** Window starts aligning the file lines most like the anchor's three longest lines (bounded). */
function similarStarts(
	file: string[],
	keys: string[],
	from: number,
	keyAt: (i: number) => string,
	clamp: (s: number) => number,
): number[] {
	const probes = keys
		.map((k, j) => ({ k, j }))
		.filter((p) => p.k.length >= 4)
		.sort((a, b) => b.k.length - a.k.length)
		.slice(0, 3);
	if (probes.length === 0) return [];
	const limit = Math.min(file.length, from + Math.floor(SIMILARITY_BUDGET / probes.length));
	const found: Array<{ start: number; sim: number }> = [];
	for (const { k, j } of probes) {
		let top = { start: -1, sim: 0.5 };
		for (let i = from; i < limit; i++) {
			const sim = similarity(keyAt(i), k);
			if (sim > top.sim) top = { start: clamp(i - j), sim };
		}
		if (top.start !== -1) found.push(top);
	}
	return found.sort((a, b) => b.sim - a.sim).map((f) => f.start);
}

/** The region as a few lines of a message: where it is and, line by line, what differs. */
export function describeClosest(c: Closest, yoursName: string): string {
	const range = c.startLine === c.endLine ? `line ${c.startLine}` : `lines ${c.startLine}-${c.endLine}`;
	const head = ` The closest text is at ${range} (${c.same} of ${c.of} lines the same once blanks and quotes are folded).`;
	if (c.differing.length === 0) return head;
	const rows = c.differing.map(
		(d) =>
			`\n  line ${d.line}: the file has ${JSON.stringify(d.file)}, ${yoursName} ${JSON.stringify(d.yours)}`,
	);
	const more =
		c.of - c.same > c.differing.length ? `\n  (${c.of - c.same - c.differing.length} more lines differ)` : "";
	return `${head} Lines that differ:${rows.join("")}${more}\nCopy the file's lines into the anchor and send the edit again.`;
}
