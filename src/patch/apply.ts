/**
 * One file's hunks applied to its text. Lines keep their own endings; a context line keeps the
 * file's own bytes (even when it matched only leniently); an added line takes the ending of the
 * line it replaces, else the file's dominant one; a file without a final newline does not get one.
 * Hunks are found in order, each after the previous one (patch/match.ts); lines outside the hunks
 * are never touched. When a hunk matched with the indentation ignored and every matched line's
 * indentation differs from the patch's by the same prefix, added lines get the same change.
 */

import { KeelError } from "../boundary/errors.js";
import { closestLines, describeClosest } from "../edit/closest.js";
import { isBlankLine } from "../edit/indent.js";
import { dominantEnding } from "../safety/encoding.js";
import { type LineMatch, seekLines, seekSkippingBlanks } from "./match.js";
import type { Hunk, PatchLine } from "./parse.js";

interface Line {
	text: string;
	/** "\n", "\r\n", "\r", or "" for a last line without a newline. */
	ending: string;
}

export interface FileLines {
	lines: Line[];
	finalNewline: boolean;
	dominant: string;
}

export function splitLines(text: string): FileLines {
	const lines: Line[] = [];
	// A lone CR ends a line as CRLF and LF do (old Mac files); `\r\r\n` is a CR then a CRLF line.
	const newline = /\r\n|\r|\n/g;
	let at = 0;
	for (let m = newline.exec(text); m; m = newline.exec(text)) {
		lines.push({ text: text.slice(at, m.index), ending: m[0] });
		at = newline.lastIndex;
	}
	const last = text.slice(at);
	if (last !== "") lines.push({ text: last, ending: "" });
	return { lines, finalNewline: last === "" && lines.length > 0, dominant: dominantEnding(text) };
}

export function joinLines(lines: Line[], finalNewline: boolean, dominant: string): string {
	let out = "";
	for (let i = 0; i < lines.length; i++) {
		const isLast = i === lines.length - 1;
		let ending = lines[i].ending;
		if (!isLast && ending === "") ending = dominant;
		if (isLast) ending = finalNewline ? ending || dominant : "";
		out += lines[i].text + ending;
	}
	return out;
}

interface Replacement {
	start: number;
	end: number;
	out: Line[];
}

export interface AppliedHunks {
	text: string;
	/** The rung each hunk matched on ("append" for a hunk of added lines only). */
	matched: string[];
}

const MAX_SHOWN = 160;
const shown = (s: string) => JSON.stringify(s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN)}…` : s);

function leading(s: string): string {
	return s.slice(0, s.length - s.trimStart().length);
}

/** The prefix change from patch to file indentation shared by every matched line, if there is one. */
function reindenter(old: string[], match: LineMatch, file: Line[]): ((s: string) => string) | undefined {
	if (match.rung === "exact" || match.rung === "rstrip") return undefined;
	let add: string | undefined;
	let drop: string | undefined;
	let addOk = true;
	let dropOk = true;
	for (let j = 0; j < old.length; j++) {
		const fi = match.map[j];
		if (fi === -1 || isBlankLine(old[j])) continue;
		const p = leading(old[j]);
		const f = leading(file[fi].text);
		if (addOk && f.endsWith(p)) {
			const d = f.slice(0, f.length - p.length);
			if (add === undefined) add = d;
			else if (add !== d) addOk = false;
		} else addOk = false;
		if (dropOk && p.endsWith(f)) {
			const d = p.slice(0, p.length - f.length);
			if (drop === undefined) drop = d;
			else if (drop !== d) dropOk = false;
		} else dropOk = false;
	}
	if (addOk && add) return (s) => (isBlankLine(s) ? s : add + s);
	if (dropOk && drop) return (s) => (s.startsWith(drop!) ? s.slice(drop!.length) : s);
	return tabsForSpaces(old, match, file);
}

/**
 * The file indents with tabs where the patch uses spaces (or the reverse), at one width for every
 * matched line: added lines get the file's character at that width.
 */
function tabsForSpaces(old: string[], match: LineMatch, file: Line[]): ((s: string) => string) | undefined {
	let width: number | undefined;
	let fileTabs: boolean | undefined;
	for (let j = 0; j < old.length; j++) {
		const fi = match.map[j];
		if (fi === -1 || isBlankLine(old[j])) continue;
		const p = leading(old[j]);
		const f = leading(file[fi].text);
		if (p === "" && f === "") continue;
		const tabs =
			/^\t+$/.test(f) && /^ +$/.test(p) ? true : /^ +$/.test(f) && /^\t+$/.test(p) ? false : undefined;
		if (tabs === undefined || (fileTabs !== undefined && tabs !== fileTabs)) return undefined;
		fileTabs = tabs;
		const w = tabs ? p.length / f.length : f.length / p.length;
		if (!Number.isInteger(w) || (width !== undefined && w !== width)) return undefined;
		width = w;
	}
	if (width === undefined || fileTabs === undefined) return undefined;
	const w = width;
	return fileTabs
		? (s) => {
				const n = leading(s).length;
				return /^ *$/.test(leading(s)) && n % w === 0 ? "\t".repeat(n / w) + s.slice(n) : s;
			}
		: (s) => {
				const n = leading(s).length;
				return /^\t*$/.test(leading(s)) ? " ".repeat(n * w) + s.slice(n) : s;
			};
}

function build(hunk: PatchLine[], match: LineMatch, file: FileLines): Line[] {
	const old = hunk.filter((l) => l.kind !== "+").map((l) => l.text);
	const reindent = reindenter(old, match, file.lines) ?? ((s: string) => s);
	const out: Line[] = [];
	let f = match.start;
	let p = 0;
	let removed: string[] = [];
	let used = 0;
	for (const line of hunk) {
		if (line.kind === "+") {
			const ending = removed[used] ?? removed[removed.length - 1] ?? file.dominant;
			used++;
			out.push({ text: reindent(line.text), ending });
			continue;
		}
		const fi = match.map[p++];
		if (fi === -1) continue;
		// File lines the pattern skipped (blank lines, on the blankLines rung) stay.
		while (f < fi) out.push(file.lines[f++]);
		if (line.kind === " ") {
			out.push(file.lines[fi]);
			removed = [];
			used = 0;
		} else removed.push(file.lines[fi].ending);
		f = fi + 1;
	}
	return out;
}

function noMatch(file: string[], old: string[], from: number, where: string, what: string): KeelError {
	const closest = closestLines(file, old, from);
	const detail = closest ? describeClosest(closest, "the patch has") : "";
	return new KeelError(
		"NO_MATCH",
		`${where}: ${what} not found${from > 0 ? ` after line ${from}` : ""}.${detail}${closest ? "" : " Read the file and redo the hunk with its current lines."}`,
		{ details: closest ? { closest } : undefined },
	);
}

/**
 * Apply `hunks` to `text` (already without BOM). `label` names the file in messages. Throws
 * NO_MATCH naming the hunk and the closest region of the file.
 */
export function applyHunks(text: string, hunks: Hunk[], label: string): AppliedHunks {
	const file = splitLines(text);
	const texts = file.lines.map((l) => l.text);
	const replacements: Replacement[] = [];
	const matched: string[] = [];
	let cursor = 0;
	hunks.forEach((hunk, k) => {
		const where = `${label}, hunk ${k + 1} of ${hunks.length} (patch line ${hunk.at})`;
		if (hunk.header !== undefined) {
			const ctx = seekLines(texts, [hunk.header], cursor, false);
			if (!ctx)
				throw noMatch(texts, [hunk.header], cursor, where, `the @@ context line ${shown(hunk.header)} was`);
			cursor = ctx.start + 1;
		}
		let lines = hunk.lines;
		if (lines.every((l) => l.kind === "+")) {
			// Added lines only: they go at the end of the file (Codex's rule for such a hunk).
			replacements.push({
				start: texts.length,
				end: texts.length,
				out: build(lines, emptyMatch(texts.length), file),
			});
			matched.push("append");
			return;
		}
		const oldOf = (ls: PatchLine[]) => ls.filter((l) => l.kind !== "+").map((l) => l.text);
		let match = seekLines(texts, oldOf(lines), cursor, hunk.eof);
		const last = lines[lines.length - 1];
		if (!match && last.kind === " " && last.text === "") {
			// A trailing empty context line is often the model's stray blank line before the next marker.
			const shorter = lines.slice(0, -1);
			match = seekLines(texts, oldOf(shorter), cursor, hunk.eof);
			if (match) lines = shorter;
		}
		match ??= seekSkippingBlanks(texts, oldOf(lines), cursor, hunk.eof);
		if (!match)
			throw noMatch(
				texts,
				oldOf(lines),
				cursor,
				where,
				hunk.eof ? "the lines to change, at the end of the file, were" : "the lines to change were",
			);
		if (!hunk.eof) {
			// The same lines again further on, on the same rung: which one is meant is a guess.
			const old = oldOf(lines);
			const again =
				match.rung === "blankLines"
					? seekSkippingBlanks(texts, old, match.start + 1, false)
					: seekLines(texts, old, match.start + 1, false);
			if (again && again.rung === match.rung) {
				throw new KeelError(
					"AMBIGUOUS_MATCH",
					`${where}: the lines to change match at line ${match.start + 1} and again at line ${again.start + 1}; add context lines (or an @@ line naming the enclosing block) so the hunk matches one place.`,
					{ details: { candidates: [match.start + 1, again.start + 1] } },
				);
			}
		}
		replacements.push({ start: match.start, end: match.end, out: build(lines, match, file) });
		matched.push(match.rung);
		cursor = match.end;
	});
	// Stable: hunks of added lines only stay in patch order at the end.
	replacements.sort((a, b) => a.start - b.start);
	const out: Line[] = [];
	let f = 0;
	for (const r of replacements) {
		while (f < r.start) out.push(file.lines[f++]);
		out.push(...r.out);
		f = Math.max(f, r.end);
	}
	while (f < file.lines.length) out.push(file.lines[f++]);
	const finalNewline = file.lines.length === 0 ? true : file.finalNewline;
	return { text: joinLines(out, finalNewline, file.dominant), matched };
}

function emptyMatch(at: number): LineMatch {
	return { rung: "exact", map: [], start: at, end: at };
}

/** An added file's text: each line ends with "\n". */
export function addedText(lines: string[]): string {
	return lines.map((l) => `${l}\n`).join("");
}
