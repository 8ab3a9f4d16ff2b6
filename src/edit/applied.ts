/**
 * An edit's result (apply.ts's applyEdits): the original text plus its splices, built into a new
 * string, an encoded buffer or the changed window only when asked.
 */
import type { AppliedEdits, ChangeWindow, Matched } from "./apply.js";

/** A located edit on the LF view: where it is and what replaces it. */
export interface Region {
	index: number;
	start: number;
	end: number;
	newText: string;
}

export interface Splice {
	start: number;
	end: number;
	text: string;
}

/** Lines as split("\n") counts them. */
function lineCount(s: string, from = 0, to = s.length): number {
	let n = 0;
	for (let i = s.indexOf("\n", from); i !== -1 && i < to; i = s.indexOf("\n", i + 1)) n++;
	return n + 1;
}

/**
 * An edit's result, kept as the original plus its splices: a 10 MB file is not copied into a new
 * string (nor an LF one for the diff) just to be encoded once and diffed on a few lines.
 */
export class Applied implements AppliedEdits {
	private built?: string;
	private builtLf?: string;

	constructor(
		private readonly original: string,
		readonly beforeLf: string,
		private readonly regions: Region[],
		private readonly splices: Splice[],
		readonly matched: Matched[],
	) {}

	get replacements(): number {
		return this.regions.length;
	}

	get text(): string {
		this.built ??= joinSplices(this.original, this.splices);
		return this.built;
	}

	get afterLf(): string {
		this.builtLf ??= joinSplices(
			this.beforeLf,
			this.regions.map((r) => ({ start: r.start, end: r.end, text: r.newText })),
		);
		return this.builtLf;
	}

	encode(bom: boolean, reuse?: Buffer): Buffer {
		const o = this.original;
		const pieces: string[] = [];
		let cursor = 0;
		for (const sp of this.splices) {
			pieces.push(o.slice(cursor, sp.start), sp.text);
			cursor = sp.end;
		}
		pieces.push(o.slice(cursor));
		const head = bom ? "\uFEFF" : "";
		let size = Buffer.byteLength(head);
		for (const p of pieces) size += Buffer.byteLength(p);
		// One buffer of the final size, each piece encoded straight into it (slices share the original).
		const out = reuse && reuse.length >= size ? reuse.subarray(0, size) : Buffer.allocUnsafe(size);
		let at = out.write(head, 0);
		for (const p of pieces) at += out.write(p, at);
		return out;
	}

	window(context: number): ChangeWindow {
		const before = this.beforeLf;
		const first = this.regions[0];
		const last = this.regions[this.regions.length - 1];
		const lineAt = first.start === 0 ? 0 : before.lastIndexOf("\n", first.start - 1) + 1;
		let start = lineAt;
		for (let k = 0; k < context && start > 0; k++)
			start = (start >= 2 ? before.lastIndexOf("\n", start - 2) : -1) + 1;
		// Past the line holding the last region's end, then `context` more lines (as diffWindow does).
		let end = last.end;
		for (let k = 0; k < context + 1 && end < before.length; k++) {
			const nl = before.indexOf("\n", end);
			end = nl === -1 ? before.length : nl + 1;
		}
		const afterParts: string[] = [];
		let cursor = start;
		let grown = 0;
		for (const r of this.regions) {
			afterParts.push(before.slice(cursor, r.start), r.newText);
			grown += lineCount(r.newText) - lineCount(before, r.start, r.end);
			cursor = r.end;
		}
		afterParts.push(before.slice(cursor, end));
		const beforeLines = lineCount(before);
		return {
			before: before.slice(start, end),
			after: afterParts.join(""),
			lineOffset: lineCount(before, 0, start) - 1,
			beforeLines,
			afterLines: beforeLines + grown,
		};
	}
}

function joinSplices(s: string, splices: Splice[]): string {
	const out: string[] = [];
	let cursor = 0;
	for (const sp of splices) {
		out.push(s.slice(cursor, sp.start), sp.text);
		cursor = sp.end;
	}
	out.push(s.slice(cursor));
	return out.join("");
}
