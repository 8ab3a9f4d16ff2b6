/**
 * KeelError and the failure catalogue.
 * Codes are stable strings; each is classified by what the caller should do next. What a backend
 * reports is worded elsewhere, each in one table: facts about a path in path-facts.ts, the rest in
 * backend-facts.ts; system errors are mapped to them in system-errors.ts.
 */
import type { FileStat } from "../backend/types.js";

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

export function isKeelError(e: unknown): e is KeelError {
	return e instanceof KeelError;
}
