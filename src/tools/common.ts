/** Small checks shared by the tools. */
import type { FileStat } from "../backend/types.js";
import { KeelError, fromSystemError } from "../boundary/errors.js";
import type { Session } from "../session.js";

/** A positive integer option, or its default; fractional values are floored. */
export function positiveInt(name: string, value: number | undefined, fallback: number): number {
	if (value === undefined) return fallback;
	if (!Number.isFinite(value) || value < 1) {
		throw new KeelError("INVALID_ARGS", `${name} must be a positive number (got ${value}).`);
	}
	return Math.floor(value);
}

/** stat (following links) mapped to keel errors. */
export async function statPath(session: Session, canonical: string, shown: string): Promise<FileStat> {
	try {
		return await session.backend.fs.stat(canonical);
	} catch (e) {
		throw fromSystemError(e, shown);
	}
}

export async function statOrNull(session: Session, canonical: string): Promise<FileStat | null> {
	try {
		return await session.backend.fs.stat(canonical);
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
		throw fromSystemError(e, canonical);
	}
}

export function requireFile(st: FileStat, shown: string): void {
	if (st.type === "dir") throw new KeelError("IS_DIRECTORY", `${shown} is a directory; use ls to list it.`, { path: shown });
	if (st.type !== "file") throw new KeelError("NOT_A_FILE", `${shown} is not a regular file.`, { path: shown });
}

export function requireDir(st: FileStat, shown: string): void {
	if (st.type !== "dir") {
		throw new KeelError("NOT_DIRECTORY", `${shown} is not a directory; use read for files.`, { path: shown });
	}
}

/** Throws ABORTED when the call's signal has fired. */
export function checkAborted(signal: AbortSignal | undefined): void {
	if (signal?.aborted) throw new KeelError("ABORTED", "The call was aborted.");
}
