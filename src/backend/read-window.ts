/**
 * A window of a file's lines, streamed: one pass over the file in fixed chunks that keeps only the
 * lines asked for (each cut at `maxLineBytes`, and no more than `maxBytes` in all), counts every
 * line, hashes the bytes and checks UTF-8, so memory stays bounded by what is shown on any size.
 * Past the window a chunk is only hashed, checked and its newlines counted (no per-line work), and
 * the next chunk is being read while one is processed.
 */
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import type { LineWindow, WindowRead } from "./types.js";

const CHUNK_BYTES = 1024 * 1024;
const HEAD_BYTES = 8192;

/** Bytes a UTF-8 sequence starting with `lead` takes (1 for anything that is not a lead byte). */
const sequenceLength = (lead: number) => (lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1);

/**
 * Strict UTF-8 check of a stream in chunks (node's isUtf8 per chunk): a sequence cut by a chunk's
 * end is carried into the next chunk.
 */
function utf8Checker(): { push(data: Buffer): void; end(): boolean } {
	let valid = true;
	let carry: Buffer | undefined;
	return {
		push(data) {
			if (!valid) return;
			let from = 0;
			if (carry) {
				const need = sequenceLength(carry[0]) - carry.length;
				if (data.length < need) {
					carry = Buffer.concat([carry, data]);
					return;
				}
				valid = isUtf8(Buffer.concat([carry, data.subarray(0, need)]));
				carry = undefined;
				from = need;
			}
			// The last up to 3 bytes may begin a sequence the next chunk completes.
			let cut = data.length;
			for (let i = data.length - 1; i >= Math.max(from, data.length - 3); i--) {
				if ((data[i] & 0xc0) === 0x80) continue; // a continuation byte: look further back
				if (i + sequenceLength(data[i]) > data.length) cut = i;
				break;
			}
			if (valid && cut > from) valid = isUtf8(data.subarray(from, cut));
			if (cut < data.length) carry = Buffer.from(data.subarray(cut));
		},
		end: () => valid && carry === undefined,
	};
}

export async function readWindowFrom(h: FileHandle, w: LineWindow): Promise<WindowRead> {
	const hash = createHash("sha256");
	const utf8 = utf8Checker();
	const head: Buffer[] = [];
	let headBytes = 0;
	const lines: Buffer[] = [];
	const lineBytes: number[] = [];
	let kept = 0;
	let current: Buffer[] = [];
	let currentBytes = 0;
	let currentKept = 0;
	let line = 1; // number of the line being read
	let lastByte = -1;
	let pos = 0; // file offset of the chunk being processed
	const selectEnd = w.startLine + (w.selectLines ?? Number.POSITIVE_INFINITY);
	let selStart = w.startLine === 1 ? 0 : -1;
	let selEnd = -1;
	/** Line `line` has just begun after the "\n" at file offset `at`. */
	const began = (at: number) => {
		if (line === w.startLine) selStart = at + 1;
		else if (line === selectEnd) selEnd = at;
	};
	// Once false it stays false (`line` only grows): the rest of the file is counted, not kept.
	const wanted = () => lines.length < w.maxLines && kept <= w.maxBytes;
	const keep = (piece: Buffer) => {
		currentBytes += piece.length;
		if (line < w.startLine || !wanted() || currentKept >= w.maxLineBytes) return;
		const part = piece.subarray(0, w.maxLineBytes - currentKept);
		current.push(Buffer.from(part)); // a copy: the chunk buffer is reused
		currentKept += part.length;
	};
	const endLine = () => {
		if (line >= w.startLine && wanted()) {
			const text = Buffer.concat(current);
			lines.push(text);
			lineBytes.push(currentBytes);
			// Counted as shown: without a "\r" before the "\n" or a BOM, so the window holds more
			// than the byte cap whenever there is more to show.
			const cr = text.length > 0 && text[text.length - 1] === 13 ? 1 : 0;
			const bom = line === 1 && text[0] === 0xef && text[1] === 0xbb && text[2] === 0xbf ? 3 : 0;
			kept += text.length + 1 - cr - bom;
		}
		current = [];
		currentBytes = 0;
		currentKept = 0;
		line++;
	};
	const buffers = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];
	let which = 0;
	let next: Promise<{ bytesRead: number }> | undefined = h.read(buffers[which], 0, CHUNK_BYTES, null);
	try {
		for (;;) {
			const { bytesRead } = await next;
			next = undefined;
			if (bytesRead === 0) break;
			const data = buffers[which].subarray(0, bytesRead);
			// Read ahead into the other buffer while this one is hashed and split.
			which ^= 1;
			next = h.read(buffers[which], 0, CHUNK_BYTES, null);
			hash.update(data);
			utf8.push(data);
			if (headBytes < HEAD_BYTES) {
				const part = Buffer.from(data.subarray(0, HEAD_BYTES - headBytes));
				head.push(part);
				headBytes += part.length;
			}
			let from = 0;
			if (wanted()) {
				for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10, from)) {
					keep(data.subarray(from, nl));
					endLine();
					began(pos + nl);
					from = nl + 1;
					if (!wanted()) break;
				}
			}
			if (!wanted()) {
				// Past the window: only the count of lines matters, and the bytes of the line open now.
				let last = from - 1;
				for (let nl = data.indexOf(10, from); nl >= 0; nl = data.indexOf(10, nl + 1)) {
					line++;
					if (line === selectEnd || line === w.startLine) began(pos + nl);
					last = nl;
				}
				currentBytes = last >= from ? data.length - last - 1 : currentBytes + data.length - from;
			} else if (from < data.length) keep(data.subarray(from));
			lastByte = data[data.length - 1];
			pos += bytesRead;
		}
	} finally {
		// An error mid-way: let the read in flight finish before the caller closes the handle.
		await next?.catch(() => undefined);
	}
	// As the whole-file read splits it: a final "\n" ends the last line, it does not start one.
	if (lastByte !== 10 || line === 1) endLine();
	return {
		head: Buffer.concat(head),
		lines,
		lineBytes,
		totalLines: line - 1,
		selectedBytes: selStart < 0 ? 0 : (selEnd < 0 ? pos - (lastByte === 10 ? 1 : 0) : selEnd) - selStart,
		sha256: hash.digest("hex"),
		validUtf8: utf8.end(),
	};
}
