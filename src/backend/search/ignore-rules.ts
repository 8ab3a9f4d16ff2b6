/** Ignore rules in gitignore syntax, applied the way rg and fd (the `ignore` crate) apply them. */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { open, stat } from "node:fs/promises";
import { compileGlob, type Re2 } from "./patterns.js";

type Verdict = "ignore" | "whitelist" | undefined;

interface IgnoreRule {
	match: (path: string) => boolean;
	whitelist: boolean;
	dirOnly: boolean;
}

/** Parse one gitignore line; `strict` throws INVALID_PATTERN instead of skipping a bad glob. */
function parseIgnoreLine(raw: string, strict: boolean, re2: Re2): IgnoreRule | undefined {
	if (raw.startsWith("#")) return undefined;
	let line = raw.endsWith("\\ ") ? raw : raw.trimEnd();
	if (line === "") return undefined;
	let whitelist = false;
	let anchored = false;
	if (line.startsWith("\\!") || line.startsWith("\\#")) {
		line = line.slice(1);
	} else {
		if (line.startsWith("!")) {
			whitelist = true;
			line = line.slice(1);
		}
		if (line.startsWith("/")) {
			anchored = true;
			line = line.slice(1);
		}
	}
	let dirOnly = false;
	if (line.endsWith("/")) {
		dirOnly = true;
		line = line.slice(0, -1);
		if (line.endsWith("\\")) line = line.slice(0, -1);
	}
	if (line === "") return undefined;
	let glob = line;
	// No slash: match at any depth. A trailing "/**" matches the contents, not the directory.
	if (!anchored && !line.includes("/") && !glob.startsWith("**/") && glob !== "**") glob = `**/${glob}`;
	if (glob.endsWith("/**")) glob += "/*";
	try {
		return { match: compileGlob(glob, re2), whitelist, dirOnly };
	} catch (e) {
		if (strict) throw e;
		return undefined;
	}
}

/** Rules of one ignore file's text (bad globs skipped, as rg does). */
export function parseIgnoreFile(text: string, re2: Re2): IgnoreRule[] {
	const rules: IgnoreRule[] = [];
	for (const line of text.split(/\r?\n/)) {
		const rule = parseIgnoreLine(line, false, re2);
		if (rule) rules.push(rule);
	}
	return rules;
}

/** Last matching rule wins. */
function matchRules(rules: readonly IgnoreRule[], rel: string, isDir: boolean): Verdict {
	for (let i = rules.length - 1; i >= 0; i--) {
		const r = rules[i];
		if ((!r.dirOnly || isDir) && r.match(rel)) return r.whitelist ? "whitelist" : "ignore";
	}
	return undefined;
}

export type Override = (rel: string, isDir: boolean) => Verdict;

/**
 * The grep `glob` filter, as `rg --glob`: gitignore syntax relative to the search directory; a
 * match overrides every ignore rule; with a positive glob, non-matching files are skipped while
 * non-matching directories fall through to the ignore rules; "!" excludes.
 */
export function compileOverride(glob: string, re2: Re2): Override {
	const rule = parseIgnoreLine(glob, true, re2);
	if (!rule) return () => undefined;
	const positive = !rule.whitelist;
	return (rel, isDir) => {
		if ((!rule.dirOnly || isDir) && rule.match(rel)) return positive ? "whitelist" : "ignore";
		return positive && !isDir ? "ignore" : undefined;
	};
}

/** Ignore files of one directory, linked to those of its parent. */
export interface Level {
	dir: string;
	parent: Level | undefined;
	hasGit: boolean;
	/** This directory or an ancestor is a repository root. */
	anyGit: boolean;
	custom: IgnoreRule[];
	dot: IgnoreRule[];
	git: IgnoreRule[];
	exclude: IgnoreRule[];
}

/** Larger ignore files are read this far (rg reads them whole; no real one comes near). */
const MAX_IGNORE_BYTES = 16 * 1024 * 1024;

/**
 * The rules of an ignore file; none when it is not a regular file. O_NONBLOCK: a FIFO planted as
 * `.gitignore` is never waited on (a blocked read would hold a thread-pool thread for good).
 */
async function readRules(file: string, re2: Re2): Promise<IgnoreRule[]> {
	let handle: Awaited<ReturnType<typeof open>> | undefined;
	try {
		handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
		const st = await handle.stat();
		if (!st.isFile()) return [];
		const buf = Buffer.alloc(Math.min(st.size, MAX_IGNORE_BYTES));
		const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
		return parseIgnoreFile(buf.toString("utf8", 0, bytesRead), re2);
	} catch {
		return [];
	} finally {
		await handle?.close();
	}
}

/**
 * The largest ignore file read without the thread pool: its parse holds the event loop (re2js, by
 * line), so a larger one ends the synchronous read (IgnoreTooLarge) rather than stall a caller.
 */
const MAX_SYNC_IGNORE_BYTES = 256 * 1024;

export class IgnoreTooLarge extends Error {}

/**
 * readRules without the thread pool, for a caller that has checked that the file lies on a local
 * file system (grep's lookahead: a hop per ignore file costs it more than the read). Throws
 * IgnoreTooLarge past MAX_SYNC_IGNORE_BYTES.
 */
function readRulesSync(file: string, re2: Re2): IgnoreRule[] {
	let fd: number | undefined;
	try {
		fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
		const st = fstatSync(fd);
		if (!st.isFile()) return [];
		if (st.size > MAX_SYNC_IGNORE_BYTES) throw new IgnoreTooLarge(`${file}: ${st.size} bytes`);
		const buf = Buffer.alloc(st.size);
		return parseIgnoreFile(buf.toString("utf8", 0, readSync(fd, buf, 0, buf.length, 0)), re2);
	} catch (e) {
		if (e instanceof IgnoreTooLarge) throw e;
		return [];
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

export function joinPath(dir: string, name: string): string {
	return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/**
 * The ignore files a level reads: the custom one, .ignore, .gitignore, and .git/info/exclude in
 * a repository root. `names` (the directory listing, when known) spares reads of files that are
 * not there.
 */
function levelFiles(
	dir: string,
	customName: string | undefined,
	hasGit: boolean,
	names: ReadonlySet<string> | undefined,
): (string | undefined)[] {
	const there = (name: string | undefined) =>
		name !== undefined && (!names || names.has(name)) ? joinPath(dir, name) : undefined;
	return [
		there(customName),
		there(".ignore"),
		there(".gitignore"),
		hasGit ? joinPath(dir, ".git/info/exclude") : undefined,
	];
}

function level(dir: string, parent: Level | undefined, hasGit: boolean, rules: IgnoreRule[][]): Level {
	const [custom, dot, git, exclude] = rules;
	return { dir, parent, hasGit, anyGit: hasGit || (parent?.anyGit ?? false), custom, dot, git, exclude };
}

export async function loadLevel(
	dir: string,
	parent: Level | undefined,
	customName: string | undefined,
	re2: Re2,
	names?: ReadonlySet<string>,
): Promise<Level> {
	const hasGit = names
		? names.has(".git")
		: await stat(joinPath(dir, ".git")).then(
				() => true,
				() => false,
			);
	const files = levelFiles(dir, customName, hasGit, names);
	return level(dir, parent, hasGit, await Promise.all(files.map((f) => (f ? readRules(f, re2) : []))));
}

/** loadLevel without the thread pool (readRulesSync: local file systems only; may throw IgnoreTooLarge). */
export function loadLevelSync(
	dir: string,
	parent: Level | undefined,
	customName: string | undefined,
	re2: Re2,
	names?: ReadonlySet<string>,
): Level {
	let hasGit = names?.has(".git") ?? false;
	if (!names) {
		try {
			statSync(joinPath(dir, ".git"));
			hasGit = true;
		} catch {
			// no repository root here
		}
	}
	const files = levelFiles(dir, customName, hasGit, names);
	return level(
		dir,
		parent,
		hasGit,
		files.map((f) => (f ? readRulesSync(f, re2) : [])),
	);
}

/** `/` and every directory down to `root`. */
function ancestors(root: string): string[] {
	const dirs = ["/"];
	for (const part of root.split("/").filter(Boolean)) dirs.push(joinPath(dirs[dirs.length - 1], part));
	return dirs;
}

/** Levels linked in order, `/` first. */
function linked(levels: Level[]): Level {
	let last: Level | undefined;
	for (const l of levels) {
		l.parent = last;
		l.anyGit = l.hasGit || (last?.anyGit ?? false);
		last = l;
	}
	return last!;
}

/** Levels for `/` down to `root`, loaded in parallel, linked in order. */
export async function loadAncestors(root: string, customName: string | undefined, re2: Re2): Promise<Level> {
	return linked(await Promise.all(ancestors(root).map((d) => loadLevel(d, undefined, customName, re2))));
}

/** loadAncestors without the thread pool (readRulesSync: local file systems only; may throw IgnoreTooLarge). */
export function loadAncestorsSync(root: string, customName: string | undefined, re2: Re2): Level {
	return linked(ancestors(root).map((d) => loadLevelSync(d, undefined, customName, re2)));
}

/**
 * `requireGit` (grep, as rg): .gitignore rules count inside a repository only. Without it (find,
 * as pi's `fd --no-require-git`) they also count outside any repository, at every level.
 */
export function isIgnored(level: Level, abs: string, isDir: boolean, requireGit = true): boolean {
	let custom: Verdict;
	let dot: Verdict;
	let git: Verdict;
	let exclude: Verdict;
	let sawGit = false;
	for (let l: Level | undefined = level; l; l = l.parent) {
		// Most levels have no rules: the path relative to a level is cut only for one that has.
		const dir = l.dir;
		const rel = () => (dir === "/" ? abs.slice(1) : abs.slice(dir.length + 1));
		if (custom === undefined && l.custom.length > 0) custom = matchRules(l.custom, rel(), isDir);
		if (dot === undefined && l.dot.length > 0) dot = matchRules(l.dot, rel(), isDir);
		// In a repository, .gitignore rules count only up to (and including) its root.
		if ((level.anyGit || !requireGit) && !sawGit) {
			if (git === undefined && l.git.length > 0) git = matchRules(l.git, rel(), isDir);
			if (exclude === undefined && l.exclude.length > 0) exclude = matchRules(l.exclude, rel(), isDir);
		}
		sawGit ||= l.hasGit;
	}
	return (custom ?? dot ?? git ?? exclude) === "ignore";
}
