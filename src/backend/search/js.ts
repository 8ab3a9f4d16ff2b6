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
import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import picomatch from "picomatch";
import { fromSystemError, KeelError } from "../../boundary/errors.js";
import type { FindOutcome, FindRequest, GrepMatch, GrepOutcome, GrepRequest, SearchOps } from "../types.js";

// ---------------------------------------------------------------------------------------------
// Ordering, lines, context

/**
 * Order of relative POSIX paths: UTF-8 byte order of their components, with "/" below every
 * other character, so "a/", "a/b" come before "a.txt" — the order of a depth-first walk with
 * sorted names, which is what `rg --sort path` produces.
 */
export function comparePaths(a: string, b: string): number {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) {
		const x = a.charCodeAt(i);
		const y = b.charCodeAt(i);
		if (x === y) continue;
		if (x === 0x2f) return -1;
		if (y === 0x2f) return 1;
		// A surrogate encodes a code point above U+FFFF, which sorts after every BMP character in
		// UTF-8 even though its UTF-16 unit may be smaller (e.g. than U+E000).
		const sx = x >= 0xd800 && x <= 0xdfff;
		const sy = y >= 0xd800 && y <= 0xdfff;
		if (sx !== sy) return sx ? 1 : -1;
		return x - y;
	}
	return a.length - b.length;
}

/** Drop one trailing "\n", then one trailing "\r". */
export function stripEol(text: string): string {
	const t = text.endsWith("\n") ? text.slice(0, -1) : text;
	return t.endsWith("\r") ? t.slice(0, -1) : t;
}

/**
 * Build the matches of one file. `before`/`after` are the lines in [line-C, line-1] and
 * [line+1, line+C] that exist, computed per file so overlapping windows share lines.
 */
export function withContext(
	path: string,
	matchLines: readonly number[],
	lineAt: (n: number) => string | undefined,
	context: number,
): GrepMatch[] {
	const around = (from: number, to: number) => {
		const out = [];
		for (let n = Math.max(1, from); n <= to; n++) {
			const text = lineAt(n);
			if (text !== undefined) out.push({ line: n, text });
		}
		return out;
	};
	return matchLines.map((line) => ({
		path,
		line,
		text: lineAt(line) ?? "",
		before: around(line - context, line - 1),
		after: around(line + 1, line + context),
	}));
}

export function abortedError(): KeelError {
	return new KeelError("ABORTED", "Search aborted.");
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
	if (signal?.aborted) throw abortedError();
}

// ---------------------------------------------------------------------------------------------
// Patterns

function invalidPattern(what: string, pattern: string, why: string): KeelError {
	return new KeelError("INVALID_PATTERN", `Invalid ${what} ${JSON.stringify(pattern)}: ${why}`, {
		details: { pattern },
	});
}

/** Whether a regex has a "\\n" escape outside a character class (rg rejects those). */
function hasNewlineEscape(pattern: string): boolean {
	let inClass = false;
	for (let i = 0; i < pattern.length; i++) {
		const c = pattern[i];
		if (c === "\\") {
			if (pattern[i + 1] === "n" && !inClass) return true;
			i++;
		} else if (c === "[") {
			inClass = true;
		} else if (c === "]") {
			inClass = false;
		}
	}
	return false;
}

/** Regex pattern → JS RegExp, pragmatically close to Rust regex as rg runs it line by line. */
function compileGrepRegExp(req: Pick<GrepRequest, "pattern" | "literal" | "ignoreCase">): RegExp {
	// rg refuses patterns that could match a line terminator; do the same (a heuristic for "\n").
	if (req.pattern.includes("\n") || (!req.literal && hasNewlineEscape(req.pattern))) {
		throw invalidPattern("regex", req.pattern, 'the literal "\\n" is not allowed in a regex');
	}
	let source = req.literal ? req.pattern.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") : req.pattern;
	let ignoreCase = req.ignoreCase === true;
	if (!req.literal) {
		if (source.startsWith("(?i)")) {
			ignoreCase = true;
			source = source.slice(4);
		}
		source = source.replaceAll("(?P<", "(?<");
	}
	// "s": like Rust regex, "." matches everything but "\n" (lines never contain one).
	const flags = `s${ignoreCase ? "i" : ""}`;
	try {
		return new RegExp(source, `${flags}u`);
	} catch {
		try {
			// Without "u" JS accepts escapes such as "\-" that Rust regex allows.
			return new RegExp(source, flags);
		} catch (e) {
			throw invalidPattern("regex", req.pattern, (e as Error).message);
		}
	}
}

/**
 * Check a glob the way rg/fd's globset does and translate it for picomatch: reject dangling
 * "\", unclosed "[" or "{", nested "{"; rewrite a class negation "[!" to "[^"; escape what is
 * literal to globset but special to picomatch.
 */
function toPicomatchGlob(glob: string): string {
	let out = "";
	let depth = 0;
	for (let i = 0; i < glob.length; i++) {
		const c = glob[i];
		if (c === "\\") {
			if (i + 1 >= glob.length) throw invalidPattern("glob", glob, "dangling '\\'");
			out += c + glob[++i];
		} else if (c === "[") {
			let j = i + 1;
			let cls = "[";
			if (glob[j] === "!" || glob[j] === "^") {
				cls += "^";
				j++;
			}
			// A "]" right after the opening is a literal member.
			if (glob[j] === "]") {
				cls += "\\]";
				j++;
			}
			while (j < glob.length && glob[j] !== "]") {
				cls += glob[j] === "\\" || glob[j] === "[" ? `\\${glob[j]}` : glob[j];
				j++;
			}
			if (j >= glob.length) throw invalidPattern("glob", glob, "unclosed character class");
			out += `${cls}]`;
			i = j;
		} else if (c === "{") {
			if (depth > 0) throw invalidPattern("glob", glob, "nested alternate groups are not allowed");
			depth++;
			out += c;
		} else if (c === "}" && depth > 0) {
			depth--;
			out += c;
		} else if ("}()|+@!".includes(c)) {
			// Literal in globset; special (or potentially special) to picomatch.
			out += `\\${c}`;
		} else {
			out += c;
		}
	}
	if (depth > 0) throw invalidPattern("glob", glob, "unclosed alternate group");
	// globset's "dir/**" matches what is inside dir, not dir itself; picomatch's matches both.
	return out.endsWith("/**") ? `${out}/*` : out;
}

const PM_OPTIONS = { dot: true, noextglob: true, nonegate: true } as const;

function compileGlob(glob: string): (path: string) => boolean {
	const source = toPicomatchGlob(glob);
	try {
		return picomatch(source, PM_OPTIONS);
	} catch (e) {
		throw invalidPattern("glob", glob, (e as Error).message);
	}
}

/**
 * A find pattern is matched against the entry's name unless it contains "/"; then against the
 * path relative to the search directory, anchored there when it starts with "/" and at any
 * depth otherwise ("**\/" is prepended), like `fd --glob --full-path` on the absolute path.
 */
export function findGlobTarget(pattern: string): { fullPath: boolean; glob: string } {
	if (!pattern.includes("/")) return { fullPath: false, glob: pattern };
	if (pattern.startsWith("/")) return { fullPath: true, glob: pattern.slice(1) };
	return { fullPath: true, glob: pattern.startsWith("**/") ? pattern : `**/${pattern}` };
}

/** Escape a literal path for use inside a globset/picomatch glob. */
export function escapeGlob(literal: string): string {
	return literal.replace(/[*?[\]{}\\]/g, "\\$&");
}

// ---------------------------------------------------------------------------------------------
// Ignore rules (gitignore syntax, as the `ignore` crate reads it)

type Verdict = "ignore" | "whitelist" | undefined;

interface IgnoreRule {
	match: (path: string) => boolean;
	whitelist: boolean;
	dirOnly: boolean;
}

/** Parse one gitignore line; `strict` throws INVALID_PATTERN instead of skipping a bad glob. */
function parseIgnoreLine(raw: string, strict: boolean): IgnoreRule | undefined {
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
		return { match: compileGlob(glob), whitelist, dirOnly };
	} catch (e) {
		if (strict) throw e;
		return undefined;
	}
}

function parseIgnoreFile(text: string): IgnoreRule[] {
	const rules: IgnoreRule[] = [];
	for (const line of text.split(/\r?\n/)) {
		const rule = parseIgnoreLine(line, false);
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

type Override = (rel: string, isDir: boolean) => Verdict;

/**
 * The grep `glob` filter, as `rg --glob`: gitignore syntax relative to the search directory; a
 * match overrides every ignore rule; with a positive glob, non-matching files are skipped while
 * non-matching directories fall through to the ignore rules; "!" excludes.
 */
function compileOverride(glob: string): Override {
	const rule = parseIgnoreLine(glob, true);
	if (!rule) return () => undefined;
	const positive = !rule.whitelist;
	return (rel, isDir) => {
		if ((!rule.dirOnly || isDir) && rule.match(rel)) return positive ? "whitelist" : "ignore";
		return positive && !isDir ? "ignore" : undefined;
	};
}

/** Ignore files of one directory, linked to those of its parent. */
interface Level {
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

async function readRules(file: string): Promise<IgnoreRule[]> {
	try {
		return parseIgnoreFile(await readFile(file, "utf8"));
	} catch {
		return [];
	}
}

function joinPath(dir: string, name: string): string {
	return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/** `names` (the directory listing, when known) spares reads of files that are not there. */
async function loadLevel(
	dir: string,
	parent: Level | undefined,
	customName: string | undefined,
	names?: ReadonlySet<string>,
): Promise<Level> {
	const rules = (name: string | undefined) =>
		name !== undefined && (!names || names.has(name)) ? readRules(joinPath(dir, name)) : [];
	const hasGit = names
		? names.has(".git")
		: await stat(joinPath(dir, ".git")).then(
				() => true,
				() => false,
			);
	const [custom, dot, git, exclude] = await Promise.all([
		rules(customName),
		rules(".ignore"),
		rules(".gitignore"),
		hasGit ? readRules(joinPath(dir, ".git/info/exclude")) : [],
	]);
	return { dir, parent, hasGit, anyGit: hasGit || (parent?.anyGit ?? false), custom, dot, git, exclude };
}

/** Levels for `/` down to `root`, loaded in parallel, linked in order. */
async function loadAncestors(root: string, customName: string | undefined): Promise<Level> {
	const dirs = ["/"];
	for (const part of root.split("/").filter(Boolean)) dirs.push(joinPath(dirs[dirs.length - 1], part));
	const loaded = await Promise.all(dirs.map((d) => loadLevel(d, undefined, customName)));
	let level: Level | undefined;
	for (const l of loaded) {
		l.parent = level;
		l.anyGit = l.hasGit || (level?.anyGit ?? false);
		level = l;
	}
	return level!;
}

function isIgnored(level: Level, abs: string, isDir: boolean): boolean {
	let custom: Verdict;
	let dot: Verdict;
	let git: Verdict;
	let exclude: Verdict;
	let sawGit = false;
	for (let l: Level | undefined = level; l; l = l.parent) {
		const rel = l.dir === "/" ? abs.slice(1) : abs.slice(l.dir.length + 1);
		if (custom === undefined && l.custom.length > 0) custom = matchRules(l.custom, rel, isDir);
		if (dot === undefined && l.dot.length > 0) dot = matchRules(l.dot, rel, isDir);
		// .gitignore rules count only up to (and including) the nearest repository root.
		if (level.anyGit && !sawGit) {
			if (git === undefined && l.git.length > 0) git = matchRules(l.git, rel, isDir);
			if (exclude === undefined && l.exclude.length > 0) exclude = matchRules(l.exclude, rel, isDir);
		}
		sawGit ||= l.hasGit;
	}
	return (custom ?? dot ?? git ?? exclude) === "ignore";
}

// ---------------------------------------------------------------------------------------------
// Walk

type EntryKind = "file" | "dir" | "symlink" | "other";

interface WalkEntry {
	abs: string;
	rel: string;
	name: string;
	kind: EntryKind;
}

interface WalkOptions {
	customIgnore: string;
	override?: Override;
	signal?: AbortSignal;
}

function kindOf(d: Dirent): EntryKind {
	if (d.isSymbolicLink()) return "symlink";
	if (d.isDirectory()) return "dir";
	if (d.isFile()) return "file";
	return "other";
}

async function listDir(dir: string): Promise<Dirent[]> {
	try {
		const entries = await readdir(dir, { withFileTypes: true });
		return entries.sort((a, b) => comparePaths(a.name, b.name));
	} catch {
		return []; // unreadable directories are skipped, as rg/fd do
	}
}

/** Depth-first, sorted, lazily: the consumer stops the walk by leaving its loop. */
async function* walk(root: string, opts: WalkOptions): AsyncGenerator<WalkEntry> {
	const top = await loadAncestors(root, opts.customIgnore);
	yield* walkDir(root, "", await listDir(root), top, opts);
}

async function* walkDir(
	dir: string,
	rel: string,
	entries: Dirent[],
	level: Level,
	opts: WalkOptions,
): AsyncGenerator<WalkEntry> {
	for (const d of entries) {
		throwIfAborted(opts.signal);
		if (d.name === ".git") continue;
		const kind = kindOf(d);
		const isDir = kind === "dir";
		const entry = { abs: joinPath(dir, d.name), rel: rel ? `${rel}/${d.name}` : d.name, name: d.name, kind };
		const verdict = opts.override?.(entry.rel, isDir);
		if (verdict === "ignore") continue;
		if (verdict === undefined && isIgnored(level, entry.abs, isDir)) continue;
		yield entry;
		if (isDir) {
			const children = await listDir(entry.abs);
			const names = new Set(children.map((c) => c.name));
			const childLevel = await loadLevel(entry.abs, level, opts.customIgnore, names);
			yield* walkDir(entry.abs, entry.rel, children, childLevel, opts);
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Engine

/**
 * Text of a file, or undefined when it is binary (contains a NUL byte anywhere: rg stops at the
 * first NUL and the rg engine drops such files). UTF-16 with a BOM is decoded, as rg does.
 */
function decodeText(buf: Buffer): string | undefined {
	let text: string;
	if (buf.length >= 2 && buf[0] === 0xff && buf[1] === 0xfe) {
		text = new TextDecoder("utf-16le").decode(buf.subarray(2));
	} else if (buf.length >= 2 && buf[0] === 0xfe && buf[1] === 0xff) {
		text = new TextDecoder("utf-16be").decode(buf.subarray(2));
	} else {
		if (buf.includes(0)) return undefined;
		text = buf.toString("utf8");
	}
	if (text.includes("\0")) return undefined;
	return text.startsWith("\uFEFF") ? text.slice(1) : text;
}

/** Matches of one file, at most `max` (the context of the last one stays complete). */
async function grepFile(path: string, regex: RegExp, context: number, max: number): Promise<GrepMatch[]> {
	let buf: Buffer;
	try {
		buf = await readFile(path);
	} catch {
		return []; // unreadable or vanished: skipped, as rg does
	}
	const text = decodeText(buf);
	if (text === undefined) return [];
	const lines = text.split("\n");
	if (lines[lines.length - 1] === "") lines.pop();
	const matchLines: number[] = [];
	// Lines keep a "\r" while matching, like rg without --crlf.
	for (let i = 0; i < lines.length && matchLines.length < max; i++) {
		if (regex.test(lines[i])) matchLines.push(i + 1);
	}
	if (matchLines.length === 0) return [];
	return withContext(
		path,
		matchLines,
		(n) => (n <= lines.length ? stripEol(lines[n - 1]) : undefined),
		context,
	);
}

/** Files read ahead of the one being collected, to overlap I/O. */
const READ_AHEAD = 8;

async function jsGrep(req: GrepRequest): Promise<GrepOutcome> {
	const regex = compileGrepRegExp(req);
	const override = req.glob ? compileOverride(req.glob) : undefined;
	throwIfAborted(req.signal);
	const st = await stat(req.path).catch((e) => {
		throw fromSystemError(e, req.path);
	});
	const max = req.limit + 1; // one more than the limit tells whether the limit cut anything
	const found: GrepMatch[] = [];
	if (!st.isDirectory()) {
		// A file named explicitly is searched whatever the ignore rules and glob say.
		found.push(...(await grepFile(req.path, regex, req.context, max)));
	} else {
		const pending: Promise<GrepMatch[]>[] = [];
		const collectOne = async () => {
			found.push(...(await pending.shift()!));
			throwIfAborted(req.signal);
			return found.length >= max;
		};
		let full = false;
		for await (const entry of walk(req.path, { customIgnore: ".rgignore", override, signal: req.signal })) {
			if (entry.kind !== "file") continue;
			pending.push(grepFile(entry.abs, regex, req.context, max));
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
	const st = await stat(req.path).catch((e) => {
		throw fromSystemError(e, req.path);
	});
	if (!st.isDirectory())
		throw new KeelError("NOT_DIRECTORY", `Not a directory: ${req.path}.`, { path: req.path });
	const paths: string[] = [];
	for await (const entry of walk(req.path, { customIgnore: ".fdignore", signal: req.signal })) {
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
