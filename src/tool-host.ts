/**
 * What a tool may use of the session it runs in, and nothing more. A Session is one ToolHost; a
 * test can build another from real parts (a backend, a path guard, a read state) without opening a
 * session. Tools, the patch planner and the commit paths depend on this interface (or a slice of
 * it), never on session.ts, so the session can import them and not the other way round.
 */
import type { ExecOps, FileOps, SearchOps } from "./backend/types.js";
import type { SpillDir } from "./boundary/spill.js";
import type { Clock } from "./boundary/timing.js";
import type { Checkpoints } from "./checkpoints/checkpoints.js";
import type { Diagnostics } from "./diagnostics/diagnostics.js";
import type { ProcessTable } from "./procs/table.js";
import type { PythonCoordinator } from "./python/coordinator.js";
import type { ContentRefs } from "./safety/content-refs.js";
import type { Journal } from "./safety/journal.js";
import type { MutationQueue } from "./safety/mutation-queue.js";
import type { Access, ResolvedPath } from "./safety/path-guard.js";
import type { PayloadStore } from "./safety/payloads.js";
import type { ReadState } from "./safety/read-state.js";
import type { SyntaxCheck } from "./syntax/check.js";
import type { CheckMode } from "./syntax/report.js";

/** The workspace's files, reached through the session's path guard. */
export interface HostFiles {
	/** The backend's file operations; they take canonical paths (from the resolvers below). */
	readonly files: FileOps;
	/** The workspace root: relative paths resolve against it, commands start in it. */
	readonly workspace: string;
	/** A path the model gave, checked against the roots for `access`; a final symlink is followed. */
	resolvePath(input: unknown, access: Access): Promise<ResolvedPath>;
	/** The entry itself: a final symlink is not followed (what a delete or a move acts on). */
	resolveEntry(input: unknown, access: Access): Promise<ResolvedPath>;
	/** A path to read and the file operations that reach it (spill files live on this machine). */
	resolveReadable(input: unknown): Promise<{ target: ResolvedPath; fs: FileOps }>;
	/** Before the first commit into `dir`: clear what dead writers left there. */
	sweepOnce(dir: string): Promise<void>;
}

/** What the session remembers between calls. */
export interface HostMemory {
	/** Which version of each file this session has read: overwrites compare-and-swap against it. */
	readonly readState: ReadState;
	/** Handles to content already on disk, for a write that copies it. */
	readonly contentRefs: ContentRefs;
	/** Large arguments kept for a retry, by reference. */
	readonly payloads: PayloadStore;
}

/** How changes reach the disk. */
export interface HostCommits {
	/** One change at a time per path. */
	readonly queue: MutationQueue;
	/** The intent journal that makes a multi-file change finish or roll back after a crash. */
	readonly journal: Journal;
	readonly probes: CommitProbes;
}

/** Points where tests interleave another writer; no-ops in production. */
export interface CommitProbes {
	/** Inside the mutation queue, before the file is read for planning. */
	afterAdmission?: (canonical: string) => Promise<void> | void;
}

/** Where commands and searches run. */
export interface HostCommands {
	readonly exec: ExecOps;
	readonly search: SearchOps;
	/** Shell text run before every command the model writes. */
	readonly commandPrefix?: string;
	/** Processes that outlive the call that started them. */
	readonly processes: ProcessTable;
	/** The Python worker; it starts on its first use. */
	readonly python: PythonCoordinator;
}

/** Output past a call's bounds, and time. */
export interface HostOutput {
	/** Where a truncated output's whole text is saved. */
	readonly spill: SpillDir;
	readonly clock: Clock;
}

/** The syntax check of changes to source files. */
export interface HostChecks {
	readonly syntax: SyntaxCheck;
	/** The check's mode when a call does not set its own. */
	readonly checkMode: CheckMode;
	/** The workspace's own checkers run after a change (SessionOptions.diagnostics); absent when none. */
	readonly diagnostics?: Diagnostics;
}

/** Checkpoints of every change the calls make, when the session keeps them. */
export interface HostUndo {
	readonly checkpoints?: Checkpoints;
}

export interface ToolHost
	extends HostFiles,
		HostMemory,
		HostCommits,
		HostCommands,
		HostOutput,
		HostChecks,
		HostUndo {}
