/**
 * KeelError and the failure catalogue.
 * Codes are stable strings; each is classified by what the caller should do next.
 */
import type { FileStat } from "../backend/types.js";
import { PATH_FACT_WORDS, type PathFact, type PathFactExtras, pathFactMessage } from "./path-facts.js";

/** What a caller should do after an error: retry as is, change approach, or retarget (another path or tool). */
export type RetryClass = "retry" | "change-approach" | "retarget";

/** Every stable error code and its classification. Adding a code means adding it here. */
export const ERROR_CATALOGUE = {
	INVALID_ARGS: "change-approach",
	UNKNOWN_TOOL: "change-approach",
	PATH_INVALID: "retarget",
	PATH_OUTSIDE_ROOTS: "retarget",
	PATH_READ_ONLY: "retarget",
	PATH_PROTECTED: "retarget",
	PATH_LOOP: "retarget",
	NOT_FOUND: "retarget",
	IS_DIRECTORY: "retarget",
	NOT_DIRECTORY: "retarget",
	NOT_A_FILE: "retarget",
	PERMISSION_DENIED: "change-approach",
	BINARY_FILE: "change-approach",
	OFFSET_OUT_OF_RANGE: "change-approach",
	NO_MATCH: "change-approach",
	AMBIGUOUS_MATCH: "change-approach",
	EDIT_OVERLAP: "change-approach",
	NO_CHANGE: "change-approach",
	ENCODING_UNSAFE: "change-approach",
	PLACEHOLDER_TEXT: "change-approach",
	SYNTAX_ERROR: "change-approach",
	STALE_READ: "retry",
	NOT_READ: "retry",
	CHANGED_ON_DISK: "retry",
	/** Another process holds the file open for writing, or holds keel's commit lock on its directory. */
	FILE_BUSY: "retry",
	WRITE_COLLISION: "retarget",
	COMMAND_FAILED: "change-approach",
	COMMAND_REFUSED: "change-approach",
	INVALID_PATTERN: "change-approach",
	TOO_LARGE: "change-approach",
	TIMEOUT: "retry",
	ABORTED: "retry",
	BACKEND_UNAVAILABLE: "retry",
	/** The backend cannot do this at all (a process handle on a backend without them). */
	UNSUPPORTED: "change-approach",
	/** The session already runs its most live processes: stop one first. */
	PROCESS_LIMIT: "change-approach",
	/** No process of this session has that id. */
	UNKNOWN_PROCESS: "retarget",
	/** The output asked for is no longer kept (past what is held and spilled). */
	OUTPUT_DROPPED: "change-approach",
	/** A checkpoint restore would overwrite a change keel's calls did not make (or cannot put a path back). */
	RESTORE_CONFLICT: "change-approach",
	/** No checkpoint of this session has that id (it was never taken, or was dropped by a budget). */
	UNKNOWN_CHECKPOINT: "retarget",
	IO_ERROR: "retry",
	INTERNAL: "retry",
} as const satisfies Record<string, RetryClass>;

/** A stable error code (a key of ERROR_CATALOGUE). */
export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface KeelErrorInit {
	path?: string;
	payloadRef?: string;
	/** Extra structured facts for hosts (exit code, partial output, ...). */
	details?: Record<string, unknown>;
	cause?: unknown;
}

/** keel's one error type: a stable code, its retry class, a message for the model, and structured facts. */
export class KeelError extends Error {
	readonly code: ErrorCode;
	readonly retry: RetryClass;
	readonly path?: string;
	readonly payloadRef?: string;
	readonly details?: Record<string, unknown>;

	constructor(code: ErrorCode, message: string, init: KeelErrorInit = {}) {
		super(message, init.cause === undefined ? undefined : { cause: init.cause });
		this.name = "KeelError";
		this.code = code;
		this.retry = ERROR_CATALOGUE[code];
		this.path = init.path;
		this.payloadRef = init.payloadRef;
		this.details = init.details;
	}

	/** The error as JSON (what a failed call's `error` is). */
	toJSON(): SerializedError {
		const out: SerializedError = { code: this.code, message: this.message, retry: this.retry };
		if (this.path !== undefined) out.path = this.path;
		if (this.payloadRef !== undefined) out.payloadRef = this.payloadRef;
		if (this.details !== undefined) out.details = this.details;
		return out;
	}
}

/**
 * A KeelError that reports a fact about a path (path-facts.ts): `path` is the canonical path the
 * backend worked on, and the message is the table's words for the path shown (by default that one).
 */
export class PathFactError extends KeelError {
	readonly fact: PathFact;
	readonly extras: PathFactExtras;
	declare readonly path: string;

	constructor(fact: PathFact, path: string, extras: PathFactExtras = {}, cause?: unknown, shown = path) {
		super(PATH_FACT_WORDS[fact].code, pathFactMessage(fact, shown, extras), {
			path,
			cause,
			details: Object.keys(extras).length > 0 ? { ...extras } : undefined,
		});
		this.fact = fact;
		this.extras = extras;
	}

	/** The same fact, worded for `shown` (the path as the model wrote it); `path` stays canonical. */
	withShownPath(shown: string): PathFactError {
		return new PathFactError(this.fact, this.path, this.extras, this.cause, shown);
	}
}

/** `fact` about the canonical `path`: what a backend throws. */
export function pathFact(
	fact: PathFact,
	path: string,
	extras: PathFactExtras = {},
	cause?: unknown,
): PathFactError {
	return new PathFactError(fact, path, extras, cause);
}

export function isPathFact(e: unknown): e is PathFactError {
	return e instanceof PathFactError;
}

/** How one of a call's path arguments resolved: the path as written and the canonical path it named. */
export interface PathResolution {
	input: string;
	canonical: string;
}

/**
 * A call's failure in the model's words: a fact about a canonical path that one of the call's
 * arguments resolved to, under another spelling, is worded for the spelling the model used.
 * Anything else is returned as it is: only a known resolution renames a path, never a guess.
 */
export function inModelsWords(e: unknown, resolutions: readonly PathResolution[]): unknown {
	if (!isPathFact(e)) return e;
	const r = resolutions.find((x) => x.canonical === e.path);
	if (!r || r.input === e.path) return e;
	return e.withShownPath(r.input);
}

/** A KeelError as JSON: code, message, retry class, and the path, payloadRef and details when set. */
export interface SerializedError {
	code: ErrorCode;
	message: string;
	retry: RetryClass;
	path?: string;
	payloadRef?: string;
	details?: Record<string, unknown>;
}

/**
 * A step of a commit failed after the change was already visible (a directory fsync after the
 * rename, the unlink of the temp name after the link): the change is in place, and must be counted
 * as committed. `stat` is the new file's, when there is one and it could be read.
 */
export class AfterCommitError extends Error {
	readonly afterCommit = true;
	constructor(
		readonly stat: FileStat | undefined,
		cause: unknown,
	) {
		super("the change is in place, but a step after it failed", { cause });
		this.name = "AfterCommitError";
	}
}

/** True for an AfterCommitError, from whichever copy of this module threw it. */
export function isAfterCommit(e: unknown): e is AfterCommitError {
	return (e as { afterCommit?: unknown } | null)?.afterCommit === true;
}

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

export function isKeelError(e: unknown): e is KeelError {
	return e instanceof KeelError;
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
