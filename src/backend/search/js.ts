/**
 * Pure-JS search engine, and the reference for the semantics every engine shares: the rg and fd
 * engines (native.ts) reuse the helpers exported here so that both produce the same results.
 *
 * Semantics (mirroring rg 13 / fd 8 with `--hidden`, which share ripgrep's `ignore` crate):
 *  - hidden entries are included; an entry named `.git` (and so everything inside) never is;
 *  - `.ignore` files (and the tool's own `.rgignore` for grep / `.fdignore` for find) apply at
 *    every level, from the filesystem root down;
 *  - `.gitignore` files and `.git/info/exclude` apply only inside a repository (a directory with a
 *    `.git` entry), from the directory of the entry up to the nearest repository root;
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
import { constants } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { ownWork } from "../../boundary/call-scope.js";
import { fromSystemError, KeelError } from "../../boundary/errors.js";
import type { FindOutcome, FindRequest, GrepMatch, GrepOutcome, GrepRequest, SearchOps } from "../types.js";
import { compileOverride } from "./ignore-rules.js";
import { compileGlob, compileGrepRegExp, findGlobTarget } from "./patterns.js";
import { grepBuffer, throwIfAborted } from "./semantics.js";
import { walk } from "./walk.js";

/** Never follow a link swapped in for a listed file; never hang on a FIFO swapped in. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Matches of one file, at most `max` (the context of the last one stays complete). */
async function grepFile(
	path: string,
	open: string,
	regex: RegExp,
	context: number,
	max: number,
	flag = READ_FLAGS,
): Promise<GrepMatch[]> {
	let buf: Buffer;
	try {
		buf = await readFile(open, { flag });
	} catch {
		return []; // unreadable or vanished: skipped, as rg does
	}
	return grepBuffer(path, buf, regex, context, max);
}

/** Files read ahead of the one being collected, to overlap I/O. */
const READ_AHEAD = 8;

async function jsGrep(req: GrepRequest): Promise<GrepOutcome> {
	const regex = compileGrepRegExp(req);
	const override = req.glob ? compileOverride(req.glob) : undefined;
	throwIfAborted(req.signal);
	const st = await stat(req.pinned ?? req.path).catch((e) => {
		throw fromSystemError(e, req.path);
	});
	const max = req.limit + 1; // one more than the limit tells whether the limit cut anything
	const found: GrepMatch[] = [];
	if (!st.isDirectory()) {
		// A file named explicitly is searched whatever the ignore rules and glob say.
		// A pinned handle on the file itself (/proc/<pid>/fd/N) is a link by design: that one is followed.
		const flag = req.pinned ? READ_FLAGS & ~constants.O_NOFOLLOW : READ_FLAGS;
		found.push(...(await grepFile(req.path, req.pinned ?? req.path, regex, req.context, max, flag)));
	} else {
		const pending: Promise<GrepMatch[]>[] = [];
		const collectOne = async () => {
			found.push(...(await pending.shift()!));
			throwIfAborted(req.signal);
			return found.length >= max;
		};
		let full = false;
		const opts = { customIgnore: ".rgignore", override, signal: req.signal, openRoot: req.pinned };
		for await (const entry of walk(req.path, opts)) {
			if (entry.kind !== "file") continue;
			// Read-ahead the loop may leave behind (limit reached, a failure): owned by the call.
			pending.push(ownWork(req.owner, grepFile(entry.abs, entry.open, regex, req.context, max)));
			if (pending.length >= READ_AHEAD && (await collectOne())) {
				full = true;
				break;
			}
		}
		while (!full && pending.length > 0) full = await collectOne();
	}
	throwIfAborted(req.signal);
	return { matches: found.slice(0, req.limit), limitReached: found.length > req.limit, engine: "js" };
}

/** Matcher for a find pattern; "" matches everything (as fd without a pattern). */
function compileFindMatcher(pattern: string): (rel: string, name: string) => boolean {
	if (pattern === "") return () => true;
	const target = findGlobTarget(pattern);
	const match = compileGlob(target.glob);
	return target.fullPath ? (rel) => match(rel) : (_rel, name) => match(name);
}

async function jsFind(req: FindRequest): Promise<FindOutcome> {
	const matches = compileFindMatcher(req.pattern);
	throwIfAborted(req.signal);
	const st = await stat(req.pinned ?? req.path).catch((e) => {
		throw fromSystemError(e, req.path);
	});
	if (!st.isDirectory())
		throw new KeelError("NOT_DIRECTORY", `Not a directory: ${req.path}.`, { path: req.path });
	const paths: string[] = [];
	for await (const entry of walk(req.path, {
		customIgnore: ".fdignore",
		signal: req.signal,
		openRoot: req.pinned,
	})) {
		if (!matches(entry.rel, entry.name)) continue;
		paths.push(entry.kind === "dir" ? `${entry.rel}/` : entry.rel);
		if (paths.length > req.limit) break;
	}
	throwIfAborted(req.signal);
	return { paths: paths.slice(0, req.limit), limitReached: paths.length > req.limit, engine: "js" };
}

export function createJsSearch(): SearchOps {
	return { grep: jsGrep, find: jsFind };
}
