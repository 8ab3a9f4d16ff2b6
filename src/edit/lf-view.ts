/**
 * An LF-only view of a text whose lines may end in CRLF or in CR alone (old Mac files), with
 * offset mapping back to the original. Edits match against the view and splice into the original,
 * so untouched lines keep their own endings byte for byte. `\r\r\n` is a CR line end followed by a
 * CRLF one, as every other tool that reads CR endings counts it.
 */
export type Ending = "\n" | "\r\n" | "\r";

export class LfView {
	readonly text: string;
	/** View offsets of the "\n" characters that were "\r\n" in the original, ascending. */
	private readonly crlfAt: number[] = [];
	/** View offsets of the "\n" characters that were a lone "\r" in the original, ascending. */
	private readonly crAt: number[] = [];

	constructor(readonly original: string) {
		if (!original.includes("\r")) {
			this.text = original;
			return;
		}
		let removed = 0;
		for (let i = original.indexOf("\r"); i !== -1; i = original.indexOf("\r", i + 1)) {
			if (original.charCodeAt(i + 1) === 10) {
				this.crlfAt.push(i - removed++);
				i++;
			} else this.crAt.push(i - removed);
		}
		this.text = original.replace(/\r\n?/g, "\n");
	}

	/** Number of CRLF newlines strictly before view offset `v`. */
	private crlfBefore(v: number): number {
		return countBefore(this.crlfAt, v);
	}

	toOriginal(v: number): number {
		return v + this.crlfBefore(v);
	}

	/** The ending the newlines in view range [start, end) used ("\r\n", "\n", "\r"), or undefined if mixed or none. */
	endingIn(start: number, end: number): Ending | undefined {
		const newlines = countChar(this.text, 10, start, end);
		if (newlines === 0) return undefined;
		const crlf = this.crlfBefore(end) - this.crlfBefore(start);
		const cr = countBefore(this.crAt, end) - countBefore(this.crAt, start);
		if (crlf === newlines) return "\r\n";
		if (cr === newlines) return "\r";
		if (crlf === 0 && cr === 0) return "\n";
		return undefined;
	}
}

/** How many of the ascending offsets are < v. */
function countBefore(at: number[], v: number): number {
	let lo = 0;
	let hi = at.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (at[mid] < v) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

function countChar(s: string, code: number, start: number, end: number): number {
	let n = 0;
	for (let i = start; i < end; i++) if (s.charCodeAt(i) === code) n++;
	return n;
}

/** 1-based line number of view offset `v`. */
export function lineOf(text: string, v: number): number {
	let line = 1;
	for (let i = text.indexOf("\n"); i !== -1 && i < v; i = text.indexOf("\n", i + 1)) line++;
	return line;
}
