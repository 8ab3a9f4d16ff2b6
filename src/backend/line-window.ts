/**
 * The line work of a streamed read (read-window.ts), chunk by chunk: skip to the window's first
 * line, keep its lines (each cut at `maxLineBytes`, no more than `maxLines` and `maxBytes` in all),
 * then only count the rest. Before the window a chunk costs one native memchr per line (Buffer
 * indexOf), after it one SIMD count per chunk (chunk-arena.ts; indexOf per line without an
 * arena), and nothing else: no decoding, no splitting, no copies.
 *
 * A class with its loops in methods, not closures made per call: V8 holds a closure's optimized
 * code weakly, so after a full GC (the bench's GC-each mode, or a busy heap) per-call closures and
 * the function that made them were re-optimized and deoptimized on every call, running the
 * 100,000-line count loop in the interpreter.
 */
import type { LineWindow } from "./types.js";

const NL = 10;

/** Newlines in `data` from `from` on: one memchr a line (chunk-arena.ts has the SIMD count). */
export function countNewlinesByIndexOf(data: Buffer, from: number): number {
	let n = 0;
	for (let at = data.indexOf(NL, from); at >= 0; at = data.indexOf(NL, at + 1)) n++;
	return n;
}

export class LineWindowScanner {
	readonly lines: Buffer[] = [];
	/** Full byte length of each kept line, without its "\n" and a "\r" before it (as the line is shown). */
	readonly lineBytes: number[] = [];
	private readonly startLine: number;
	private readonly maxLines: number;
	private readonly maxBytes: number;
	private readonly maxLineBytes: number;
	/** The line after the selection (Infinity: the selection runs to the end). */
	private readonly selectEnd: number;
	/** Number of the line being read. */
	private line = 1;
	/** Bytes kept so far, counted as shown (see endLine). */
	private kept = 0;
	/**
	 * Whether lines are still kept (fewer than maxLines, no more than maxBytes). Once false it
	 * stays false: the rest of the file is counted, not kept. A field, not a method: a small
	 * method's optimized code was dropped and rebuilt after every full GC.
	 */
	private wanted: boolean;
	private current: Buffer[] = [];
	private currentBytes = 0;
	private currentKept = 0;
	/** The last byte of the open line so far (-1: none yet). */
	private currentLast = -1;
	/** File offsets of the selection's first byte and of the "\n" after it (-1: not reached). */
	private selStart: number;
	private selEnd = -1;
	/** File offset of the chunk being scanned, then the bytes scanned. */
	private pos = 0;
	private lastByte = -1;

	/** How the lines past the window are counted (chunk-arena.ts's SIMD count where it can). */
	private readonly countNewlines: (data: Buffer, from: number) => number;

	constructor(w: LineWindow, countNewlines = countNewlinesByIndexOf) {
		this.countNewlines = countNewlines;
		this.startLine = w.startLine;
		this.maxLines = w.maxLines;
		this.maxBytes = w.maxBytes;
		this.maxLineBytes = w.maxLineBytes;
		this.selectEnd = w.startLine + (w.selectLines ?? Number.POSITIVE_INFINITY);
		this.selStart = w.startLine === 1 ? 0 : -1;
		this.wanted = w.maxLines > 0 && w.maxBytes >= 0;
	}

	push(data: Buffer): void {
		let from = 0;
		if (this.line < this.startLine) from = this.skip(data);
		if (from < data.length && this.wanted) from = this.keepLines(data, from);
		if (from < data.length) {
			if (this.selEnd < 0 && this.selectEnd !== Number.POSITIVE_INFINITY)
				from = this.findSelectEnd(data, from);
			this.line += this.countNewlines(data, from);
		}
		if (data.length > 0) this.lastByte = data[data.length - 1];
		this.pos += data.length;
	}

	/** Before the window: find the "\n" that begins line `startLine`. Returns where scanning goes on. */
	private skip(data: Buffer): number {
		for (let at = data.indexOf(NL); at >= 0; at = data.indexOf(NL, at + 1)) {
			if (++this.line === this.startLine) {
				this.selStart = this.pos + at + 1;
				return at + 1;
			}
		}
		return data.length;
	}

	/** In the window: keep each line. Returns where counting goes on (data.length: all kept). */
	private keepLines(data: Buffer, from: number): number {
		for (let at = data.indexOf(NL, from); at >= 0; at = data.indexOf(NL, from)) {
			this.keep(data, from, at);
			this.endLine();
			if (this.line === this.selectEnd) this.selEnd = this.pos + at;
			from = at + 1;
			if (!this.wanted) return from;
		}
		this.keep(data, from, data.length);
		return data.length;
	}

	/** Past the window, within the selection: find the "\n" that ends the selection's last line. */
	private findSelectEnd(data: Buffer, from: number): number {
		for (let at = data.indexOf(NL, from); at >= 0; at = data.indexOf(NL, at + 1)) {
			if (++this.line === this.selectEnd) {
				this.selEnd = this.pos + at;
				return at + 1;
			}
		}
		return data.length;
	}

	private keep(data: Buffer, from: number, to: number): void {
		this.currentBytes += to - from;
		if (to > from) this.currentLast = data[to - 1];
		const room = this.maxLineBytes - this.currentKept;
		if (room <= 0 || to === from) return;
		const end = Math.min(to, from + room);
		this.current.push(Buffer.from(data.subarray(from, end))); // a copy: the chunk buffer is reused
		this.currentKept += end - from;
	}

	private endLine(): void {
		if (this.line >= this.startLine && this.wanted) {
			const text = this.current.length === 1 ? this.current[0] : Buffer.concat(this.current);
			this.lines.push(text);
			// Without a final "\r" even when the kept part is cut before it.
			this.lineBytes.push(this.currentBytes - (this.currentLast === 13 ? 1 : 0));
			// Counted as shown: without a "\r" before the "\n" or a BOM, so the window holds more
			// than the byte cap whenever there is more to show.
			const cr = text.length > 0 && text[text.length - 1] === 13 ? 1 : 0;
			const bom = this.line === 1 && text[0] === 0xef && text[1] === 0xbb && text[2] === 0xbf ? 3 : 0;
			this.kept += text.length + 1 - cr - bom;
			this.wanted = this.lines.length < this.maxLines && this.kept <= this.maxBytes;
		}
		this.current = [];
		this.currentBytes = 0;
		this.currentKept = 0;
		this.currentLast = -1;
		this.line++;
	}

	/** After the last chunk: the window's lines, the file's line count and the selection's bytes. */
	finish(): { lines: Buffer[]; lineBytes: number[]; totalLines: number; selectedBytes: number } {
		// As the whole-file read splits it: a final "\n" ends the last line, it does not start one.
		if (this.lastByte !== NL || this.line === 1) this.endLine();
		const end = this.selEnd < 0 ? this.pos - (this.lastByte === NL ? 1 : 0) : this.selEnd;
		return {
			lines: this.lines,
			lineBytes: this.lineBytes,
			totalLines: this.line - 1,
			selectedBytes: this.selStart < 0 ? 0 : end - this.selStart,
		};
	}
}
