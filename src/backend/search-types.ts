/**
 * The seam's search (the `grep` and `find` tools): what SearchOps in types.ts
 * is asked and what it answers, the same for every engine. Re-exported by types.ts.
 */

import type { WorkOwner } from "../boundary/call-scope.js";

/** A content search: the pattern, where, which files, and its bounds. */
export interface GrepRequest {
	pattern: string;
	/** Absolute canonical file or directory. */
	path: string;
	glob?: string;
	ignoreCase?: boolean;
	literal?: boolean;
	/** Lines of context before and after each match. */
	context: number;
	/** Stop after this many matches. */
	limit: number;
	signal?: AbortSignal;
	/** The call that owns work the search leaves unawaited (read-ahead): see boundary/call-scope.ts. */
	owner?: WorkOwner;
	/**
	 * On this machine: where the engine opens `path` (`/proc/<pid>/fd/N`, a handle on what the
	 * guard checked). Results and messages still name `path`.
	 */
	pinned?: string;
	/**
	 * `pinned` is a directory: rg then starts in it as its working directory (one resolution of
	 * the handle, not one per file opened below it).
	 */
	pinnedDir?: boolean;
	/** When this fires, stop (children killed) and answer what was found, with `timedOut`. */
	stop?: AbortSignal;
}

/** A context line around a match. */
export interface GrepLine {
	line: number;
	text: string;
}

/** One matching line, with its path, line number and context. */
export interface GrepMatch {
	/** Absolute path of the file. */
	path: string;
	line: number;
	/** Line text without its line ending. */
	text: string;
	before: GrepLine[];
	after: GrepLine[];
}

/** A content search's matches, and whether a bound stopped it. */
export interface GrepOutcome {
	matches: GrepMatch[];
	limitReached: boolean;
	engine: string;
	/** The request's `stop` fired: the results are those found until then. */
	timedOut?: boolean;
}

/** A file search by glob: the pattern, where, and its bounds. */
export interface FindRequest {
	pattern: string;
	/** Absolute canonical directory. */
	path: string;
	limit: number;
	signal?: AbortSignal;
	owner?: WorkOwner;
	/**
	 * On this machine: where the engine opens `path` (`/proc/<pid>/fd/N`, a handle on what the
	 * guard checked). Results and messages still name `path`.
	 */
	pinned?: string;
	/** As GrepRequest.stop. */
	stop?: AbortSignal;
}

/** A file search's paths, and whether a bound stopped it. */
export interface FindOutcome {
	/** Paths relative to the search directory, POSIX separators, directories end with "/". */
	paths: string[];
	limitReached: boolean;
	engine: string;
	/** The request's `stop` fired: the results are those found until then. */
	timedOut?: boolean;
}

/**
 * Search semantics shared by every engine: hidden files included, `.git` excluded, and
 * `.gitignore`/`.ignore` rules respected the way rg and fd apply them (find also outside a repository, as pi).
 */
export interface SearchOps {
	/** Search file contents (rg semantics). */
	grep(req: GrepRequest): Promise<GrepOutcome>;
	/** Search file names by glob (fd semantics). */
	find(req: FindRequest): Promise<FindOutcome>;
}
