/**
 * Locating a text anchor: down the matching ladder (ladder.ts) until a rung matches; one match
 * lands, several are AMBIGUOUS_MATCH, none on any rung is NO_MATCH with a hint.
 */
import { KeelError } from "../boundary/errors.js";
import type { Matched, MatchMode, TextEdit } from "./apply.js";
import { closestLines, describeClosest } from "./closest.js";
import { elisionHint, nearestLines } from "./hints.js";
import { findOnRung, type Hit, RUNGS, type Rung } from "./ladder.js";
import type { LfView } from "./lf-view.js";
import type { LineIndex } from "./lines.js";
import { isBlank } from "./normalize.js";

const MAX_AMBIGUITY_SHOWN = 5;

const RUNG_NOTE: Record<Rung, string> = {
	exact: "",
	normalized: " once quotes, dashes and blanks are normalized",
	indentation: " once indentation is ignored",
	blankLines: " once indentation and blank lines are ignored",
	unescaped: ' once its escapes (\\n, \\", ...) are read as the characters',
	spacing: " once blanks next to punctuation are ignored",
	compat: " once fullwidth and other compatibility forms are folded",
};

function label(i: number, n: number): string {
	return n === 1 ? "oldText" : `edits[${i}].oldText`;
}

/**
 * False when no tolerant rung can match: each of their matches maps every anchor character that is
 * not a blank or a line break to one character of the file. Saves the work on huge anchors.
 */
function fitsIn(anchor: string, text: string): boolean {
	if (anchor.length <= text.length) return true;
	let n = 0;
	for (let i = 0; i < anchor.length; i++) {
		const c = anchor.charCodeAt(i);
		if (c !== 10 && !isBlank(c) && ++n > text.length) return false;
	}
	return true;
}

function rungsFor(mode: MatchMode | undefined): readonly Rung[] {
	if (mode === "exact") return ["exact"];
	if (mode === "normalized") return RUNGS.slice(1);
	return RUNGS;
}

/** Go down the ladder; the first rung with a match decides: one match, or AMBIGUOUS_MATCH. */
export function locateAnchor(
	view: LfView,
	lines: () => LineIndex,
	edit: TextEdit,
	i: number,
	n: number,
	path: string,
): { rung: Rung; hits: Hit[] } {
	const oldText = (edit.oldText ?? "").replace(/\r\n?/g, "\n");
	if (oldText.length === 0) {
		throw new KeelError("INVALID_ARGS", `${label(i, n)} must not be empty in ${path}.`, { path });
	}
	const input = {
		text: view.text,
		lines,
		oldText,
		newText: edit.newText.replace(/\r\n?/g, "\n"),
		max: edit.replaceAll ? Number.MAX_SAFE_INTEGER : MAX_AMBIGUITY_SHOWN + 1,
		disjoint: edit.replaceAll === true,
	};
	const rungs = rungsFor(edit.matchMode);
	const tolerable = fitsIn(oldText, view.text);
	for (const rung of rungs) {
		if (rung !== "exact" && !tolerable) break;
		const hits = findOnRung(rung, input);
		if (hits.length === 0) continue;
		if (hits.length > 1 && !edit.replaceAll) {
			const shown = hits.slice(0, MAX_AMBIGUITY_SHOWN).map((h) => lines().at(h.start) + 1);
			const more = hits.length > MAX_AMBIGUITY_SHOWN ? "+" : "";
			throw new KeelError(
				"AMBIGUOUS_MATCH",
				`${label(i, n)} matches ${shown.length}${more} places in ${path}${RUNG_NOTE[rung]} (lines ${shown.join(", ")}); add surrounding lines to make it unique, or set replaceAll.`,
				{ path, details: { candidates: shown, more: hits.length > MAX_AMBIGUITY_SHOWN } },
			);
		}
		return { rung, hits };
	}
	const how =
		rungs.length === 1
			? "it must match the file exactly, including whitespace"
			: "quotes, dashes, blanks, escapes, fullwidth forms and accents, indentation and blank lines may differ, nothing else";
	const elided = elisionHint(oldText);
	const closest = elided
		? undefined
		: closestLines(view.text.split("\n"), oldText.replace(/\n$/, "").split("\n"));
	const hint = elided || (closest ? describeClosest(closest, "yours has") : nearestLines(view.text, oldText));
	throw new KeelError("NO_MATCH", `Could not find ${label(i, n)} in ${path}; ${how}.${hint}`, {
		path,
		details: closest ? { closest } : undefined,
	});
}

const DRIFT_NOTE: Partial<Record<Matched, string>> = {
	normalized: "once quotes, dashes and blanks were normalized",
	indentation: "once indentation was ignored (new lines re-indented to the file's style)",
	blankLines: "once indentation and blank lines were ignored (new lines re-indented to the file's style)",
	unescaped: 'once its escapes (\\n, \\", ...) were read as the characters they stand for (in newText too)',
	spacing: "once blanks next to punctuation were ignored",
	compat: "once fullwidth and other compatibility forms (NFKC) were folded",
};

/** One sentence for a result when some edit needed a tolerant rung; "" when all matched exactly. */
export function driftNote(matched: Matched[]): string {
	const notes = matched.flatMap((m, i) => {
		const note = DRIFT_NOTE[m];
		if (!note) return [];
		return [`${matched.length === 1 ? "oldText" : `edits[${i}].oldText`} matched ${note}`];
	});
	return notes.length ? ` ${notes.join("; ")}; the file's text differs from yours there.` : "";
}
