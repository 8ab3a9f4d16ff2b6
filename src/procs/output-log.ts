/**
 * One process's output as a byte log addressed by cursor (the byte offset from its first byte).
 * The newest `keepBytes` stay in memory; once the output outgrows them, the whole log goes to a
 * spill file in the session's spill directory and is read back from there. The session's spill
 * budget is shared by its processes: when it is spent, this log stops spilling, and bytes that then
 * leave memory are gone (a read of them answers OUTPUT_DROPPED, naming the limit).
 */
import { closeSync, openSync, readSync } from "node:fs";
import type { SpillDir, SpillFile } from "../boundary/spill.js";

/** What the session's processes may spill in total, and how much they have. */
export interface SpillBudget {
	readonly maxBytes: number;
	usedBytes: number;
}

export interface LogRead {
	bytes: Buffer;
	/** The cursor the bytes start at (later than asked when the asked-for part is gone). */
	from: number;
	/** The cursor after them. */
	next: number;
	/** Bytes between the asked-for cursor and `from` that are no longer kept. */
	dropped: number;
}

export class OutputLog {
	private readonly chunks: Buffer[] = [];
	/** Cursor of the first byte held in memory. */
	private memoryStart = 0;
	private held = 0;
	/** Every byte written so far: the cursor of the next one. */
	total = 0;
	private spill: SpillFile | undefined;
	/** The spill file, still readable after spilling stopped. */
	private spillFile: string | undefined;
	/** The spill file holds [0, spillEnd). */
	private spillEnd = 0;
	/** Why spilling stopped (then bytes leaving memory are lost). */
	spillStopped: string | undefined;

	constructor(
		private readonly spillDir: SpillDir,
		private readonly prefix: string,
		private readonly keepBytes: number,
		private readonly budget: SpillBudget,
	) {}

	append(chunk: Buffer): void {
		if (chunk.length === 0) return;
		this.total += chunk.length;
		this.chunks.push(chunk);
		this.held += chunk.length;
		if (this.spill) this.toSpill([chunk]);
		if (this.held <= this.keepBytes) return;
		if (!this.spill && !this.spillStopped && this.memoryStart === 0) this.startSpill();
		while (this.held > this.keepBytes) {
			const first = this.chunks[0];
			const cut = this.held - this.keepBytes;
			if (cut >= first.length) {
				this.chunks.shift();
				this.held -= first.length;
				this.memoryStart += first.length;
			} else {
				// A copy of the part kept, so the large chunk it came in is freed.
				this.chunks[0] = Buffer.from(first.subarray(cut));
				this.held -= cut;
				this.memoryStart += cut;
			}
		}
	}

	private startSpill(): void {
		if (this.budget.usedBytes + this.held > this.budget.maxBytes) {
			this.stopSpill(this.budgetSpent());
			return;
		}
		try {
			this.spill = this.spillDir.open(this.prefix);
		} catch (e) {
			this.spillStopped = `the spill file could not be made (${(e as NodeJS.ErrnoException).code ?? e})`;
			return;
		}
		this.spillFile = this.spill.path;
		this.toSpill(this.chunks);
	}

	private toSpill(chunks: Buffer[]): void {
		const file = this.spill;
		if (!file) return;
		const size = chunks.reduce((n, c) => n + c.length, 0);
		if (this.budget.usedBytes + size > this.budget.maxBytes) {
			this.stopSpill(this.budgetSpent());
			return;
		}
		try {
			for (const c of chunks) file.write(c);
		} catch (e) {
			this.spill = undefined; // SpillFile.write closed and removed it
			this.spillFile = undefined;
			this.spillEnd = 0;
			this.spillStopped = `the spill file could not be written (${(e as NodeJS.ErrnoException).code ?? e})`;
			return;
		}
		this.budget.usedBytes += size;
		this.spillEnd += size;
	}

	private budgetSpent(): string {
		return `the session's spill limit (maxSpillBytes, ${this.budget.maxBytes} bytes) is reached`;
	}

	private stopSpill(why: string): void {
		this.spill?.close();
		this.spill = undefined;
		this.spillStopped = why;
	}

	/** Where the full log is on disk (while it is whole there). */
	get spillPath(): string | undefined {
		return this.spill?.path;
	}

	/** Bytes held in memory now. */
	get heldBytes(): number {
		return this.held;
	}

	/** The earliest cursor still readable. */
	get oldest(): number {
		return this.spillEnd > 0 ? 0 : this.memoryStart;
	}

	/** Whether the byte at `cursor` was written and is no longer kept (neither spilled nor held). */
	lost(cursor: number): boolean {
		return cursor < this.memoryStart && cursor >= this.spillEnd;
	}

	/** At most `maxBytes` from `cursor` on; a cursor in a dropped stretch reads from after it. */
	read(cursor: number, maxBytes: number): LogRead {
		const at = Math.max(0, Math.min(cursor, this.total));
		if (at >= this.memoryStart) return { ...this.fromMemory(at, maxBytes), dropped: 0 };
		if (at < this.spillEnd && this.spillFile) {
			const end = Math.min(this.spillEnd, at + maxBytes);
			return { bytes: this.fromFile(this.spillFile, at, end - at), from: at, next: end, dropped: 0 };
		}
		return { ...this.fromMemory(this.memoryStart, maxBytes), dropped: this.memoryStart - at };
	}

	private fromMemory(at: number, maxBytes: number): { bytes: Buffer; from: number; next: number } {
		const parts: Buffer[] = [];
		let pos = this.memoryStart;
		let want = maxBytes;
		for (const c of this.chunks) {
			const end = pos + c.length;
			if (end > at && want > 0) {
				const start = Math.max(at, pos) - pos;
				const slice = c.subarray(start, start + Math.min(c.length - start, want));
				parts.push(slice);
				want -= slice.length;
			}
			pos = end;
		}
		const bytes = Buffer.concat(parts);
		return { bytes, from: at, next: at + bytes.length };
	}

	private fromFile(path: string, at: number, length: number): Buffer {
		const buf = Buffer.alloc(length);
		const fd = openSync(path, "r");
		try {
			let got = 0;
			while (got < length) {
				const n = readSync(fd, buf, got, length - got, at + got);
				if (n === 0) break;
				got += n;
			}
			return buf.subarray(0, got);
		} finally {
			closeSync(fd);
		}
	}

	close(): void {
		this.spill?.close();
	}
}
