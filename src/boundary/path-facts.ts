/**
 * What a backend can report about a path, and the one table that words it for the model.
 *
 * A backend fails with a fact (a closed set, below) and the canonical path it worked on; it never
 * writes advice. The words come from PATH_FACT_WORDS, given the path to show: the backend's own
 * path when nothing better is known, and the path as the model wrote it once the boundary knows
 * the call's argument resolved to that canonical path (withShownPath). `error.path` stays the
 * canonical path for hosts. The error type itself, PathFactError, is in errors.ts.
 */
import type { ErrorCode } from "./errors.js";

/** Small structured extras a fact may carry (kept in the error's details). */
export interface PathFactExtras {
	/** For source-changed: whether the change was seen during the copy (else since it was written). */
	during?: boolean;
	/** For owner-not-kept: the file's owner and group. */
	uid?: number;
	gid?: number;
	/** For attributes-not-kept: what could not be done, and to which attribute. */
	detail?: string;
}

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
} as const satisfies Record<string, FactEntry>;

/** A fact a backend reports about a path. */
export type PathFact = keyof typeof PATH_FACT_WORDS;

/** The words for `fact` about `shown`. */
export function pathFactMessage(fact: PathFact, shown: string, extras: PathFactExtras = {}): string {
	return (PATH_FACT_WORDS[fact] as FactEntry).words(shown, extras);
}
