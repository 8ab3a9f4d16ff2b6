/**
 * What a failed multi-file commit says: the journal's own failure in keel's words, and the
 * outcome (nothing committed, rolled back, partial, all in place) added to the error that stopped
 * it, with the files restored and those left unresolved. Apart from the commit (transaction.ts)
 * so that the commit reads as the steps it takes and this as what the model is told.
 */
import { KeelError } from "../boundary/errors.js";
import { fromSystemError } from "../boundary/system-errors.js";

/** A file a failed commit could not put back, its state, and where its previous bytes are kept. */
export interface Unresolved {
	path: string;
	state: string;
	/** Where the previous bytes are kept, when there were any. */
	kept?: string;
}

/** A failure writing the journal, in keel's words: nothing of the change was touched. */
export function journalError(e: unknown, dir: string): KeelError {
	if (e instanceof KeelError) return e;
	const errno = (e as NodeJS.ErrnoException)?.code;
	const mapped = fromSystemError(e);
	// The journal's own directories are keel's: a missing one is a storage problem, not a wrong path.
	const code =
		mapped.code === "NOT_FOUND" ||
		mapped.code === "NOT_DIRECTORY" ||
		mapped.code === "INTERNAL" ||
		mapped.code === "WRITE_COLLISION" ||
		mapped.code === "IS_DIRECTORY" ||
		mapped.code === "PATH_INVALID" ||
		mapped.code === "PATH_LOOP"
			? "IO_ERROR"
			: mapped.code;
	const why = SYSTEM_WORDS[errno ?? ""] ?? (errno ? `the system refused it (${errno})` : "an internal error");
	return new KeelError(
		code,
		`keel could not write the journal of this multi-file change in its state directory (${dir}): ${why}.`,
		{ cause: e },
	);
}

const SYSTEM_WORDS: Record<string, string> = {
	ENOSPC: "no space left on the device; free some space, then retry",
	EDQUOT: "the disk quota is exhausted; free some space, then retry",
	EIO: "the device reported an I/O error; retry, and if it persists the storage is failing",
	EROFS: "its file system is read-only; pass a writable stateDir",
	EACCES: "permission denied; pass a stateDir this user can write",
	EPERM: "permission denied; pass a stateDir this user can write",
	ENOENT: "a directory of it vanished while it was written; retry",
};

/** What a failed call left on disk. all-new: every file is in place, but an error came after. */
export type AllOrNothing = "nothing-committed" | "rolled-back" | "partial" | "all-new";

/** `err` with what the failed commit left on disk added to its message and details. */
export function withOutcome(
	err: KeelError,
	failed: number,
	allOrNothing: AllOrNothing,
	restored: string[],
	unresolved: Unresolved[],
	total: number,
): KeelError {
	const note = total > 1 && allOrNothing !== "all-new" ? outcomeNote(allOrNothing, restored, unresolved) : "";
	return new KeelError(err.code, `${err.message}${note}`, {
		path: err.path,
		payloadRef: err.payloadRef,
		details: { ...err.details, failed, allOrNothing, restored, unresolved },
	});
}

/** What a failed multi-file commit left: " Nothing was changed..." or what is incomplete and where. */
export function outcomeNote(
	allOrNothing: Exclude<AllOrNothing, "all-new">,
	restored: string[],
	unresolved: Unresolved[],
): string {
	if (allOrNothing === "nothing-committed") return " Nothing was changed.";
	if (allOrNothing === "rolled-back")
		return ` Nothing was changed: ${restored.length} file(s) this call had already written were restored (${restored.join(", ")}).`;
	return ` The change is incomplete: ${unresolved.map((u) => `${u.path} ${u.state}`).join("; ")}. Previous bytes are kept in ${unresolved[0].kept}.${restored.length ? ` Restored: ${restored.join(", ")}.` : ""}`;
}
