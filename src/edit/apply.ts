/**
 * Multi-edit against the original content. Each edit locates its region by mode (exact anchor,
 * normalized anchor, or a line range); regions must be unique unless replaceAll, must not overlap,
 * and the result must differ. Matching runs on an LF view; replacements are spliced into the
 * original so every untouched byte (and line ending) stays as it was.
 */
import { KeelError } from "../boundary/errors.js";
import { dominantEnding } from "../safety/encoding.js";
import { nearestLines } from "./hints.js";
import { LfView, lineOf } from "./lf-view.js";
import { normalizeText } from "./normalize.js";

export type MatchMode = "exact" | "normalized" | "lineRange";

export interface TextEdit {
	oldText?: string;
	newText: string;
	matchMode?: MatchMode;
	replaceAll?: boolean;
	startLine?: number;
	endLine?: number;
}

export interface AppliedEdits {
	/** New text (without BOM), endings preserved per line. */
	text: string;
	/** LF views before and after, for diffs. */
	beforeLf: string;
	afterLf: string;
	/** How each edit matched, in input order. */
	matched: MatchMode[];
}

interface Region {
	index: number;
	start: number;
	end: number;
	newText: string;
}

const MAX_AMBIGUITY_SHOWN = 5;

function label(i: number, n: number): string {
	return n === 1 ? "oldText" : `edits[${i}].oldText`;
}

function allIndexes(hay: string, needle: string, max: number): number[] {
	const found: number[] = [];
	for (
		let i = hay.indexOf(needle);
		i !== -1 && found.length < max;
		i = hay.indexOf(needle, i + needle.length)
	) {
		found.push(i);
	}
	return found;
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

function locateAnchor(
	view: LfView,
	edit: TextEdit,
	i: number,
	n: number,
	path: string,
): Array<[number, number]> {
	const mode = edit.matchMode ?? "exact";
	const oldText = (edit.oldText ?? "").replace(/\r\n/g, "\n");
	if (oldText.length === 0) {
		throw new KeelError("INVALID_ARGS", `${label(i, n)} must not be empty in ${path}.`, { path });
	}
	const max = edit.replaceAll ? Number.MAX_SAFE_INTEGER : MAX_AMBIGUITY_SHOWN + 1;
	let hits: Array<[number, number]>;
	if (mode === "normalized") {
		const hay = normalizeText(view.text);
		const needle = normalizeText(oldText).text;
		if (needle.length === 0)
			throw new KeelError("INVALID_ARGS", `${label(i, n)} is only whitespace in ${path}.`, { path });
		hits = allIndexes(hay.text, needle, max).map((s) => [hay.starts[s], hay.ends[s + needle.length - 1]]);
	} else {
		hits = allIndexes(view.text, oldText, max).map((s) => [s, s + oldText.length]);
	}
	if (hits.length === 0) {
		const hint = nearestLines(view.text, oldText);
		const how =
			mode === "normalized"
				? "even after normalizing quotes, dashes and whitespace"
				: "it must match the file exactly, including whitespace";
		throw new KeelError("NO_MATCH", `Could not find ${label(i, n)} in ${path}; ${how}.${hint}`, { path });
	}
	if (hits.length > 1 && !edit.replaceAll) {
		const shown = hits.slice(0, MAX_AMBIGUITY_SHOWN).map(([s]) => lineOf(view.text, s));
		const more = hits.length > MAX_AMBIGUITY_SHOWN ? "+" : "";
		throw new KeelError(
			"AMBIGUOUS_MATCH",
			`${label(i, n)} matches ${shown.length}${more} places in ${path} (lines ${shown.join(", ")}); add surrounding lines to make it unique, or set replaceAll.`,
			{ path },
		);
	}
	return hits;
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
		if (current !== edit.oldText.replace(/\r\n/g, "\n").replace(/\n$/, "")) {
			throw new KeelError(
				"NO_MATCH",
				`Lines ${startLine}-${endLine} of ${path} no longer hold the given oldText; read them again.`,
				{
					path,
				},
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
	const regions: Region[] = [];
	const matched: MatchMode[] = [];
	edits.forEach((edit, i) => {
		const mode = edit.matchMode ?? "exact";
		const newText = edit.newText.replace(/\r\n/g, "\n");
		if (mode === "lineRange") {
			const [start, end] = locateLines(view, edit, i, path);
			// Whole lines are replaced: keep the line break that ended the range.
			const keepBreak = newText.length > 0 && !newText.endsWith("\n") && view.text[end - 1] === "\n";
			regions.push({ index: i, start, end, newText: keepBreak ? `${newText}\n` : newText });
		} else {
			for (const [start, end] of locateAnchor(view, edit, i, edits.length, path))
				regions.push({ index: i, start, end, newText });
		}
		matched.push(mode);
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
	const fileEnding = dominantEnding(original);
	const outParts: string[] = [];
	const lfParts: string[] = [];
	let cursor = 0;
	for (const r of regions) {
		const ending = view.endingIn(r.start, r.end) ?? fileEnding;
		outParts.push(original.slice(view.toOriginal(cursor), view.toOriginal(r.start)));
		outParts.push(ending === "\n" ? r.newText : r.newText.replace(/\n/g, ending));
		lfParts.push(view.text.slice(cursor, r.start), r.newText);
		cursor = r.end;
	}
	outParts.push(original.slice(view.toOriginal(cursor)));
	lfParts.push(view.text.slice(cursor));
	const text = outParts.join("");
	if (text === original) {
		const s = edits.length > 1 ? "s produce" : " produces";
		throw new KeelError("NO_CHANGE", `No changes made to ${path}: the replacement${s} identical content.`, {
			path,
		});
	}
	return { text, beforeLf: view.text, afterLf: lfParts.join(""), matched };
}
