/**
 * The process table's shapes: its bounds, what it says of a process, what a read returns, and one
 * entry of the table. Apart from the table so that the tools and the session options can name
 * them without the table's code, and so that the wait (wait.ts) shares the entry's shape.
 */
import type { LiveExit, LiveProcess } from "../backend/types.js";
import type { OutputLog } from "./output-log.js";
import type { Screen } from "./screen.js";

/** The bounds of a session's process handles. */
export interface ProcessLimits {
	/** Processes running at once. */
	maxLive: number;
	/** Output held in memory per process. */
	keepBytes: number;
	/** Output spilled to disk by all processes together. */
	maxSpillBytes: number;
}

export const DEFAULT_PROCESS_LIMITS: ProcessLimits = {
	maxLive: 64,
	keepBytes: 1024 * 1024,
	maxSpillBytes: 256 * 1024 * 1024,
};

/** Where a process is in its life. */
export type ProcessState = "running" | "exited" | "killed" | "timed out";

/** What a list or an answer says of one process. */
export interface ProcessInfo {
	id: number;
	pid: number | undefined;
	command: string;
	state: ProcessState;
	exitCode: number | null;
	signal: string | null;
	/** Milliseconds since it started. */
	ageMs: number;
	/** Output so far, in bytes (the cursor after the last byte). */
	outputBytes: number;
	terminal: boolean;
}

/** A command to start as a process handle. */
export interface StartOptions {
	command: string;
	cwd: string;
	terminal?: { cols: number; rows: number };
	timeoutMs?: number;
}

/** Output read from a process, from a cursor. */
export interface ReadResult {
	info: ProcessInfo;
	/** Plain text of the output from the cursor (or the screen, when `screen` is set). */
	text: string;
	/** The terminal's current screen was returned instead of the stream. */
	screen: boolean;
	from: number;
	next: number;
	/** Output from `next` on is not in this answer (read again from `next`). */
	more: boolean;
	/** Bytes skipped because they are no longer kept, and why. */
	dropped?: { bytes: number; why: string };
	/** The spill file holding the whole output so far, when there is one. */
	spillPath?: string;
}

/** One process of the table: its handle, output, screen and state (internal to procs/). */
export interface Entry {
	id: number;
	command: string;
	startedAt: number;
	proc: LiveProcess;
	log: OutputLog;
	screen?: Screen;
	exit?: LiveExit;
	state: ProcessState;
	/** Where the last read ended. */
	cursor: number;
	/** Called on output and on exit. */
	listeners: Set<() => void>;
	timer?: { clear(): void };
}
