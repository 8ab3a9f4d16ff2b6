/**
 * A window of a file's lines, streamed: one pass over the file in fixed chunks that keeps only the
 * lines asked for (each cut at `maxLineBytes`, and no more than `maxBytes` in all), counts every
 * line, hashes the bytes and checks UTF-8, so memory stays bounded by what is shown on any size.
 */
import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import type { LineWindow, WindowRead } from "./types.js";

const CHUNK_BYTES = 1024 * 1024;
const HEAD_BYTES = 8192;

export async function readWindowFrom(h: FileHandle, w: LineWindow): Promise<WindowRead> {
	const hash = createHash("sha256");
	const utf8 = new TextDecoder("utf-8", { fatal: true });
	let validUtf8 = true;
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
	const wanted = () => line >= w.startLine && lines.length < w.maxLines && kept <= w.maxBytes;
	const keep = (piece: Buffer) => {
		currentBytes += piece.length;
		if (!wanted() || currentKept >= w.maxLineBytes) return;
		const part = piece.subarray(0, w.maxLineBytes - currentKept);
		current.push(Buffer.from(part)); // a copy: the chunk buffer is reused
		currentKept += part.length;
	};
	const endLine = () => {
		if (wanted()) {
			const text = Buffer.concat(current);
			lines.push(text);
			lineBytes.push(currentBytes);
			kept += text.length + 1;
		}
		current = [];
		currentBytes = 0;
		currentKept = 0;
		line++;
	};
	const chunk = Buffer.alloc(CHUNK_BYTES);
	for (;;) {
		const { bytesRead } = await h.read(chunk, 0, CHUNK_BYTES, null);
		if (bytesRead === 0) break;
		const data = chunk.subarray(0, bytesRead);
		hash.update(data);
		if (validUtf8) {
			try {
				utf8.decode(data, { stream: true });
			} catch {
				validUtf8 = false;
			}
		}
		if (headBytes < HEAD_BYTES) {
			const part = Buffer.from(data.subarray(0, HEAD_BYTES - headBytes));
			head.push(part);
			headBytes += part.length;
		}
		let from = 0;
		for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10, from)) {
			keep(data.subarray(from, nl));
			endLine();
			from = nl + 1;
		}
		if (from < data.length) keep(data.subarray(from));
		lastByte = data[data.length - 1];
	}
	if (validUtf8) {
		try {
			utf8.decode();
		} catch {
			validUtf8 = false;
		}
	}
	// As the whole-file read splits it: a final "\n" ends the last line, it does not start one.
	if (lastByte !== 10 || line === 1) endLine();
	return {
		head: Buffer.concat(head),
		lines,
		lineBytes,
		totalLines: line - 1,
		sha256: hash.digest("hex"),
		validUtf8,
	};
}
