/**
 * Errors of the ssh backend. File operations throw errno-style errors (`code: "ENOENT"`, ...) like
 * node:fs, so the path guard and the tools map them exactly as they do for the local backend;
 * connection trouble is a KeelError BACKEND_UNAVAILABLE that names the fix.
 */
import { KeelError } from "../../boundary/errors.js";

export interface SysError extends Error {
	code: string;
	path?: string;
}

export function sysError(code: string, message: string, path?: string): SysError {
	return Object.assign(new Error(`${code}: ${message}${path ? `, '${path}'` : ""}`), { code, path });
}

/** Known strerror texts (the remote shell runs with LC_ALL=C) and their errno names. */
const STRERROR: [string, string][] = [
	["No such file or directory", "ENOENT"],
	["Not a directory", "ENOTDIR"],
	["Too many levels of symbolic links", "ELOOP"],
	["Permission denied", "EACCES"],
	["Operation not permitted", "EPERM"],
	["Is a directory", "EISDIR"],
	["File exists", "EEXIST"],
	["File name too long", "ENAMETOOLONG"],
	["No space left on device", "ENOSPC"],
	["Read-only file system", "EROFS"],
	["Invalid cross-device link", "EXDEV"],
	["Directory not empty", "ENOTEMPTY"],
];

/** An errno-style error from a remote command's failure message. */
export function shellError(output: string, path?: string): SysError {
	const text = output.trim();
	for (const [msg, code] of STRERROR) if (text.includes(msg)) return sysError(code, msg.toLowerCase(), path);
	return sysError("EIO", text || "remote operation failed", path);
}

/** SFTP v3 status codes (ssh2 puts them in `code`). */
const SFTP_STATUS: Record<number, string> = { 2: "ENOENT", 3: "EACCES", 8: "ENOTSUP" };

export function sftpError(e: unknown, path?: string): Error {
	if (e instanceof KeelError) return e;
	const err = e as { code?: unknown; message?: string };
	if (typeof err?.code === "number") {
		const code = SFTP_STATUS[err.code] ?? "EIO";
		return sysError(code, err.message ?? "sftp failure", path);
	}
	return e as Error;
}

export function unavailable(message: string, cause?: unknown): KeelError {
	return new KeelError("BACKEND_UNAVAILABLE", message, { cause });
}
