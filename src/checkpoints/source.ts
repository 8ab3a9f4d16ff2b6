/**
 * Where checkpoints scan the tree and keep its bytes: the one seam between the checkpoint logic
 * (checkpoints.ts: what a checkpoint is, conflicts, budgets) and the machine the files are on.
 * This machine's files (local and bwrap backends) use local-source.ts; a remote host's would keep
 * its store on that host, managed by keel's host program.
 *
 * A source keeps the latest scan itself and answers with what changed since it, so a remote one
 * never ships the whole tree per call. File contents are put back by the session's ordinary
 * compare-and-swap commit (safety/transaction.ts) through the backend; the source does the rest
 * of a restore: directories, links and modes.
 */
import type { PathChange } from "./types.js";

export interface CaptureResult {
	/** What changed since the previous capture (none for the first, which fills the store). */
	changes: PathChange[];
	/** Paths left out by rule, at most 50 named. */
	leftOut: string[];
	leftOutCount: number;
	/** Files kept by identity only (past a byte budget). */
	identityOnly: string[];
	/** The walk stopped at the entry budget. */
	truncated: boolean;
}

export interface TreeSource {
	/** The roots, canonical, none inside another. */
	readonly roots: readonly string[];
	/** Scan the tree; at most `room` new bytes go into the store. */
	capture(room: number): Promise<CaptureResult>;
	/** Bytes the store holds. */
	storeBytes(): number;
	/** A kept blob, or null when it is missing or does not hash to its name. */
	blob(sha256: string): Promise<Buffer | null>;
	/** Drop every blob that is neither in `keep` nor needed by the latest scan. */
	retain(keep: ReadonlySet<string>): Promise<void>;
	makeDir(path: string, mode: number): Promise<void>;
	makeLink(path: string, target: string): Promise<void>;
	/** Set a file's or directory's mode (never through a link). */
	setMode(path: string, mode: number): Promise<void>;
	/** Remove an empty directory. */
	removeDir(path: string): Promise<void>;
	/** Remove the store. */
	close(): Promise<void>;
}
