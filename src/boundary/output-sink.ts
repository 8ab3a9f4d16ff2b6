/**
 * Streaming command output, capped as it arrives. Until the output passes
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
	/** Why the full output could not be kept (the spill file could not be made or written). */
	spillError?: string;
}

/** The end of a truncation note: where the full output is, or why it is not anywhere. */
export function fullOutputNote(s: OutputSnapshot): string {
	return s.fullOutputPath
		? `Full output: ${s.fullOutputPath}`
		: `The full output could not be kept (${s.spillError ?? "no spill file"})`;
}

function describeFailure(e: unknown): string {
	const err = e as NodeJS.ErrnoException;
	const known: Record<string, string> = {
		ENOSPC: "no space left on the device",
		EDQUOT: "disk quota exceeded",
		EACCES: "permission denied",
		EPERM: "operation not permitted",
		EROFS: "read-only file system",
		ENOENT: "the spill directory is gone",
	};
	return err?.code
		? `${err.code}: ${known[err.code] ?? "cannot write the spill file"}`
		: "cannot write the spill file";
}

export class OutputSink {
	private chunks: Buffer[] = [];
	private held = 0;
	private totalBytes = 0;
	private newlines = 0;
	private lastByte = -1;
	private spill: SpillFile | undefined;
	/** Past the limits: only a tail window is held from here on, spilled or not. */
	private overflowed = false;
	private spillError: string | undefined;
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
		if (!this.overflowed && (this.totalBytes > this.maxBytes || this.newlines >= this.maxLines)) {
			this.overflowed = true;
			this.spillSafely(() => {
				this.spill = this.spillDir.open(this.prefix);
				for (const c of this.chunks) this.spill.write(c);
			});
		} else if (this.spill) {
			const file = this.spill;
			this.spillSafely(() => file.write(chunk));
		}
		if (this.overflowed) this.slide();
	}

	/** A failed spill (full disk, refused write) costs the full copy, never the call. */
	private spillSafely(step: () => void): void {
		try {
			step();
		} catch (e) {
			this.spill?.close();
			this.spill = undefined;
			this.spillError = describeFailure(e);
		}
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
		if (this.overflowed && buf.length > this.window) buf = buf.subarray(buf.length - this.window);
		if (this.overflowed) buf = buf.subarray(utf8BoundaryForward(buf, 0));
		// While output is still arriving, the last character may be incomplete: show it next time.
		buf = buf.subarray(0, utf8CompleteEnd(buf));
		let text = buf.toString("utf8");
		// A trailing newline ends the last line; it does not start another one.
		const endsWithNewline = this.lastByte === 10;
		if (endsWithNewline) text = text.slice(0, -1);
		const totalLines = this.totalBytes === 0 ? 0 : this.newlines + (endsWithNewline ? 0 : 1);
		const totals = this.overflowed ? { lines: totalLines, bytes: this.totalBytes } : undefined;
		const truncation = truncateTail(text, { maxLines: this.maxLines, maxBytes: this.maxBytes }, totals);
		if (!this.overflowed) {
			truncation.totalLines = totalLines;
			if (!truncation.truncated) truncation.outputLines = totalLines;
		}
		return {
			content: truncation.content,
			truncation,
			fullOutputPath: this.spill?.path,
			...(this.spillError ? { spillError: this.spillError } : {}),
		};
	}

	close(): void {
		this.spill?.close();
	}
}
