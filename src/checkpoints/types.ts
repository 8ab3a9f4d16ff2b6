/** What a checkpoint holds: the state of each path a call changed, before and after it. */

/** One path's state, as far as a restore can put it back. */
export type PathState =
	| { kind: "absent" }
	/** `sha256` null: larger than the per-file budget, kept by identity only (not restorable). */
	| { kind: "file"; mode: number; size: number; sha256: string | null }
	| { kind: "link"; target: string }
	| { kind: "dir"; mode: number }
	/** A FIFO, socket or device: seen, never restorable. */
	| { kind: "other" };

/** A path's state plus the stat identity that lets the next scan skip re-reading it. */
export interface ScannedEntry {
	state: PathState;
	/** dev:ino:size:mtime:ctime:mode, or "" for directories (their names are walked anyway). */
	identity: string;
	/** Changed too close to the scan to trust the identity (file times tick coarsely): re-read next time. */
	racy: boolean;
}

export type { TreeIndex } from "./tree-index.js";

export interface PathChange {
	/** Absolute path. */
	path: string;
	before: PathState;
	after: PathState;
}

export interface Checkpoint {
	/** 0 is the session's first scan; each later one is the state after `tool` ran. */
	id: number;
	/** The tool call that made it, or "outside" for changes found between calls (the user, a
	 * background process, another program), or "restore" for a restore. */
	tool: string;
	/** Wall-clock time the checkpoint was taken (ms since the epoch). */
	at: number;
	changes: PathChange[];
}

export interface CheckpointBudgets {
	/** A file larger than this is kept by identity only and named as not restorable. */
	maxFileBytes: number;
	/** New bytes one checkpoint may add to the store; files past it are kept by identity only. */
	maxCheckpointBytes: number;
	/** All bytes the session's store may hold; the oldest checkpoints are dropped to stay under it. */
	maxStoreBytes: number;
	/** Checkpoints kept; the oldest are dropped first. */
	maxCheckpoints: number;
	/** Entries one scan may visit; a larger tree is checkpointed up to this many and says so. */
	maxEntries: number;
}

export const DEFAULT_BUDGETS: CheckpointBudgets = {
	maxFileBytes: 8 * 1024 * 1024,
	maxCheckpointBytes: 256 * 1024 * 1024,
	maxStoreBytes: 1024 * 1024 * 1024,
	maxCheckpoints: 500,
	maxEntries: 200_000,
};

export function sameState(a: PathState, b: PathState): boolean {
	switch (a.kind) {
		case "absent":
		case "other":
			return b.kind === a.kind;
		case "file":
			return b.kind === "file" && a.mode === b.mode && a.sha256 !== null && a.sha256 === b.sha256;
		case "link":
			return b.kind === "link" && a.target === b.target;
		case "dir":
			return b.kind === "dir" && a.mode === b.mode;
	}
}

export function describeState(s: PathState): string {
	switch (s.kind) {
		case "absent":
			return "absent";
		case "file":
			return `file (${s.size} bytes, mode ${s.mode.toString(8)})`;
		case "link":
			return `symlink to ${JSON.stringify(s.target)}`;
		case "dir":
			return `directory (mode ${s.mode.toString(8)})`;
		case "other":
			return "a FIFO, socket or device";
	}
}
