/**
 * Pure-JS search engine, and the reference for the semantics every engine shares: the rg and fd
 * engines (native.ts) reuse the helpers exported here so that both produce the same results.
 *
 * Semantics (mirroring rg 13 / fd 8 with `--hidden`, which share ripgrep's `ignore` crate):
 *  - hidden entries are included; an entry named `.git` (and so everything inside) never is;
 *  - `.ignore` files (and the tool's own `.rgignore` for grep / `.fdignore` for find) apply at
 *    every level, from the filesystem root down;
 *  - `.gitignore` files and `.git/info/exclude` apply inside a repository (a directory with a
 *    `.git` entry), from the directory of the entry up to the nearest repository root; for find
 *    (as pi's `fd --no-require-git`) `.gitignore` files also apply outside any repository, each
 *    to its own directory and below; grep keeps rg's default (inside a repository only);
 *  - precedence: custom ignore file > `.ignore` > `.gitignore` > `info/exclude`; deeper files
 *    win within a kind; an ignored directory is not entered; each rule is tested against the
 *    entry itself only (so searching inside an ignored directory named explicitly works);
 *  - symlinks are never followed: grep skips them, find lists them as plain entries;
 *  - walk order: names in UTF-8 byte order, depth first (see `comparePaths`);
 *  - a file named as the grep path is searched whatever the ignore rules and glob say;
 *  - files with a NUL byte anywhere are binary and skipped (even when named explicitly);
 *  - limit: at most `limit` results, the first ones in walk order; `limitReached` is true iff
 *    more existed (every engine looks for one result past the limit before stopping).
 */
import { closeSync, constants, fstatSync, openSync, readFile } from "node:fs";
import { stat } from "node:fs/promises";
import { ownWork } from "../../boundary/call-scope.js";
import { pathFact } from "../../boundary/path-facts.js";
import { fromSystemError } from "../../boundary/system-errors.js";
import type { FindOutcome, FindRequest, GrepMatch, GrepOutcome, GrepRequest, SearchOps } from "../types.js";
import { compileOverride } from "./ignore-rules.js";
import {
	compileGlob,
	compileGrepMatcher,
	findGlobTarget,
	type LineMatcher,
	loadRe2,
	type Re2,
} from "./patterns.js";
import { grepBuffer, throwIfAborted } from "./semantics.js";
import { walk } from "./walk.js";

/** The rest of an open file, by descriptor (the caller closes it). */
function readFd(fd: number, signal: AbortSignal | undefined): Promise<Buffer> {
	return new Promise((resolve, reject) =>
		readFile(fd, { signal }, (err, data) => (err ? reject(err) : resolve(data))),
	);
}

/** Never follow a link swapped in for a listed file; never hang on a FIFO swapped in. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * A regular file's bytes, or undefined. The open is synchronous, before the first await: a walk
 * entry's path is below its directory's descriptor only until the walk resumes. O_NONBLOCK and the
 * fstat make a FIFO, device or socket swapped in after the walk listed a file cost nothing (never
 * read, never waited on).
 */
async function readRegular(
	at: string,
	flags: number,
	signal: AbortSignal | undefined,
): Promise<Buffer | undefined> {
	let fd: number;
	try {
		fd = openSync(at, flags);
	} catch {
		return undefined; // unreadable or vanished: skipped, as rg does
	}
	try {
		if (!fstatSync(fd).isFile()) return undefined;
		return await readFd(fd, signal);
	} catch {
		return undefined;
	} finally {
		closeSync(fd);
	}
}

/** Matches of one file, at most `max` (the context of the last one stays complete). Never rejects. */
async function grepFile(
	path: string,
	at: string,
	regex: LineMatcher,
	req: GrepRequest,
	max: number,
	flags = READ_FLAGS,
): Promise<GrepMatch[]> {
	const signals = [req.signal, req.stop].filter((x) => x !== undefined);
	const buf = await readRegular(at, flags, signals.length > 0 ? AbortSignal.any(signals) : undefined);
	return buf ? grepBuffer(path, buf, regex, req.context, max) : [];
}

/** Files read ahead of the one being collected, to overlap I/O. */
const READ_AHEAD = 8;

async function jsGrep(req: GrepRequest, re2: Re2): Promise<GrepOutcome> {
	const regex = compileGrepMatcher(req, re2);
	const override = req.glob ? compileOverride(req.glob, re2) : undefined;
	throwIfAborted(req.signal);
	const st = await stat(req.pinned ?? req.path).catch((e) => {
		throw fromSystemError(e, req.path);
	});
	const max = req.limit + 1; // one more than the limit tells whether the limit cut anything
	const found: GrepMatch[] = [];
	if (!st.isDirectory()) {
		// A file named explicitly is searched whatever the ignore rules and glob say.
		// A pinned handle on the file itself (/proc/<pid>/fd/N) is a link by design: that one is followed.
		const flags = req.pinned ? READ_FLAGS & ~constants.O_NOFOLLOW : READ_FLAGS;
		found.push(...(await grepFile(req.path, req.pinned ?? req.path, regex, req, max, flags)));
	} else {
		const pending: Promise<GrepMatch[]>[] = [];
		const collectOne = async () => {
			found.push(...(await pending.shift()!));
			throwIfAborted(req.signal);
			return found.length >= max || req.stop?.aborted === true;
		};
		try {
			let full = false;
			const opts = { customIgnore: ".rgignore", override, signal: req.signal, openRoot: req.pinned, re2 };
			for await (const entry of walk(req.path, opts)) {
				if (entry.kind !== "file") continue;
				// Read-ahead the loop may leave behind (limit reached, a failure): owned by the call.
				pending.push(ownWork(req.owner, grepFile(entry.abs, entry.open, regex, req, max)));
				if (pending.length >= READ_AHEAD && (await collectOne())) {
					full = true;
					break;
				}
			}
			while (!full && pending.length > 0) full = await collectOne();
		} finally {
			// Reads still in flight (limit reached, abort, a failed walk) end before the call does.
			await Promise.allSettled(pending);
		}
	}
	throwIfAborted(req.signal);
	const timedOut = req.stop?.aborted === true && found.length <= req.limit;
	const matches = found.slice(0, req.limit);
	return { matches, limitReached: found.length > req.limit, engine: "js", ...(timedOut ? { timedOut } : {}) };
}

/** Matcher for a find pattern; "" matches everything (as fd without a pattern). */
export function compileFindMatcher(pattern: string, re2: Re2): (rel: string, name: string) => boolean {
	if (pattern === "") return () => true;
	const target = findGlobTarget(pattern);
	const match = compileGlob(target.glob, re2);
	return target.fullPath ? (rel) => match(rel) : (_rel, name) => match(name);
}

async function jsFind(req: FindRequest, re2: Re2): Promise<FindOutcome> {
	const matches = compileFindMatcher(req.pattern, re2);
	throwIfAborted(req.signal);
	const st = await stat(req.pinned ?? req.path).catch((e) => {
		throw fromSystemError(e, req.path);
	});
	if (!st.isDirectory()) throw pathFact("not-a-directory", req.path);
	const paths: string[] = [];
	for await (const entry of walk(req.path, {
		customIgnore: ".fdignore",
		signal: req.signal,
		openRoot: req.pinned,
		re2,
		requireGit: false,
	})) {
		if (req.stop?.aborted) break;
		if (!matches(entry.rel, entry.name)) continue;
		paths.push(entry.kind === "dir" ? `${entry.rel}/` : entry.rel);
		if (paths.length > req.limit) break;
	}
	throwIfAborted(req.signal);
	const timedOut = req.stop?.aborted === true && paths.length <= req.limit;
	const shown = paths.slice(0, req.limit);
	return {
		paths: shown,
		limitReached: paths.length > req.limit,
		engine: "js",
		...(timedOut ? { timedOut } : {}),
	};
}

export function createJsSearch(): SearchOps {
	return {
		grep: async (req) => jsGrep(req, await loadRe2()),
		find: async (req) => jsFind(req, await loadRe2()),
	};
}
