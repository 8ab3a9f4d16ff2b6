/**
 * Multi-edit against the original content: every anchor must match exactly once, anchors must not
 * overlap, and the result must differ. Matching is on an LF view; replacements are spliced into the
 * original text so every untouched byte (and line ending) stays as it was.
 */
import { KeelError } from "../boundary/errors.js";
import { dominantEnding } from "../safety/encoding.js";
import { LfView, lineOf } from "./lf-view.js";
import { nearestLines } from "./hints.js";

export interface TextEdit {
	oldText: string;
	newText: string;
}

export interface AppliedEdits {
	/** New text (without BOM), endings preserved per line. */
	text: string;
	/** LF views before and after, for diffs. */
	beforeLf: string;
	afterLf: string;
}

interface Located {
	index: number;
	start: number;
	end: number;
	newText: string;
}

const label = (i: number, n: number) => (n === 1 ? "oldText" : `edits[${i}].oldText`);

function occurrences(hay: string, needle: string, max: number): number[] {
	const found: number[] = [];
	for (let i = hay.indexOf(needle); i !== -1 && found.length < max; i = hay.indexOf(needle, i + needle.length)) {
		found.push(i);
	}
	return found;
}

export function applyEdits(original: string, edits: TextEdit[], path: string): AppliedEdits {
	if (edits.length === 0) {
		throw new KeelError("INVALID_ARGS", "edits must contain at least one replacement.", { path });
	}
	const view = new LfView(original);
	const located: Located[] = [];
	edits.forEach((edit, i) => {
		const oldText = edit.oldText.replace(/\r\n/g, "\n");
		if (oldText.length === 0) {
			throw new KeelError("INVALID_ARGS", `${label(i, edits.length)} must not be empty in ${path}.`, { path });
		}
		const hits = occurrences(view.text, oldText, 6);
		if (hits.length === 0) {
			const hint = nearestLines(view.text, oldText);
			throw new KeelError(
				"NO_MATCH",
				`Could not find ${label(i, edits.length)} in ${path}; it must match the file exactly, including whitespace.${hint}`,
				{ path },
			);
		}
		if (hits.length > 1) {
			const lines = hits.slice(0, 5).map((h) => lineOf(view.text, h));
			const more = hits.length > 5 ? "+" : "";
			throw new KeelError(
				"AMBIGUOUS_MATCH",
				`${label(i, edits.length)} matches ${Math.min(hits.length, 5)}${more} places in ${path} (lines ${lines.join(", ")}); add surrounding lines to make it unique.`,
				{ path },
			);
		}
		located.push({ index: i, start: hits[0], end: hits[0] + oldText.length, newText: edit.newText.replace(/\r\n/g, "\n") });
	});
	located.sort((a, b) => a.start - b.start);
	for (let k = 1; k < located.length; k++) {
		const prev = located[k - 1];
		const cur = located[k];
		if (prev.end > cur.start) {
			throw new KeelError(
				"EDIT_OVERLAP",
				`edits[${prev.index}] and edits[${cur.index}] overlap in ${path}; merge them into one edit.`,
				{ path },
			);
		}
	}
	const fileEnding = dominantEnding(original);
	let out = original;
	let afterLf = view.text;
	for (let k = located.length - 1; k >= 0; k--) {
		const e = located[k];
		const ending = view.endingIn(e.start, e.end) ?? fileEnding;
		const replacement = ending === "\n" ? e.newText : e.newText.replace(/\n/g, ending);
		out = out.slice(0, view.toOriginal(e.start)) + replacement + out.slice(view.toOriginal(e.end));
		afterLf = afterLf.slice(0, e.start) + e.newText + afterLf.slice(e.end);
	}
	if (out === original) {
		throw new KeelError("NO_CHANGE", `No changes made to ${path}: the replacement${edits.length > 1 ? "s produce" : " produces"} identical content.`, {
			path,
		});
	}
	return { text: out, beforeLf: view.text, afterLf };
}
