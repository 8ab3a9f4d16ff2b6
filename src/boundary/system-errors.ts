/**
 * A Node or system error (ENOENT, EACCES, ENOSPC, ...) in keel's words: an errno that is a fact
 * about a path becomes that fact (path-facts.ts); the rest are named by what failed, never by the
 * raw message, which may carry internals.
 */
import { type AfterCommitError, type ErrorCode, KeelError } from "./errors.js";
import { PATH_FACT_WORDS, type PathFact, PathFactError } from "./path-facts.js";

/** The KeelError for a commit that is in place although a step after it failed. */
export function committedButError(e: AfterCommitError, shown: string): KeelError {
	const cause = fromSystemError(e.cause, shown);
	const code = cause.code === "NOT_FOUND" || cause.code === "INTERNAL" ? "IO_ERROR" : cause.code;
	const errno = (e.cause as NodeJS.ErrnoException)?.code;
	return new KeelError(
		code,
		`${shown} was changed: the new content is in place, but the system reported an error making it durable${errno ? ` (${errno})` : ""}; check the disk before relying on it, and do not redo the change.`,
		{ path: shown, cause: e.cause, details: { committed: true } },
	);
}

/** The errno codes that are facts about a path (path-facts.ts). */
const ERRNO_FACTS: Record<string, PathFact> = {
	ENOENT: "not-found",
	EISDIR: "is-a-directory",
	ENOTDIR: "not-a-directory",
	EACCES: "permission-denied",
	EPERM: "permission-denied",
	ELOOP: "link-loop",
	EEXIST: "already-exists",
	ENAMETOOLONG: "name-too-long",
};

/** Map a Node/system error (ENOENT, EISDIR, ...) on `path` to a KeelError: a path fact when it is one. */
export function fromSystemError(e: unknown, path?: string): KeelError {
	if (e instanceof KeelError) return e;
	const errno = (e as NodeJS.ErrnoException | undefined)?.code;
	const fact = typeof errno === "string" ? ERRNO_FACTS[errno] : undefined;
	if (fact) {
		if (path !== undefined) return new PathFactError(fact, path);
		const { code, words } = PATH_FACT_WORDS[fact];
		return new KeelError(code, words("the path given", {}));
	}
	return unclassified(e, path);
}

/**
 * The rest, in keel's words: a system error's code is named (it says what failed, unlike the raw
 * message, which may carry internals); an error without one is a keel bug or a resource limit and
 * is reported as such. The original stays in `cause` for hosts and logs, never in the message.
 */
function unclassified(e: unknown, path: string | undefined): KeelError {
	const err = e as NodeJS.ErrnoException | undefined;
	const code = typeof err?.code === "string" ? err.code : undefined;
	const on = path ? ` on ${path}` : "";
	const init = { path, cause: e };
	const known = code ? SYSTEM_CODES[code] : undefined;
	if (known) return new KeelError(known[0], `${known[1]}${on}${known[2] ? `; ${known[2]}` : ""}.`, init);
	if (code && /^E[A-Z0-9]+$/.test(code))
		return new KeelError(
			"IO_ERROR",
			`The system refused the operation${on} (${code}); retry, or try another way.`,
			init,
		);
	const message = err instanceof Error ? err.message : "";
	if (err instanceof SyntaxError && message.startsWith("Invalid regular expression")) {
		return new KeelError(
			"INVALID_PATTERN",
			"The pattern is too large or too complex for the search engine; use a shorter or simpler pattern.",
			init,
		);
	}
	if (
		err instanceof RangeError &&
		/string length|allocation failed|too large|Maximum call stack/i.test(message)
	) {
		return new KeelError(
			"TOO_LARGE",
			`The data${on} is too large to handle in one call; work on a smaller part (a narrower path, an offset and limit, or a script).`,
			init,
		);
	}
	return new KeelError(
		"INTERNAL",
		"keel hit an internal error running this call; retry it, or reach the same result another way.",
		init,
	);
}

/** System error codes beyond the path ones above: [code, what happened, what to do]. */
const SYSTEM_CODES: Record<string, [ErrorCode, string, string?]> = {
	E2BIG: [
		"INVALID_ARGS",
		"The command or its arguments are too large to start a process",
		"write large input to a file and pass the file's path instead",
	],
	ENOSPC: ["IO_ERROR", "No space left on the device", "free some space, then retry"],
	EDQUOT: ["IO_ERROR", "The disk quota is exhausted", "free some space, then retry"],
	EFBIG: ["TOO_LARGE", "The file would be too large for its file system", "write less data"],
	EROFS: ["PERMISSION_DENIED", "The file system is read-only", "write somewhere else"],
	EMFILE: ["IO_ERROR", "Too many open files", "retry in a moment"],
	ENFILE: ["IO_ERROR", "Too many open files on this system", "retry in a moment"],
	EBUSY: ["IO_ERROR", "The file or device is busy", "retry in a moment"],
	ETXTBSY: ["IO_ERROR", "The file is a program that is running", "retry once it has exited"],
	EAGAIN: ["IO_ERROR", "The resource is temporarily unavailable", "retry in a moment"],
	ENOMEM: ["IO_ERROR", "Out of memory", "work on a smaller part"],
	EIO: ["IO_ERROR", "The device reported an I/O error", "retry; if it persists the storage is failing"],
	ENOTEMPTY: ["IO_ERROR", "The directory is not empty"],
	EXDEV: ["IO_ERROR", "The operation cannot cross file systems"],
	ENXIO: ["NOT_A_FILE", "No device or reader behind the path", "use a regular file"],
	ENODEV: ["NOT_A_FILE", "No device behind the path", "use a regular file"],
	ETIMEDOUT: ["TIMEOUT", "The operation timed out", "retry"],
	ECONNRESET: ["BACKEND_UNAVAILABLE", "The connection to the backend was reset", "retry"],
	ECONNREFUSED: ["BACKEND_UNAVAILABLE", "The backend refused the connection", "check that it is running"],
	EPIPE: ["BACKEND_UNAVAILABLE", "The connection to a process or backend was closed", "retry"],
	ERR_STRING_TOO_LONG: ["TOO_LARGE", "The data is too large to handle as text", "work on a smaller part"],
	ERR_FS_FILE_TOO_LARGE: ["TOO_LARGE", "The file is too large to read whole", "read part of it"],
};
