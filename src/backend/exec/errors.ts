/**
 * Failures of the helper scripts, as the errors the rest of keel expects: errno-style errors
 * (`code: "ENOENT"`, ...) for what the path guard and fromSystemError interpret, KeelErrors for
 * keel's own conditions. Scripts exit with the codes below for what they detect themselves; for
 * failures of coreutils the message (LC_ALL=C) names the errno.
 */
import type { KeelError } from "../../boundary/errors.js";
import { pathFact } from "../../boundary/path-facts.js";
import { changed as changedError, swapped as swappedError } from "../changed-errors.js";
import type { ScriptResult } from "./transport.js";

/** Exit statuses the scripts use for conditions they detect themselves. */
export const EXIT = {
	ENOENT: 100,
	ENOTDIR: 101,
	ELOOP: 102,
	EISDIR: 103,
	EINVAL: 104,
	EXISTS: 105,
	CHANGED: 106,
	SWAPPED: 107,
	SOURCE_CHANGED: 108,
	PARTIAL: 109,
	/** A replace refused: keel could not keep the file's owner or attributes (replace-py.ts). */
	DENIED: 110,
} as const;

const ERRNO_BY_EXIT: Record<number, string> = {
	[EXIT.ENOENT]: "ENOENT",
	[EXIT.ENOTDIR]: "ENOTDIR",
	[EXIT.ELOOP]: "ELOOP",
	[EXIT.EISDIR]: "EISDIR",
	[EXIT.EINVAL]: "EINVAL",
};

/** strerror(3) texts (C locale) → errno names. */
const ERRNO_BY_MESSAGE: [string, string][] = [
	["No such file", "ENOENT"], // dash says "No such file", coreutils "No such file or directory"
	["Not a directory", "ENOTDIR"],
	["Too many levels of symbolic links", "ELOOP"],
	["Is a directory", "EISDIR"],
	["Permission denied", "EACCES"],
	["Operation not permitted", "EPERM"],
	["File exists", "EEXIST"],
	["File name too long", "ENAMETOOLONG"],
	["No space left on device", "ENOSPC"],
	["Read-only file system", "EROFS"],
	["Invalid argument", "EINVAL"],
	["Directory not empty", "ENOTEMPTY"],
];

/** An Error shaped like Node's system errors, so `fromSystemError` and the guard understand it. */
export function errnoError(code: string, path: string, detail?: string): NodeJS.ErrnoException {
	const err: NodeJS.ErrnoException = new Error(`${code}: ${detail?.trim() || code}, ${path}`);
	err.code = code;
	err.path = path;
	return err;
}

export { changedError, swappedError };

/** The error for a script that did not exit 0. */
export function scriptError(r: ScriptResult, path: string): Error {
	if (r.exitCode === EXIT.CHANGED) return changedError(path);
	if (r.exitCode === EXIT.SWAPPED) return swappedError(path);
	const byExit = r.exitCode === null ? undefined : ERRNO_BY_EXIT[r.exitCode];
	if (byExit) return errnoError(byExit, path, r.stderr);
	for (const [text, code] of ERRNO_BY_MESSAGE) {
		if (r.stderr.includes(text)) return errnoError(code, path, r.stderr);
	}
	return pathFact("operation-failed", path, { exitCode: r.exitCode, output: r.stderr.trim() });
}

/**
 * A replace refused by replace-py.ts (EXIT.DENIED), from its one line: `readonly`, `owner UID GID`
 * or `attr WHAT NAME (ERRNO)`. PERMISSION_DENIED, retry class change-approach: nothing changed.
 */
export function keepRefused(path: string, line: string): KeelError {
	const [kind, ...rest] = line.trim().split(" ");
	if (kind === "readonly") return pathFact("not-writable-in-place", path);
	if (kind === "owner")
		return pathFact("owner-not-kept", path, { uid: Number(rest[0]), gid: Number(rest[1]) });
	return pathFact("attributes-not-kept", path, { detail: rest.join(" ").slice(0, 300) });
}
