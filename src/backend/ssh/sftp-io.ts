/** Promise forms of the SFTP calls the ssh backend uses, with pipelined whole-file reads and writes. */
import type { FileEntryWithStats, OpenMode, SFTPWrapper, Stats } from "ssh2";
import { sameObject } from "../temp-names.js";
import type { FileStat } from "../types.js";
import { sftpError, sysError } from "./errors.js";
import { lstatOf, swapped } from "./fs-replies.js";
import type { Live } from "./live.js";

/** Bytes per READ/WRITE request and requests in flight: keeps the link busy without a whole-file burst. */
const CHUNK = 64 * 1024;
const IN_FLIGHT = 16;
const SFTP_EOF = 1;

function call<T>(
	path: string,
	fn: (cb: (err: Error | undefined | null, value?: T) => void) => void,
): Promise<T> {
	return new Promise((resolve, reject) => {
		try {
			fn((err, value) => (err ? reject(sftpError(err, path)) : resolve(value as T)));
		} catch (e) {
			reject(sftpError(e, path));
		}
	});
}

export const sftpOpen = (s: SFTPWrapper, path: string, flags: OpenMode, mode?: number) =>
	call<Buffer>(path, (cb) => s.open(path, flags, mode === undefined ? {} : { mode }, cb));
export const sftpClose = (s: SFTPWrapper, h: Buffer, path: string) =>
	call<void>(path, (cb) => s.close(h, cb));
export const sftpFchmod = (s: SFTPWrapper, h: Buffer, mode: number, path: string) =>
	call<void>(path, (cb) => s.fchmod(h, mode, cb));
export const sftpFsync = (s: SFTPWrapper, h: Buffer, path: string) =>
	call<void>(path, (cb) => s.ext_openssh_fsync(h, (err) => cb(err)));
export const sftpHardlink = (s: SFTPWrapper, from: string, to: string) =>
	call<void>(to, (cb) => s.ext_openssh_hardlink(from, to, cb));
export const sftpUnlink = (s: SFTPWrapper, path: string) => call<void>(path, (cb) => s.unlink(path, cb));
export const sftpRmdir = (s: SFTPWrapper, path: string) => call<void>(path, (cb) => s.rmdir(path, cb));
export const sftpReadlink = (s: SFTPWrapper, path: string) =>
	call<string>(path, (cb) => s.readlink(path, cb));
export const sftpRealpath = (s: SFTPWrapper, path: string) =>
	call<string>(path, (cb) => s.realpath(path, cb));
export const sftpStat = (s: SFTPWrapper, path: string) => call<Stats>(path, (cb) => s.stat(path, cb));
export const sftpLstat = (s: SFTPWrapper, path: string) => call<Stats>(path, (cb) => s.lstat(path, cb));
export const sftpReaddir = (s: SFTPWrapper, path: string) =>
	call<FileEntryWithStats[]>(path, (cb) => s.readdir(path, cb));
export const sftpWriteFile = (s: SFTPWrapper, path: string, data: Buffer) =>
	call<void>(path, (cb) => s.writeFile(path, data, { mode: 0o600 }, cb));

/** Write all of `data` at offset 0, several requests in flight (the server applies them in order). */
export async function writeAll(s: SFTPWrapper, h: Buffer, data: Uint8Array, path: string): Promise<void> {
	const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
	let next = 0;
	const worker = async () => {
		while (next < buf.length) {
			const at = next;
			const len = Math.min(CHUNK, buf.length - at);
			next += len;
			await call<void>(path, (cb) => s.write(h, buf, at, len, at, cb));
		}
	};
	await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, Math.ceil(buf.length / CHUNK)) }, worker));
}

function readAt(s: SFTPWrapper, h: Buffer, at: number, path: string): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const buf = Buffer.allocUnsafe(CHUNK);
		s.read(h, buf, 0, CHUNK, at, (err, n) => {
			if (err && (err as { code?: number }).code !== SFTP_EOF) reject(sftpError(err, path));
			else resolve(buf.subarray(0, err ? 0 : n));
		});
	});
}

/**
 * Read to end of file. Chunks are requested ahead in windows that double from one (a small file
 * costs one request); a short chunk ends the file, as regular files return full reads until EOF.
 */
export async function readAll(s: SFTPWrapper, h: Buffer, path: string): Promise<Buffer> {
	const parts: Buffer[] = [];
	let at = 0;
	for (let width = 1; ; width = Math.min(width * 2, IN_FLIGHT)) {
		const window = await Promise.all(
			Array.from({ length: width }, (_, i) => readAt(s, h, at + i * CHUNK, path)),
		);
		for (const chunk of window) {
			parts.push(chunk);
			at += chunk.length;
			if (chunk.length < CHUNK) return Buffer.concat(parts, at);
		}
	}
}

/** The whole file over SFTP, checked (once open) to be a regular file and, with `expect`, that one. */
export async function readSftp(live: Live, p: string, expect: FileStat | undefined): Promise<Buffer> {
	const h = await sftpOpen(live.sftp, p, "r");
	// SFTP opens follow links: check, once the file is open (alongside the read), that the path is
	// a regular file and, with `expect`, the very object the guard checked.
	const check = lstatOf(live, p);
	check.catch(() => {});
	let data: Buffer;
	try {
		data = await readAll(live.sftp, h, p);
	} finally {
		await sftpClose(live.sftp, h, p).catch(() => {});
	}
	const now = await check;
	if (now.type === "symlink") throw sysError("ELOOP", "too many levels of symbolic links", p);
	if (expect && !sameObject(now, expect)) throw swapped(p);
	return data;
}
