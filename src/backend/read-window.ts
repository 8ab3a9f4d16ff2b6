/**
 * A window of a file's lines, streamed: one pass over the file in fixed chunks that keeps only the
 * lines asked for, counts every line, hashes the bytes and checks UTF-8 (line-window.ts,
 * utf8-stream.ts), so memory stays bounded by what is shown on any size. The next chunk is being
 * read (on the thread pool) while one is hashed and scanned here.
 *
 * One consistent view: the pass reads exactly the bytes the file had when it was opened (by
 * offset, so what is appended meanwhile is not read), and the hash, the line count and the lines
 * kept are all of those bytes. A file that ends early (truncated) or is rewritten in place while
 * it is read fails the read (CHANGED_ON_DISK) rather than show one version and hash another.
 */
import { createHash } from "node:crypto";
import { fstatSync, read } from "node:fs";
import { promisify } from "node:util";
import { changedWhileRead } from "./changed-errors.js";
import type { ChunkArena } from "./chunk-arena.js";
import { LineWindowScanner } from "./line-window.js";
import { toFileStat } from "./local/stat.js";
import type { FileStat, LaterDigest, LineWindow, WindowRead } from "./types.js";
import { Utf8Checker } from "./utf8-stream.js";

const readAt = promisify(read);
const CHUNK_BYTES = 1024 * 1024;
const HEAD_BYTES = 8192;

/**
 * `fd` is open for reading (the caller closes it); `opened` is its stat right after the open;
 * `path` names the file in errors. The result's `stat` is `opened`: the identity of the bytes read.
 * With an `arena` (the caller's alone until this returns) the chunks are read into it and the
 * lines past the window counted there; without, into buffers of this call's own.
 */
export async function readWindowFrom(
	fd: number,
	opened: FileStat,
	w: LineWindow,
	path: string,
	arena?: ChunkArena,
): Promise<WindowRead> {
	const size = opened.size;
	const hash = createHash("sha256");
	const chunk = arena ? arena.buffers[0].length : Math.min(CHUNK_BYTES, Math.max(size, 1));
	let held: Buffer | undefined;
	const utf8 = new Utf8Checker();
	const scanner = arena ? new LineWindowScanner(w, arena.countNewlines) : new LineWindowScanner(w);
	const head: Buffer[] = [];
	let headBytes = 0;
	const buffers = arena ? arena.buffers : [Buffer.allocUnsafe(chunk), Buffer.allocUnsafe(chunk)];
	let which = 0;
	let pos = 0;
	const readNext = (at: number) => readAt(fd, buffers[which], 0, Math.min(chunk, size - at), at);
	let next: Promise<{ bytesRead: number }> | undefined = size > 0 ? readNext(0) : undefined;
	try {
		while (next) {
			const { bytesRead } = await next;
			next = undefined;
			if (bytesRead === 0) throw changedWhileRead(path); // ended before its size: truncated
			const data = buffers[which].subarray(0, bytesRead);
			pos += bytesRead;
			// Read ahead into the other buffer while this one is hashed and scanned.
			which ^= 1;
			if (pos < size) next = readNext(pos);
			// A file of one chunk keeps a copy of its bytes (about 0.1 ms per MiB; the chunk buffer is
			// the next read's) and is hashed when first asked, or once the event loop is next idle,
			// i.e. after the reply has gone out: SHA-256 takes about 1 ms per MiB here.
			if (size <= chunk) held = Buffer.from(data);
			else hash.update(data);
			utf8.push(data);
			if (headBytes < HEAD_BYTES) {
				head.push(Buffer.from(data.subarray(0, HEAD_BYTES - headBytes)));
				headBytes += head[head.length - 1].length;
			}
			scanner.push(data);
		}
	} finally {
		// An error mid-way: let the read in flight finish before the caller closes the descriptor.
		await next?.catch(() => undefined);
	}
	// Appended bytes are past what was read; anything else that moved the times is a rewrite (or a
	// truncation) during the pass.
	const now = toFileStat(fstatSync(fd, { bigint: true }));
	if (
		now.size < size ||
		(now.size === size && (now.mtimeNs !== opened.mtimeNs || now.ctimeNs !== opened.ctimeNs))
	)
		throw changedWhileRead(path);
	return {
		head: head.length === 1 ? head[0] : Buffer.concat(head),
		...scanner.finish(),
		sha256: held ? new IdleDigest(held) : hash.digest("hex"),
		validUtf8: utf8.end(),
		stat: opened,
	};
}

/**
 * After this long with nobody asking, the hash is taken unasked: an edit that follows a read by
 * more than that (a model's turn) finds it done. A record replaced sooner (the same file read
 * again) never takes it.
 */
const IDLE_HASH_DELAY_MS = 20;

/** The SHA-256 of `bytes`, taken on first use, or unasked once the read is IDLE_HASH_DELAY_MS old. */
class IdleDigest implements LaterDigest {
	private bytes: Buffer | undefined;
	private digest = "";
	private readonly timer: NodeJS.Timeout;

	constructor(bytes: Buffer) {
		this.bytes = bytes;
		this.timer = setTimeout(() => this.hex, IDLE_HASH_DELAY_MS);
		this.timer.unref();
	}

	get hex(): string {
		if (this.bytes) {
			clearTimeout(this.timer);
			this.digest = createHash("sha256").update(this.bytes).digest("hex");
			this.bytes = undefined;
		}
		return this.digest;
	}

	superseded(): void {
		clearTimeout(this.timer);
	}
}
