/**
 * Reading, hashing and writing the bytes of local files for the commit and the reads
 * (local/commit.ts, local/fs.ts): small files with synchronous calls, larger ones through the
 * thread pool, hashes through one reused chunk.
 */
import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, read, readSync, write, writeSync } from "node:fs";
import type * as fsp from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import type { Expected } from "../types.js";

/** Files up to this size are hashed from one read: a stream costs ~0.4 ms more per small file. */
const ONE_READ_HASH_BYTES = 1024 * 1024;

/**
 * Up to this size a file is read, written and hashed with synchronous calls: from the page cache
 * each is a few µs, far less than the thread-pool round trip (~20-60 µs on a loaded machine) an
 * async call costs. Only the fsyncs, which wait for the disk, always go to the pool.
 */
export const SYNC_IO_BYTES = 64 * 1024;

/** O_NONBLOCK: a FIFO swapped in for a file must not hang the open. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

const writeFd = promisify(write);
const readFdAt = promisify(read);
const HASH_CHUNK_BYTES = 1024 * 1024;

/** Everything from offset 0 of `fd` to its end, synchronously (for small files). */
export function readAllSync(fd: number, sizeHint: number): Buffer {
	let buf = Buffer.allocUnsafe(sizeHint + 1);
	let n = 0;
	for (;;) {
		if (n === buf.length) {
			const grown = Buffer.allocUnsafe(buf.length * 2);
			buf.copy(grown, 0, 0, n);
			buf = grown;
		}
		const got = readSync(fd, buf, n, buf.length - n, n);
		if (got === 0) break;
		n += got;
		// A short read of a regular file is its end: saves the read(2) that would return 0.
		if (n < buf.length) break;
	}
	return buf.subarray(0, n);
}

/**
 * The first `size` bytes of `fd` (the size it had when opened), synchronously when small; null when
 * it ends before them (truncated meanwhile). What is appended meanwhile is not read.
 */
export async function readSized(fd: number, size: number): Promise<Buffer | null> {
	const buf = Buffer.allocUnsafe(size);
	for (let n = 0; n < size; ) {
		const got =
			size <= SYNC_IO_BYTES
				? readSync(fd, buf, n, size - n, n)
				: (await readFdAt(fd, buf, n, size - n, n)).bytesRead;
		if (got === 0) return null;
		n += got;
	}
	return buf;
}

/** sha256 of the file open at `fd`, from offset 0; `size` picks one read or a stream. */
async function hashFd(fd: number, size: number): Promise<string> {
	const hash = createHash("sha256");
	if (size <= SYNC_IO_BYTES) return hash.update(readAllSync(fd, size)).digest("hex");
	// One chunk buffer reused: a stream's fresh 64 KB chunks would leave the file's size in garbage.
	const chunk = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
	for (let at = 0; ; ) {
		const { bytesRead } = await readFdAt(fd, chunk, 0, chunk.length, at);
		if (bytesRead === 0) break;
		hash.update(chunk.subarray(0, bytesRead));
		at += bytesRead;
	}
	return hash.digest("hex");
}

/**
 * True when the file open at `fd` holds the bytes `expect` was planned on: a small file is compared
 * byte for byte with them when the caller kept them (no hash of either side), otherwise by hash.
 */
export async function holdsExpected(fd: number, size: number, expect: Expected): Promise<boolean> {
	if (expect.bytes && size <= SYNC_IO_BYTES) return readAllSync(fd, size).equals(expect.bytes);
	return (await hashFd(fd, size)) === expect.sha256;
}

export async function hashHandle(h: fsp.FileHandle): Promise<string> {
	const hash = createHash("sha256");
	if ((await h.stat()).size <= ONE_READ_HASH_BYTES) hash.update(await h.readFile());
	else await pipeline(h.createReadStream({ autoClose: false, start: 0 }), hash);
	return hash.digest("hex");
}

export async function hashPath(path: string): Promise<string> {
	const fd = openSync(path, READ_FLAGS);
	try {
		return await hashFd(fd, fstatSync(fd).size);
	} finally {
		closeSync(fd);
	}
}

/** Write all of `data` at the start of the new file `fd`: synchronously when small. */
export async function writeAll(fd: number, data: Uint8Array): Promise<void> {
	let off = 0;
	while (off < data.length) {
		const left = data.length - off;
		off +=
			left <= SYNC_IO_BYTES
				? writeSync(fd, data, off, left)
				: (await writeFd(fd, data, off, left)).bytesWritten;
	}
}
