/**
 * What a backend can report about a path, and the one table that words it for the model.
 *
 * A backend fails with a fact (a closed set, below) and the canonical path it worked on; it never
 * writes advice. The words come from PATH_FACT_WORDS, given the path to show: the backend's own
 * path when nothing better is known, and the path as the model wrote it once the boundary knows
 * the call's argument resolved to that canonical path (withShownPath). `error.path` stays the
 * canonical path for hosts. Facts that are not about a path are in backend-facts.ts.
 */
import { type ErrorCode, KeelError } from "./errors.js";
import { type PathFactExtras, shortened, whoHolds } from "./fact-extras.js";

export { type Holder, type PathFactExtras, whoHolds } from "./fact-extras.js";

interface FactEntry {
	code: ErrorCode;
	/** The message for the model, naming `shown`. */
	words: (shown: string, extras: PathFactExtras) => string;
}

/** Every fact a backend reports about a path: its code (and so its retry class) and its words. */
export const PATH_FACT_WORDS = {
	/** The file is not the one read: a rival wrote, replaced or removed it since. */
	"changed-since-read": {
		code: "CHANGED_ON_DISK",
		words: (p) => `${p} changed on disk after it was read; read it again and redo the change.`,
	},
	/** The file opened is not the one checked a moment before (a replace in between). */
	"replaced-while-opening": {
		code: "CHANGED_ON_DISK",
		words: (p) => `${p} was replaced while it was being opened; try again.`,
	},
	/** A directory on the path was swapped (e.g. for a link) after the guard checked it. */
	"dir-replaced-while-opening": {
		code: "CHANGED_ON_DISK",
		words: (p) =>
			`${p} changed while it was being opened (a directory on its path was replaced, e.g. by a link); try again.`,
	},
	/** The file changed (was truncated or rewritten) while it was being read. */
	"changed-while-reading": {
		code: "CHANGED_ON_DISK",
		words: (p) => `${p} changed while it was being read; read it again.`,
	},
	/** The source of content to copy changed since it was written, or during the copy. */
	"source-changed": {
		code: "CHANGED_ON_DISK",
		words: (p, x) =>
			`The source of this content (${p}) changed ${x.during ? "during the copy" : "since it was written"}; send the content again.`,
	},
	/** A create found the name taken: it never overwrites. */
	"already-exists": {
		code: "WRITE_COLLISION",
		words: (p) => `${p} already exists; choose another path, or read it first to overwrite it.`,
	},
	"not-found": {
		code: "NOT_FOUND",
		words: (p) => `No such file or directory: ${p}. Check the path with ls or find.`,
	},
	"is-a-directory": {
		code: "IS_DIRECTORY",
		words: (p) => `${p} is a directory; use ls to list it.`,
	},
	"not-a-directory": {
		code: "NOT_DIRECTORY",
		words: (p) => `Not a directory: ${p}.`,
	},
	/** A tool that lists or runs in a directory was given something else (a file). */
	"wants-a-directory": {
		code: "NOT_DIRECTORY",
		words: (p) => `${p} is not a directory; use read for files.`,
	},
	/** A tool that writes a file was given a directory (the root itself, say). */
	"wants-a-file": {
		code: "IS_DIRECTORY",
		words: (p) => `${p} is a directory; give a file path.`,
	},
	/** A delete was given a directory; `operation` is how the call asked for the delete. */
	"delete-wants-a-file": {
		code: "IS_DIRECTORY",
		words: (p, x) => `${p} is a directory; ${x.operation ?? "delete"} removes files and symlinks only.`,
	},
	/** A delete was given a FIFO, socket or device. */
	"not-a-file-or-link": {
		code: "NOT_A_FILE",
		words: (p) => `${p} is not a file or symlink.`,
	},
	/** A FIFO, socket or device where a regular file is expected. */
	"not-a-file": {
		code: "NOT_A_FILE",
		words: (p) => `${p} is not a regular file.`,
	},
	/** A replace refused: the caller could not have written the file in place. */
	"not-writable-in-place": {
		code: "PERMISSION_DENIED",
		words: (p) =>
			`${p} is not writable by this process; keel does not replace a file it could not write in place. Change its permissions first (e.g. chmod u+w with bash), or write a new file.`,
	},
	/** A replace refused: the new file could not be given the old one's owner and group. */
	"owner-not-kept": {
		code: "PERMISSION_DENIED",
		words: (p, x) =>
			`${p} is owned by uid ${x.uid}, gid ${x.gid}, which this process cannot give a replacement; change it another way (e.g. with bash, in place).`,
	},
	/** A replace refused: the new file could not be given the old one's extended attributes. */
	"attributes-not-kept": {
		code: "PERMISSION_DENIED",
		words: (p, x) =>
			`${p} has extended attributes keel could not ${x.detail || "keep"}; keel does not replace a file whose attributes it cannot keep. Change it in place (e.g. with bash).`,
	},
	/** A replace refused: a file is mounted over the path, and a rename over a mount point always fails. */
	"mounted-over": {
		code: "PERMISSION_DENIED",
		words: (p) =>
			`${p} is a mount point (a file mounted over this path): keel replaces a file by renaming a new one over it, which a mount point refuses every time. Change it in place instead (e.g. with bash).`,
	},
	"permission-denied": {
		code: "PERMISSION_DENIED",
		words: (p) => `Permission denied: ${p}.`,
	},
	"link-loop": {
		code: "PATH_LOOP",
		words: (p) => `Too many levels of symbolic links: ${p}.`,
	},
	"name-too-long": {
		code: "PATH_INVALID",
		words: (p) => `Path too long: ${p}.`,
	},
	/** Part of a tree is deeper than the system's path length limit: a search there would miss matches. */
	"nested-too-deep": {
		code: "PATH_INVALID",
		words: (p, x) =>
			`Part of ${p} is nested deeper than the system's path length limit and could not be searched (${shortened(x.where)}); matches there would be missing. Search from a directory further down, or with bash (cd into it first).`,
	},
	/** A replace refused: another process has the file open for writing. */
	"open-for-writing": {
		code: "FILE_BUSY",
		words: (p, x) =>
			`${p} is open for writing by ${whoHolds(x.holders)}; replacing it now would cut that writer off (what it writes next would go to the replaced file and be lost). Nothing was changed. Retry once it has closed the file; if it keeps the file open (a log, a server's output), stop it first or change the file in place (e.g. with bash).`,
	},
	/** A commit refused: another process held the commit lock on the file's directory too long. */
	"directory-lock-held": {
		code: "FILE_BUSY",
		words: (p, x) =>
			`${p} was not changed: ${whoHolds(x.holders)} has held the lock on its directory for over ${x.heldSeconds} s (keel processes take it to commit one at a time, and never commit without it). Retry in a moment; if it persists, that process is holding it on purpose or is stuck.`,
	},
	/** A path the sandbox mounts was replaced or removed while the sandbox was set up. */
	"changed-during-sandbox-setup": {
		code: "CHANGED_ON_DISK",
		words: (p) =>
			`${p} changed while the sandbox was being set up (it or a directory on its path was replaced or removed, e.g. by a link); the command did not run; try again.`,
	},
	/** The command's working directory could not be entered on a remote target. */
	"cwd-not-entered": {
		code: "NOT_FOUND",
		words: (p) => `Cannot run the command in ${p} on the exec backend.`,
	},
	/** Content sent to a remote target arrived cut short; nothing was written. */
	"arrived-incomplete": {
		code: "IO_ERROR",
		words: (p) =>
			`The content for ${p} did not arrive whole over the exec transport; nothing was written. Try again.`,
	},
	/** A remote helper failed in a way no errno names; what it printed is quoted. */
	"operation-failed": {
		code: "IO_ERROR",
		words: (p, x) =>
			`A file operation on ${p} failed on the exec backend (${x.exitCode === null || x.exitCode === undefined ? "was killed" : `exited with ${x.exitCode}`}): ${x.output || "no error output"}`,
	},
	/** Listing a tree on a remote target failed; what it printed is quoted. */
	"listing-failed": {
		code: "IO_ERROR",
		words: (p, x) => `Listing ${p} failed on the target: ${x.output ?? ""}`,
	},
	/** A remote read answered in a form keel does not know; its first line is quoted. */
	"malformed-reply": {
		code: "IO_ERROR",
		words: (p, x) =>
			`The backend's reply to a read of ${p} is malformed (${x.malformed}: ${x.output ?? ""}).`,
	},
} as const satisfies Record<string, FactEntry>;

/** A fact a backend reports about a path. */
export type PathFact = keyof typeof PATH_FACT_WORDS;

/** The words for `fact` about `shown`. */
export function pathFactMessage(fact: PathFact, shown: string, extras: PathFactExtras = {}): string {
	return (PATH_FACT_WORDS[fact] as FactEntry).words(shown, extras);
}

/**
 * A KeelError that reports a fact about a path (above): `path` is the canonical path the
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

/**
 * `fact` about the canonical `path`, worded for `shown`: what a tool throws that knows the path
 * as the model wrote it.
 */
export function pathFactShown(fact: PathFact, path: string, shown: string, extras: PathFactExtras = {}) {
	return new PathFactError(fact, path, extras, undefined, shown);
}

/** `e` worded for `shown` when it is a path fact; anything else as it is. */
export function shownAs<E>(e: E, shown: string): E | PathFactError {
	return isPathFact(e) ? e.withShownPath(shown) : e;
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
