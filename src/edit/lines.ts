/**
 * Line offsets of an LF text, built once per edit call and only when a rung past "exact" needs
 * them. Line i is [start(i), end(i)); end is the offset of its "\n" or the end of the text. A text
 * ending in "\n" has a last, empty line after it.
 */
export class LineIndex {
	private readonly starts: number[] = [0];

	constructor(readonly text: string) {
		for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.starts.push(i + 1);
	}

	get count(): number {
		return this.starts.length;
	}

	start(i: number): number {
		return this.starts[i];
	}

	end(i: number): number {
		return i + 1 < this.starts.length ? this.starts[i + 1] - 1 : this.text.length;
	}

	/** True when line i is followed by a line break. */
	hasBreak(i: number): boolean {
		return i + 1 < this.starts.length;
	}

	line(i: number): string {
		return this.text.slice(this.starts[i], this.end(i));
	}

	/** The line holding offset `v`. */
	at(v: number): number {
		let lo = 0;
		let hi = this.starts.length - 1;
		while (lo < hi) {
			const mid = (lo + hi + 1) >> 1;
			if (this.starts[mid] <= v) lo = mid;
			else hi = mid - 1;
		}
		return lo;
	}
}
