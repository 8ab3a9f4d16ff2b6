/**
 * THE seam. Every tool reaches files, processes and search through a Backend;
 * nothing in src/tools imports fs or child_process. Paths given to a backend are absolute and
 * already checked by the path guard.
 */

import type { ProcessOps } from "./process-types.js";
import type { SearchOps } from "./search-types.js";

export type * from "./process-types.js";
export type * from "./search-types.js";

/** What a directory entry or stat names: a regular file, a directory, a symlink, or anything else. */
export type EntryType = "file" | "dir" | "symlink" | "other";

/** The identity and metadata of a file as the backend reports it (what compare-and-swap compares). */
export interface FileStat {
	type: EntryType;
	size: number;
	/** Permission bits (mode & 0o7777). */
	mode: number;
	dev: bigint;
	ino: bigint;
	mtimeNs: bigint;
	ctimeNs: bigint;
	/** Owner and group, where the backend reports them (a replace keeps them). */
	uid?: number;
	gid?: number;
}

/** One entry of a directory listing. */
export interface DirEntry {
	name: string;
	/** Type of the entry itself (a symlink is "symlink"). */
	type: EntryType;
}

/** What a compare-and-swap expects to find: the identity and bytes a change was planned on. */
export interface Expected {
	stat: FileStat;
	sha256: string;
	/**
	 * The bytes themselves, when the caller still holds them unchanged: a backend may compare the
	 * file with them directly instead of hashing it (local files do for small ones).
	 */
	bytes?: Uint8Array;
}

/** How FileOps.writeAtomic writes: mode, what must be there before, and durability. */
export interface WriteOptions {
	/** Mode for a new file; an overwrite keeps the existing file's mode. */
	mode?: number;
	/**
	 * What the target must be at commit time:
	 *  - "absent": create exclusively; fail with WRITE_COLLISION if anything is there.
	 *  - { stat, sha256 }: compare-and-swap; fail with CHANGED_ON_DISK unless the target still has that
	 *    identity (dev/ino/size/mtime/ctime) and those bytes.
	 *  - undefined: replace whatever is there (atomically).
	 */
	expect?: "absent" | Expected;
	/** Create missing parent directories. */
	mkdirs?: boolean;
}

/** A backend's file operations: every path canonical (the session's guard resolved it), every write atomic. */
export interface FileOps {
	/** Canonical path, symlinks resolved; throws ENOENT / ELOOP like realpath(3). */
	realpath(path: string): Promise<string>;
	/** The entry itself (a final symlink not followed). */
	lstat(path: string): Promise<FileStat>;
	/**
	 * Follows links. On this machine, below a pinned root, a link in the last component is
	 * refused (CHANGED_ON_DISK): canonical paths never end in one, so it was swapped in.
	 */
	stat(path: string): Promise<FileStat>;
	/** A symlink's target, as stored. */
	readlink(path: string): Promise<string>;
	/**
	 * Whole file; refuses to follow a symlink in the last component. With `expect`, the opened file
	 * must be that one (same dev and inode), so a directory swapped for a link after the guard
	 * checked the path is caught (CHANGED_ON_DISK).
	 */
	/** The buffer returned is the caller's own (the edit tool writes the new bytes into it). */
	readFile(path: string, expect?: FileStat): Promise<Buffer>;
	/**
	 * The regular file at `path` as opened: its bytes (the caller's own buffer) and the stat of the
	 * object opened, taken from the open handle. Another writer's replace between a caller's stat
	 * and this open so yields the newer file, never a stale identity paired with newer bytes nor a
	 * failure. Refuses a link in the last component and anything but a regular file
	 * (CHANGED_ON_DISK: something else was swapped in). Optional: without it, callers stat, then
	 * readFile with that stat as `expect`, and retry a read that met a replace (edit/replan.ts).
	 * A backend with it also reads a window as opened when readWindow is given no `expect`.
	 */
	readCurrent: ReadCurrent;
	/**
	 * Lines of a file from `window.startLine`, streamed (memory bounded by the window, not the
	 * file); refuses a link in the last component and anything but a regular file, and checks
	 * `expect` as readFile does (without it, the file is read as opened: the result's stat is the
	 * open handle's). One consistent view: the bytes the file had at the open, or
	 * CHANGED_ON_DISK when it is truncated or rewritten in place during the pass. Optional: a
	 * backend without it has its large files refused by read.
	 */
	readWindow?(path: string, expect: FileStat | undefined, window: LineWindow): Promise<WindowRead>;
	/** Entries of a directory; with `expect`, it must be that directory before and after listing. */
	readdir(path: string, expect?: FileStat): Promise<DirEntry[]>;
	/** Create a directory and any missing parents. */
	mkdirp(path: string): Promise<void>;
	/** Durable atomic replace: same-directory temp file, fsync, rename, fsync dir. Returns the new stat. */
	writeFile(path: string, data: Uint8Array, opts?: WriteOptions): Promise<FileStat>;
	/**
	 * Copy `source` (a file on the same backend, which must still have `sourceStat`) to `target` with
	 * the same durable commit as writeFile, streaming (no whole-file buffer) and verifying `sha256`.
	 */
	copyFile(
		source: string,
		target: string,
		opts: WriteOptions & { sourceStat: FileStat; sha256: string },
	): Promise<FileStat>;
	/** SHA-256 (hex) of a file, streamed. */
	hashFile(path: string): Promise<string>;
	/** Remove a file or symlink (never a directory); fails with CHANGED_ON_DISK unless it still is `expect`. */
	unlink(path: string, expect?: FileStat): Promise<void>;
	/**
	 * Remove keel's own temp files in `dir` (the exact name keel writes, a regular file of this
	 * user, a writer that is gone); returns how many. Never fails for what `dir` holds.
	 */
	sweepTemps(dir: string): Promise<number>;
	/**
	 * On this machine: hold the canonical roots open, so every later operation below a root is
	 * resolved from that handle (never following a link) instead of by name. Others lack it.
	 */
	pinRoots?(roots: readonly string[]): void;
	/** Release what pinRoots holds. */
	close?(): void;
}

/** FileOps.readCurrent: the whole file as opened, or at most `maxBytes` of it. */
export interface ReadCurrent {
	(path: string): Promise<{ stat: FileStat; bytes: Buffer }>;
	/**
	 * Bounded: a file larger than `maxBytes` as opened is not read (`bytes` is null; `stat.size`
	 * says how large). Only the bytes it had at the open are read (what is appended meanwhile is
	 * not); one truncated meanwhile fails (CHANGED_ON_DISK).
	 */
	(path: string, maxBytes: number): Promise<{ stat: FileStat; bytes: Buffer | null }>;
}

/** Which lines of a file to keep: from `startLine` (1-based), at most `maxLines` and `maxBytes`. */
export interface LineWindow {
	startLine: number;
	maxLines: number;
	/** Stop keeping lines once this many bytes are kept (the line that passes it is kept). */
	maxBytes: number;
	/** Each kept line is cut at this many bytes (its full length is in `lineBytes`). */
	maxLineBytes: number;
	/** Lines from `startLine` the caller selects (all to the end when absent): see `selectedBytes`. */
	selectLines?: number;
}

/** A SHA-256 (hex) computed when first asked for; the bytes it covers are held until then. */
export interface LaterDigest {
	readonly hex: string;
	/** Its record was replaced or forgotten: no need to take the hash unless someone still asks. */
	superseded?(): void;
}

/** A bounded read of a file's lines (what read asks for a large file). */
export interface WindowRead {
	/** The first 8 KiB of the file (type and binary detection). */
	head: Buffer;
	/** Kept lines without their "\n" (a "\r" stays). */
	lines: Buffer[];
	/** Full byte length of each kept line, without a "\r" that ends it (as read shows it). */
	lineBytes: number[];
	/** Lines in the whole file, counted as read splits them (a final "\n" starts no line). */
	totalLines: number;
	/** Bytes of the selected lines as they are in the file, "\n" between them, none after the last. */
	selectedBytes: number;
	/**
	 * Of the bytes read: the whole file as it was at the open (bytes appended since are not read).
	 * Local reads of a mid-sized file take it after the reply (a LaterDigest holding those bytes).
	 */
	sha256: string | LaterDigest;
	validUtf8: boolean;
	/** The file's stat at the open: the identity of the bytes read (what the read state records). */
	stat: FileStat;
}

/** One command to run to the end: its text, directory, timeout, signal and output callback. */
export interface ExecRequest {
	/** Shell command line, run by bash (or sh when bash is absent). */
	command: string;
	cwd: string;
	env?: Record<string, string>;
	timeoutMs?: number;
	signal?: AbortSignal;
	/** Output (stdout and stderr interleaved) as it arrives. */
	onData: (chunk: Buffer) => void;
	/** Keep what the command starts in the background until the session closes (ExecOps.background). */
	background?: boolean;
}

/** How a command ended: its exit code or signal, and whether it timed out or was aborted. */
export interface ExecResult {
	exitCode: number | null;
	signal?: string | null;
	timedOut: boolean;
	aborted: boolean;
	/** With `background`: the processes still running when the command ended (killed at close). */
	background?: { pid: number; command: string }[];
}

/** A backend's commands: run one to the end, or start one that outlives the call. */
export interface ExecOps {
	/** Whether `background: true` is supported (on local; elsewhere a call's processes end with it). */
	background?: boolean;
	/** Runs the command in its own process group; abort and timeout kill the whole group. */
	run(req: ExecRequest): Promise<ExecResult>;
	/**
	 * Starts a command that outlives the call (a process handle: procs/table.ts). Absent where the
	 * backend cannot keep one: the process tools then answer UNSUPPORTED.
	 */
	start?(req: StartRequest): Promise<LiveProcess>;
}

/** A command started to run on its own, its output read later. */
export interface StartRequest {
	/** Shell command line, run by bash (or sh when bash is absent). */
	command: string;
	cwd: string;
	env?: Record<string, string>;
	/** Run it in a pseudo-terminal of this size (stdout and stderr are then one stream). */
	terminal?: { cols: number; rows: number };
	/** Output (stdout and stderr interleaved) as it arrives. */
	onData: (chunk: Buffer) => void;
}

/** How a started process ended: its exit code, or the signal that ended it. */
export interface LiveExit {
	code: number | null;
	signal: string | null;
}

/** A started command: its own process group, and whatever it sets loose, owned by the session. */
export interface LiveProcess {
	readonly pid: number | undefined;
	/** Resolves when the command's own process has exited (what it left may still run). */
	readonly exited: Promise<LiveExit>;
	/** Resolves once no more output can come (every holder of its output is gone). */
	readonly drained: Promise<void>;
	/** Bytes to its stdin (its terminal's input in terminal mode); false once stdin is closed. */
	write(data: string): Promise<boolean>;
	/** End its stdin (EOF); in terminal mode, sends the terminal's end-of-file character. */
	closeStdin(): void;
	/** Send a signal to its process group; false when the group is gone. */
	signal(name: NodeJS.Signals): boolean;
	/** SIGKILL its group and everything it started; resolves once they are gone. */
	kill(): Promise<void>;
}

/** Where a session's files, commands and searches live: this machine, a sandbox, a host over ssh, a container. */
export interface Backend {
	/** A name for messages and logs; what a backend can do is said by the fields below, not by it. */
	readonly kind: string;
	/**
	 * Its files are this machine's files, at the same paths (local; bwrap, which sandboxes only
	 * the commands): keel's own state must then be kept out of the roots, and what reads files
	 * directly (spill files, checkpoints, extension drafts) may.
	 */
	readonly localFiles?: boolean;
	/**
	 * Commands are children of this process on this machine, with nothing but keel's guard around
	 * them (local): python starts here directly, and an MCP client's roots, which name this
	 * machine's paths, can become the session's roots.
	 */
	readonly spawnsHere?: boolean;
	/**
	 * keel's host programs (python3) run where its files are, through `process` (ssh, containers):
	 * checkpoints are scanned and kept there.
	 */
	readonly hostPrograms?: boolean;
	readonly fs: FileOps;
	readonly exec: ExecOps;
	readonly search: SearchOps;
	/** Absent: the backend cannot hold a process open (python is then unavailable). */
	readonly process?: ProcessOps;
	/**
	 * keel's own state directories on this machine (journal, spill, payloads): a backend whose
	 * commands could otherwise see them hides them from every command it starts from now on.
	 */
	hideFromCommands?(paths: readonly string[]): void;
	/** Release connections and processes. */
	close(): Promise<void>;
}
