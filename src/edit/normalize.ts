/**
 * Line normalization for the matching ladder: Unicode quotes, dashes and spaces folded to ASCII,
 * inner runs of blanks collapsed to one space, trailing blanks dropped. Indentation is either kept
 * verbatim (rungs "normalized" and "compat") or dropped (rungs "indentation" and "blankLines"). A normalized
 * line can carry a map back to offsets in the original line, so a match maps to exact bytes.
 */

/** Blanks folded to one space: space, tab, NBSP and the Unicode spaces models substitute. */
export function isBlank(c: number): boolean {
	return (
		c === 0x20 ||
		c === 0x09 ||
		c === 0xa0 ||
		(c >= 0x2000 && c <= 0x200a) ||
		c === 0x202f ||
		c === 0x205f ||
		c === 0x3000
	);
}

/** The ASCII stand-in for a Unicode quote or dash; the code itself otherwise. */
export function fold(c: number): number {
	if (c < 0x2010) return c;
	switch (c) {
		case 0x2018:
		case 0x2019:
		case 0x201a:
		case 0x201b:
		case 0x2032:
		case 0x2035:
			return 0x27;
		case 0x201c:
		case 0x201d:
		case 0x201e:
		case 0x201f:
		case 0x2033:
		case 0x2036:
			return 0x22;
		case 0x2212:
		case 0xfe58:
		case 0xfe63:
		case 0xff0d:
			return 0x2d;
	}
	return c >= 0x2010 && c <= 0x2015 ? 0x2d : c;
}

/**
 * The compatibility fold (rung "compat"): a character whose NFKC form is one other UTF-16 unit
 * (fullwidth and halfwidth forms, compatibility letters and digits) becomes that unit, then `fold`.
 * Multi-character expansions (ligatures, circled numbers) stay as they are: a match must map each
 * folded character to exactly one character of the file.
 */
export function compatFold(c: number): number {
	if (c < 0x80) return c;
	if (c >= 0xff01 && c <= 0xff5e) return c - 0xfee0;
	// Ideographs, Hangul syllables and surrogates: NFKC leaves them alone (or cannot see them alone).
	if ((c >= 0x4e00 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7a3) || (c >= 0xd800 && c <= 0xdfff)) {
		return fold(c);
	}
	const nfkc = String.fromCharCode(c).normalize("NFKC");
	return fold(nfkc.length === 1 ? nfkc.charCodeAt(0) : c);
}

/** A character normalization never produces or changes: safe to search for in the raw text. */
function isStable(c: number): boolean {
	return !isBlank(c) && fold(c) === c && c !== 0x27 && c !== 0x22 && c !== 0x2d && c !== 0x0a;
}

/** Length of the leading run of spaces and tabs (a line's indentation). */
export function indentLength(line: string): number {
	let i = 0;
	while (i < line.length && (line.charCodeAt(i) === 0x20 || line.charCodeAt(i) === 0x09)) i++;
	return i;
}

export interface NormalizedLine {
	text: string;
	/** Original offset where normalized char i starts. */
	starts: number[];
	/** Original offset just past normalized char i. */
	ends: number[];
}

/**
 * Normalize one line (no "\n"). With `keepIndent` the leading spaces and tabs stay verbatim (a
 * line of blanks only is still empty), otherwise every leading blank is dropped.
 */
export function normalizeLine(
	line: string,
	keepIndent: boolean,
	compat = false,
	spacing = false,
): NormalizedLine {
	const foldChar = compat ? compatFold : fold;
	const out: number[] = [];
	const starts: number[] = [];
	const ends: number[] = [];
	let i = 0;
	const indent = indentLength(line);
	if (keepIndent && indent < line.length) {
		for (; i < indent; i++) {
			out.push(line.charCodeAt(i));
			starts.push(i);
			ends.push(i + 1);
		}
	}
	if (!keepIndent) while (i < line.length && isBlank(line.charCodeAt(i))) i++;
	while (i < line.length) {
		const c = line.charCodeAt(i);
		if (isBlank(c)) {
			let j = i;
			while (j < line.length && isBlank(line.charCodeAt(j))) j++;
			// With `spacing`, blanks next to punctuation are dropped: `f( a, b )` is `f(a,b)`.
			const tight = spacing && (!isWordChar(out[out.length - 1] ?? 0x28) || !isWordChar(line.charCodeAt(j)));
			if (j < line.length && !tight) {
				out.push(0x20);
				starts.push(i);
				ends.push(j);
			}
			i = j;
			continue;
		}
		if (compat && isCombining(line.charCodeAt(i + 1))) {
			// A letter and its combining marks, composed when NFKC makes them one character (é as e + ◌́).
			let j = i + 1;
			while (isCombining(line.charCodeAt(j))) j++;
			const composed = line.slice(i, j).normalize("NFKC");
			if (composed.length === 1) {
				out.push(fold(composed.charCodeAt(0)));
				starts.push(i);
				ends.push(j);
				i = j;
				continue;
			}
		}
		out.push(foldChar(c));
		starts.push(i);
		ends.push(i + 1);
		i++;
	}
	return { text: fromCodes(out), starts, ends };
}

/** Letters, digits, `_` and `$` (and anything past ASCII): blanks between two of them are kept. */
function isWordChar(c: number): boolean {
	return (
		(c >= 0x30 && c <= 0x39) ||
		(c >= 0x41 && c <= 0x5a) ||
		(c >= 0x61 && c <= 0x7a) ||
		c === 0x5f ||
		c === 0x24 ||
		c >= 0x80
	);
}

/** Combining diacritical marks (the ones NFC composes onto Latin, Greek and Cyrillic letters). */
function isCombining(c: number): boolean {
	return c >= 0x300 && c <= 0x36f;
}

/** The normalized text of a line, without the offset maps (the hot path of the line rungs). */
export function lineKey(line: string, keepIndent: boolean, compat = false, spacing = false): string {
	const indent = indentLength(line);
	if (indent === line.length) return "";
	if (spacing) return normalizeLine(line, keepIndent, compat, spacing).text;
	for (let i = indent; i < line.length; i++) {
		const c = line.charCodeAt(i);
		const next = i + 1 < line.length ? line.charCodeAt(i + 1) : 0x20;
		if (c === 0x09 || c >= 0x80 || (c === 0x20 && next === 0x20))
			return normalizeLine(line, keepIndent, compat).text;
	}
	// ASCII without tabs, double or trailing spaces past the indentation: nothing to fold.
	return keepIndent ? line : line.slice(indent);
}

function fromCodes(codes: number[]): string {
	let s = "";
	for (let i = 0; i < codes.length; i += 8192) s += String.fromCharCode(...codes.slice(i, i + 8192));
	return s;
}

/**
 * The longest run of stable characters in `key`: every line whose normalization contains `key`
 * contains this run verbatim, so indexOf finds the candidate lines without normalizing the file.
 */
export function stableRun(key: string): string {
	let best = "";
	let from = 0;
	for (let i = 0; i <= key.length; i++) {
		if (i < key.length && isStable(key.charCodeAt(i))) continue;
		if (i - from > best.length) best = key.slice(from, i);
		from = i + 1;
	}
	return best;
}
