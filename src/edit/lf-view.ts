/**
 * An LF-only view of a text whose lines may end in CRLF, with offset mapping back to the original.
 * Edits match against the view and splice into the original, so untouched lines keep their own
 * endings byte for byte.
 */
export class LfView {
	readonly text: string;
	/** View offsets of the "\n" characters that were "\r\n" in the original, ascending. */
	private readonly crlfAt: number[] = [];

	constructor(readonly original: string) {
		if (!original.includes("\r\n")) {
			this.text = original;
			return;
		}
		let removed = 0;
		for (let i = original.indexOf("\r\n"); i !== -1; i = original.indexOf("\r\n", i + 2)) {
			this.crlfAt.push(i + 1 - ++removed);
		}
		this.text = original.replace(/\r\n/g, "\n");
	}

	/** Number of CRLF newlines strictly before view offset `v`. */
	private crlfBefore(v: number): number {
		let lo = 0;
		let hi = this.crlfAt.length;
		while (lo < hi) {
			const mid = (lo + hi) >> 1;
			if (this.crlfAt[mid] < v) lo = mid + 1;
			else hi = mid;
		}
		return lo;
	}

	toOriginal(v: number): number {
		return v + this.crlfBefore(v);
	}

	/** The ending the newlines in view range [start, end) used: "\r\n", "\n", or undefined if mixed or none. */
	endingIn(start: number, end: number): "\r\n" | "\n" | undefined {
		const newlines = countChar(this.text, 10, start, end);
		if (newlines === 0) return undefined;
		const crlf = this.crlfBefore(end) - this.crlfBefore(start);
		if (crlf === newlines) return "\r\n";
		if (crlf === 0) return "\n";
		return undefined;
	}
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
