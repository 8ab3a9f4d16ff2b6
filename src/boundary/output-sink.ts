/**
 * Streaming command output, capped as it arrives (REQUIREMENTS B6, T5). Until the output passes
 * the limits it is held whole; past them every byte goes to a spill file and only a tail window
 * stays in memory.
 */
import type { SpillDir, SpillFile } from "./spill.js";
import {
	DEFAULT_MAX_BYTES,
	DEFAULT_MAX_LINES,
	type TruncationResult,
	truncateTail,
	utf8BoundaryForward,
	utf8CompleteEnd,
} from "./truncate.js";

export interface OutputSnapshot {
	content: string;
	truncation: TruncationResult;
	fullOutputPath?: string;
}

export class OutputSink {
	private chunks: Buffer[] = [];
	private held = 0;
	private totalBytes = 0;
	private newlines = 0;
	private lastByte = -1;
	private spill: SpillFile | undefined;
	private readonly window: number;

	constructor(
		private readonly spillDir: SpillDir,
		private readonly prefix: string,
		private readonly maxLines = DEFAULT_MAX_LINES,
		private readonly maxBytes = DEFAULT_MAX_BYTES,
	) {
		// Twice the byte limit: enough to cut whole lines from the tail after the window slides.
		this.window = maxBytes * 2;
	}

	append(chunk: Buffer): void {
		this.totalBytes += chunk.length;
		for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) this.newlines++;
		if (chunk.length > 0) this.lastByte = chunk[chunk.length - 1];
		this.chunks.push(chunk);
		this.held += chunk.length;
		if (!this.spill && (this.totalBytes > this.maxBytes || this.newlines >= this.maxLines)) {
			this.spill = this.spillDir.open(this.prefix);
			for (const c of this.chunks) this.spill.write(c);
		} else if (this.spill) {
			this.spill.write(chunk);
		}
		if (this.spill) this.slide();
	}

	private slide(): void {
		while (this.chunks.length > 1 && this.held - this.chunks[0].length >= this.window) {
			this.held -= this.chunks.shift()!.length;
		}
	}

	get bytes(): number {
		return this.totalBytes;
	}

	snapshot(): OutputSnapshot {
		let buf = Buffer.concat(this.chunks);
		if (this.spill && buf.length > this.window) buf = buf.subarray(buf.length - this.window);
		if (this.spill) buf = buf.subarray(utf8BoundaryForward(buf, 0));
		// While output is still arriving, the last character may be incomplete: show it next time.
		buf = buf.subarray(0, utf8CompleteEnd(buf));
		let text = buf.toString("utf8");
		// A trailing newline ends the last line; it does not start another one.
		const endsWithNewline = this.lastByte === 10;
		if (endsWithNewline) text = text.slice(0, -1);
		const totalLines = this.totalBytes === 0 ? 0 : this.newlines + (endsWithNewline ? 0 : 1);
		const totals = this.spill ? { lines: totalLines, bytes: this.totalBytes } : undefined;
		const truncation = truncateTail(text, { maxLines: this.maxLines, maxBytes: this.maxBytes }, totals);
		if (!this.spill) {
			truncation.totalLines = totalLines;
			if (!truncation.truncated) truncation.outputLines = totalLines;
		}
		return { content: truncation.content, truncation, fullOutputPath: this.spill?.path };
	}

	close(): void {
		this.spill?.close();
	}
}
