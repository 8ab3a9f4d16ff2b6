/**
 * Multi-edit against the original content. Each edit locates its region by mode: a text anchor
 * through the matching ladder (ladder.ts), a line range, or hashline refs (hashline.ts). Regions
 * must be unique unless replaceAll, must not overlap, and the result must differ. Matching runs on
 * an LF view; replacements are spliced into the original so every untouched byte (and line
 * ending) stays as it was.
 */
import { KeelError } from "../boundary/errors.js";
import { dominantEnding } from "../safety/encoding.js";
import { locateAnchor } from "./anchor.js";
import { Applied, type Region } from "./applied.js";
import { locateHashRange } from "./hashline.js";
import { currentLines } from "./hints.js";
import type { Rung } from "./ladder.js";
import { LfView } from "./lf-view.js";
import { LineIndex } from "./lines.js";
import { refusePlaceholder } from "./placeholder.js";

export { driftNote } from "./anchor.js";

/**
 * How an edit is located. Unset: the whole ladder. "exact": the exact rung only. "normalized":
 * the ladder from its second rung. "lineRange": startLine..endLine. "hashline": start..end refs.
 */
export type MatchMode = "exact" | "normalized" | "lineRange" | "hashline";

/** How an edit matched: the ladder rung, or the addressing mode. */
export type Matched = Rung | "lineRange" | "hashline";

export interface TextEdit {
	oldText?: string;
	newText: string;
	matchMode?: MatchMode;
	replaceAll?: boolean;
	startLine?: number;
	endLine?: number;
	/** hashline refs, "12#a3f". */
	start?: string;
	end?: string;
}

export interface AppliedEdits {
	/** New text (without BOM), endings preserved per line. Built on first use (a whole copy). */
	readonly text: string;
	/** LF views before and after, for diffs. `afterLf` is built on first use (a whole copy). */
	readonly beforeLf: string;
	readonly afterLf: string;
	/** How each edit matched, in input order. */
	matched: Matched[];
	/** Places replaced: one per edit, or every place a replaceAll edit matched. */
	readonly replacements: number;
	/**
	 * The new text encoded as UTF-8 (with the BOM when asked), without building it as a string.
	 * With `reuse` (a buffer the caller owns and no longer needs, e.g. the bytes that were read)
	 * the bytes are written into it when they fit, instead of into a new buffer.
	 */
	encode(bom: boolean, reuse?: Buffer): Buffer;
	/** The changed lines plus `context` lines around them, before and after (edit/diff.ts). */
	window(context: number): ChangeWindow;
}

/** The part of an edit a diff needs: what diffWindow finds, found from the edit's own regions. */
export interface ChangeWindow {
	before: string;
	after: string;
	lineOffset: number;
	/** Lines of the whole texts, before and after (for the width of line numbers). */
	beforeLines: number;
	afterLines: number;
}

function lineStart(text: string, line: number): number {
	let at = 0;
	for (let n = 1; n < line; n++) {
		const nl = text.indexOf("\n", at);
		if (nl === -1) return -1;
		at = nl + 1;
	}
	return at;
}

function locateLines(view: LfView, edit: TextEdit, i: number, path: string): [number, number] {
	const { startLine, endLine } = edit;
	const total = view.text.split("\n").length - (view.text.endsWith("\n") ? 1 : 0);
	if (!Number.isInteger(startLine) || !Number.isInteger(endLine) || startLine! < 1 || endLine! < startLine!) {
		throw new KeelError(
			"INVALID_ARGS",
			`edits[${i}] needs integer startLine <= endLine (1-based) for lineRange.`,
			{ path },
		);
	}
	if (endLine! > total) {
		throw new KeelError(
			"INVALID_ARGS",
			`edits[${i}] endLine ${endLine} is past the end of ${path} (${total} lines).`,
			{ path },
		);
	}
	const start = lineStart(view.text, startLine!);
	const next = lineStart(view.text, endLine! + 1);
	const end = next === -1 ? view.text.length : next;
	if (edit.oldText !== undefined) {
		const current = view.text.slice(start, end).replace(/\n$/, "");
		if (current !== edit.oldText.replace(/\r\n?/g, "\n").replace(/\n$/, "")) {
			throw new KeelError(
				"NO_MATCH",
				`Lines ${startLine}-${endLine} of ${path} no longer hold the given oldText.${currentLines(view.text, [{ startLine: startLine!, endLine: endLine! }])}`,
				{ path },
			);
		}
	}
	return [start, end];
}

/** True when offset `i` falls between the two halves of a surrogate pair. */
function splitsPair(text: string, i: number): boolean {
	if (i <= 0 || i >= text.length) return false;
	const before = text.charCodeAt(i - 1);
	const after = text.charCodeAt(i);
	return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

/** No lone surrogates: the text can be encoded as UTF-8 without replacement characters. */
export function isWellFormed(s: string): boolean {
	return !/\p{Cs}/u.test(s);
}

export function applyEdits(original: string, edits: TextEdit[], path: string): AppliedEdits {
	if (edits.length === 0) {
		throw new KeelError("INVALID_ARGS", "edits must contain at least one replacement.", { path });
	}
	const view = new LfView(original);
	let index: LineIndex | undefined;
	const lines = () => {
		index ??= new LineIndex(view.text);
		return index;
	};
	const regions: Region[] = [];
	const matched: Matched[] = [];
	edits.forEach((edit, i) => {
		const mode = edit.matchMode;
		const newText = edit.newText.replace(/\r\n?/g, "\n");
		if (mode === "lineRange" || mode === "hashline") {
			const [start, end] =
				mode === "lineRange"
					? locateLines(view, edit, i, path)
					: locateHashRange(lines(), edit, `edits[${i}]`, path);
			// Whole lines are replaced: keep the line break that ended the range.
			const keepBreak = newText.length > 0 && !newText.endsWith("\n") && view.text[end - 1] === "\n";
			// Deleting the last lines of a file without a final newline: the break before them goes
			// too, so the file still ends without one.
			const unbroken = newText.length === 0 && end === view.text.length && view.text[end - 1] !== "\n";
			const from = unbroken && start > 0 ? start - 1 : start;
			regions.push({ index: i, start: from, end, newText: keepBreak ? `${newText}\n` : newText });
			matched.push(mode);
		} else {
			const { rung, hits } = locateAnchor(view, lines, edit, i, edits.length, path);
			for (const h of hits) regions.push({ index: i, start: h.start, end: h.end, newText: h.text });
			matched.push(rung);
		}
	});
	regions.sort((a, b) => a.start - b.start);
	for (const r of regions) {
		if (splitsPair(view.text, r.start) || splitsPair(view.text, r.end) || !isWellFormed(r.newText)) {
			throw new KeelError(
				"ENCODING_UNSAFE",
				`edits[${r.index}] would split a character in ${path}; include whole characters in oldText and newText.`,
				{
					path,
				},
			);
		}
	}
	for (let k = 1; k < regions.length; k++) {
		const prev = regions[k - 1];
		const cur = regions[k];
		if (prev.end > cur.start) {
			throw new KeelError(
				"EDIT_OVERLAP",
				`edits[${prev.index}] and edits[${cur.index}] overlap in ${path}; merge them into one edit.`,
				{
					path,
				},
			);
		}
	}
	for (const r of regions) {
		const what = edits.length === 1 ? "newText" : `edits[${r.index}].newText`;
		refusePlaceholder(view.text.slice(r.start, r.end), r.newText, what, path);
	}
	// The file's dominant ending (a scan of the whole text): only for a replacement with line breaks
	// in a region that has no ending of its own (one without line breaks is written as it is).
	let fileEnding: string | undefined;
	const dominant = () => {
		fileEnding ??= dominantEnding(original);
		return fileEnding;
	};
	// Each region spliced into the original: [start, end) in original offsets, and what replaces it.
	const splices = regions.map((r) => {
		const start = view.toOriginal(r.start);
		const end = view.toOriginal(r.end);
		if (!r.newText.includes("\n")) return { start, end, text: r.newText };
		const ending = view.endingIn(r.start, r.end) ?? dominant();
		return { start, end, text: ending === "\n" ? r.newText : r.newText.replace(/\n/g, ending) };
	});
	if (splices.every((sp) => original.slice(sp.start, sp.end) === sp.text)) {
		const s = edits.length > 1 ? "s produce" : " produces";
		throw new KeelError("NO_CHANGE", `No changes made to ${path}: the replacement${s} identical content.`, {
			path,
		});
	}
	return new Applied(original, view.text, regions, splices, matched);
}
