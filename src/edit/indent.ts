/**
 * Indentation for the indentation-insensitive rungs. Indentation is measured in columns (a tab
 * counts TAB columns, so tabs and spaces compare); an anchor matches when its lines' indentation,
 * relative to its first line, is the file's relative indentation times one positive scale (2-space
 * vs 4-space, tabs vs spaces, a uniform offset). New lines are re-indented by the same mapping and
 * written in the file's own style.
 */
import type { LineIndex } from "./lines.js";
import { indentLength, isBlank } from "./normalize.js";

const TAB = 4;
/** Lines either side of a match looked at to learn the file's indentation style. */
const STYLE_WINDOW = 200;

export function columns(line: string): number {
	let cols = 0;
	for (let i = 0; i < line.length; i++) {
		const c = line.charCodeAt(i);
		if (c === 0x20) cols++;
		else if (c === 0x09) cols += TAB;
		else break;
	}
	return cols;
}

export function isBlankLine(line: string): boolean {
	for (let i = 0; i < line.length; i++) if (!isBlank(line.charCodeAt(i))) return false;
	return true;
}

/**
 * The scale from anchor to file indentation, given [anchor, file] columns of the matched non-blank
 * lines: a number, undefined when every line sits at the first one's level (no scale to learn), or
 * null when the relative indentation disagrees (no match).
 */
export function indentScale(pairs: Array<[number, number]>): number | null | undefined {
	if (pairs.length === 0) return undefined;
	const [a0, f0] = pairs[0];
	let ref: [number, number] | undefined;
	for (const [a, f] of pairs) {
		const ra = a - a0;
		const rf = f - f0;
		if ((ra === 0) !== (rf === 0)) return null;
		if (ra === 0) continue;
		if (!ref) {
			if (Math.sign(ra) !== Math.sign(rf)) return null;
			ref = [ra, rf];
		} else if (rf * ref[0] !== ra * ref[1]) return null;
	}
	return ref ? ref[1] / ref[0] : undefined;
}

type Style = "tab" | "space";

interface FileIndent {
	style: Style;
	/** Columns of one indentation level. */
	unit: number;
}

/** The file's indentation near lines [from, to]: the style most lines use, and the usual step. */
function fileIndent(lines: LineIndex, from: number, to: number): FileIndent {
	let tabs = 0;
	let spaces = 0;
	const steps = new Map<number, number>();
	let prev = -1;
	const lo = Math.max(0, from - STYLE_WINDOW);
	const hi = Math.min(lines.count - 1, to + STYLE_WINDOW);
	for (let i = lo; i <= hi; i++) {
		const line = lines.line(i);
		if (isBlankLine(line)) continue;
		if (line.charCodeAt(0) === 0x09) tabs++;
		else if (line.charCodeAt(0) === 0x20) spaces++;
		const cols = columns(line);
		if (prev >= 0 && cols > prev) steps.set(cols - prev, (steps.get(cols - prev) ?? 0) + 1);
		prev = cols;
	}
	let unit = TAB;
	let best = 0;
	for (const [step, n] of steps) if (n > best || (n === best && step < unit)) [unit, best] = [step, n];
	return { style: tabs > spaces ? "tab" : "space", unit };
}

function render(cols: number, style: Style): string {
	return style === "tab" ? "\t".repeat(Math.floor(cols / TAB)) + " ".repeat(cols % TAB) : " ".repeat(cols);
}

function gcd(a: number, b: number): number {
	return b === 0 ? a : gcd(b, a % b);
}

export interface IndentMatch {
	/** The first non-blank anchor line and the file line it matched. */
	anchorFirst: string;
	fileFirst: string;
	/** From indentScale; undefined when the anchor is flat. */
	scale: number | undefined;
	/** The matched file lines [from, to], to learn the style from. */
	from: number;
	to: number;
}

/**
 * A function re-indenting a new line from the anchor's indentation to the file's. `anchorSide`
 * (the anchor's and newText's lines) gives the anchor's indentation step when the anchor alone
 * does not.
 */
export function reindenter(lines: LineIndex, m: IndentMatch, anchorSide: string[]): (line: string) => string {
	const base = columns(m.anchorFirst);
	const fileBase = m.fileFirst.slice(0, indentLength(m.fileFirst));
	const styleLines: string[] = [];
	for (let i = m.from; i <= m.to; i++) {
		const l = lines.line(i);
		if (!isBlankLine(l) && indentLength(l) > 0) styleLines.push(l);
	}
	// The matched lines show the style; the lines around them only when those are all flush left.
	let learned: FileIndent | undefined;
	const nearby = () => {
		learned ??= fileIndent(lines, m.from, m.to);
		return learned;
	};
	const tabs = styleLines.some((l) => l.charCodeAt(0) === 0x09);
	const style: Style = styleLines.length === 0 ? nearby().style : tabs ? "tab" : "space";
	let scale = m.scale;
	if (scale === undefined) {
		// A flat anchor does not show its step: take newText's, against the file's usual one.
		let step = 0;
		for (const l of anchorSide) if (!isBlankLine(l)) step = gcd(step, Math.abs(columns(l) - base));
		scale = step === 0 ? 1 : nearby().unit / step;
	}
	const factor = scale;
	return (line) => {
		if (isBlankLine(line)) return "";
		const rest = line.slice(indentLength(line));
		const rel = Math.round((columns(line) - base) * factor);
		if (rel >= 0) return fileBase + render(rel, style) + rest;
		return render(Math.max(0, columns(fileBase) + rel), style) + rest;
	};
}
