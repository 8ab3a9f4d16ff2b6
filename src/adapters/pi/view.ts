/**
 * A minimal pi-tui Component (render(width) → lines, invalidate()) so the extension needs no pi
 * package at run time. pi's TUI aborts when a rendered line is wider than the terminal, so widths
 * are over-estimated on purpose: ASCII and U+00A0–U+02FF count 1, every other code point 2. Text
 * from tools is sanitized first (control characters dropped, tabs expanded), so the only escape
 * sequences left are the theme's SGR colors, which count 0.
 */

export interface Component {
	render(width: number): string[];
	invalidate(): void;
}

const TAB = "    ";
const ELLIPSIS = "…";
const RESET = "\x1b[0m";

/** Tool text made safe for the terminal: no control characters (an ESC could recolor or move the cursor). */
export function sanitize(text: string): string {
	return text.replace(/\t/g, TAB).replace(/[\x00-\x08\x0a-\x1f\x7f-\x9f]/g, "");
}

function charWidth(cp: number): number {
	if (cp < 0x20) return 0;
	if (cp < 0x7f) return 1;
	if (cp >= 0xa0 && cp < 0x300) return 1;
	return 2;
}

/** Length of the SGR/CSI or OSC escape sequence at `i`, or 0 when there is none. */
function escapeLength(s: string, i: number): number {
	if (s.charCodeAt(i) !== 0x1b) return 0;
	const next = s[i + 1];
	if (next === "[") {
		let j = i + 2;
		while (j < s.length && !(s.charCodeAt(j) >= 0x40 && s.charCodeAt(j) <= 0x7e)) j++;
		return j + 1 - i;
	}
	if (next === "]") {
		for (let j = i + 2; j < s.length; j++) {
			if (s[j] === "\x07") return j + 1 - i;
			if (s[j] === "\x1b" && s[j + 1] === "\\") return j + 2 - i;
		}
		return s.length - i;
	}
	return 1;
}

/** Upper bound of the columns `s` takes. */
export function visibleWidth(s: string): number {
	let w = 0;
	for (let i = 0; i < s.length; ) {
		const esc = escapeLength(s, i);
		if (esc) {
			i += esc;
			continue;
		}
		const cp = s.codePointAt(i)!;
		w += charWidth(cp);
		i += cp > 0xffff ? 2 : 1;
	}
	return w;
}

/**
 * Cut `s` into pieces of at most `width` columns. With `wrap` false only the first piece is kept,
 * ending in "…". Escape sequences seen so far are replayed at the start of each continuation so
 * colors carry over.
 */
export function fitLine(s: string, width: number, wrap: boolean): string[] {
	if (width <= 0) return [""];
	if (visibleWidth(s) <= width) return [s];
	const out: string[] = [];
	const limit = wrap ? width : width - 1;
	let piece = "";
	let pieceWidth = 0;
	let escapes = "";
	for (let i = 0; i < s.length; ) {
		const esc = escapeLength(s, i);
		if (esc) {
			const seq = s.slice(i, i + esc);
			piece += seq;
			escapes += seq;
			i += esc;
			continue;
		}
		const cp = s.codePointAt(i)!;
		const len = cp > 0xffff ? 2 : 1;
		let ch = s.slice(i, i + len);
		let w = charWidth(cp);
		i += len;
		if (pieceWidth + w > limit) {
			if (!wrap) return [piece + ELLIPSIS + RESET];
			if (w > limit) {
				// A wide character in a one-column terminal: it can never fit.
				ch = "?";
				w = 1;
			}
			if (pieceWidth + w > limit) {
				out.push(piece + RESET);
				piece = escapes;
				pieceWidth = 0;
			}
		}
		piece += ch;
		pieceWidth += w;
	}
	out.push(piece);
	return out;
}

/** Lines rendered as given, truncated (or wrapped) to the width; cached per width. */
export class LinesView implements Component {
	private lines: string[] = [];
	private wrap = false;
	private cache: { width: number; out: string[] } | undefined;

	set(lines: string[], wrap = false): this {
		this.lines = lines;
		this.wrap = wrap;
		this.cache = undefined;
		return this;
	}

	render(width: number): string[] {
		if (this.cache?.width === width) return this.cache.out;
		const out: string[] = [];
		for (const line of this.lines) for (const piece of fitLine(line, width, this.wrap)) out.push(piece);
		this.cache = { width, out };
		return out;
	}

	invalidate(): void {
		this.cache = undefined;
	}
}
