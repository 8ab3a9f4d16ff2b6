/**
 * What a path fact carries besides its path: the structured extras kept in the error's details,
 * and the few ways the fact table words them (the processes holding a file, a search tool's
 * report cut short). Apart from path-facts.ts so the table there reads as the list of facts.
 */

/** Small structured extras a fact may carry (kept in the error's details). */
export interface PathFactExtras {
	/** For source-changed: whether the change was seen during the copy (else since it was written). */
	during?: boolean;
	/** For owner-not-kept: the file's owner and group. */
	uid?: number;
	gid?: number;
	/** For attributes-not-kept: what could not be done, and to which attribute. */
	detail?: string;
	/** For delete-wants-a-file: the delete as the call wrote it ("delete", "*** Delete File:"). */
	operation?: string;
	/** For open-for-writing and directory-lock-held: the processes found holding it (may be none). */
	holders?: readonly Holder[];
	/** For directory-lock-held: how long keel waited for the lock. */
	heldSeconds?: number;
	/** For nested-too-deep: where the search tool gave up, as it reported it. */
	where?: string;
	/** For operation-failed: the helper's exit code (null when it was killed). */
	exitCode?: number | null;
	/** For operation-failed, listing-failed, malformed-reply: what the target printed. */
	output?: string;
	/** For malformed-reply: what was wrong with it. */
	malformed?: string;
}

/** A process holding a file or lock, as /proc shows it. */
export interface Holder {
	pid: number;
	command?: string;
}

/** How many holders a message names (the rest are in the error's details). */
const NAMED_HOLDERS = 4;

/** The holders by pid and command, or "another process" when none could be seen. */
export function whoHolds(holders: readonly Holder[] | undefined): string {
	if (!holders || holders.length === 0) return "another process";
	return holders
		.slice(0, NAMED_HOLDERS)
		.map((h) => (h.command ? `pid ${h.pid} (${h.command})` : `pid ${h.pid}`))
		.join(", ");
}

/** A search tool's report of where it stopped, cut to a readable length. */
export const shortened = (where = "") => (where.length > 120 ? `${where.slice(0, 120)}…` : where);
