/**
 * KeelError and the failure catalogue (REQUIREMENTS R3, DESIGN "Errors").
 * Codes are stable strings; each is classified by what the caller should do next.
 */

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
	STALE_READ: "retry",
	NOT_READ: "retry",
	CHANGED_ON_DISK: "retry",
	WRITE_COLLISION: "retarget",
	COMMAND_FAILED: "change-approach",
	COMMAND_REFUSED: "change-approach",
	INVALID_PATTERN: "change-approach",
	TIMEOUT: "retry",
	ABORTED: "retry",
	BACKEND_UNAVAILABLE: "retry",
	IO_ERROR: "retry",
	INTERNAL: "retry",
} as const satisfies Record<string, RetryClass>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface KeelErrorInit {
	path?: string;
	payloadRef?: string;
	/** Extra structured facts for hosts (exit code, partial output, ...). */
	details?: Record<string, unknown>;
	cause?: unknown;
}

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

	toJSON(): SerializedError {
		const out: SerializedError = { code: this.code, message: this.message, retry: this.retry };
		if (this.path !== undefined) out.path = this.path;
		if (this.payloadRef !== undefined) out.payloadRef = this.payloadRef;
		if (this.details !== undefined) out.details = this.details;
		return out;
	}
}

export interface SerializedError {
	code: ErrorCode;
	message: string;
	retry: RetryClass;
	path?: string;
	payloadRef?: string;
	details?: Record<string, unknown>;
}

export function isKeelError(e: unknown): e is KeelError {
	return e instanceof KeelError;
}

/** Map a Node/system error (ENOENT, EISDIR, ...) on `path` to a KeelError. */
export function fromSystemError(e: unknown, path?: string): KeelError {
	if (e instanceof KeelError) return e;
	const err = e as NodeJS.ErrnoException;
	const where = path ? ` ${path}` : "";
	switch (err?.code) {
		case "ENOENT":
			return new KeelError(
				"NOT_FOUND",
				`No such file or directory:${where}. Check the path with ls or find.`,
				{
					path,
				},
			);
		case "EISDIR":
			return new KeelError("IS_DIRECTORY", `Is a directory:${where}. Use ls to list it.`, { path });
		case "ENOTDIR":
			return new KeelError("NOT_DIRECTORY", `Not a directory:${where}.`, { path });
		case "EACCES":
		case "EPERM":
			return new KeelError("PERMISSION_DENIED", `Permission denied:${where}.`, { path });
		case "ELOOP":
			return new KeelError("PATH_LOOP", `Too many levels of symbolic links:${where}.`, { path });
		case "EEXIST":
			return new KeelError("WRITE_COLLISION", `Already exists:${where}.`, { path });
		case "ENAMETOOLONG":
			return new KeelError("PATH_INVALID", `Path too long:${where}.`, { path });
		default:
			return new KeelError("IO_ERROR", `${err?.message ?? String(e)}`, { path, cause: e });
	}
}
