/**
 * Search on a target without rg/fd: the tree is listed remotely in one call (find -printf), the
 * ignore files are fetched in one more, and the walk, ignore rules, globs and regexes are the JS
 * engine's own (ignore-rules.ts, patterns.ts, semantics.ts), so results match the local engines.
 * grep then fetches file contents in walk order, in batches (base64: framing that survives any
 * byte), and stops once it has one match past the limit. It moves the searched bytes over the
 * transport: fine for a fallback, and the reason rg on the target is preferred.
 *
 * Any backend that can run argv on its target shares this walk through an ExecTransport: the ssh
 * backend runs it over its job shells and only swaps the content search (`contents`) for grep(1)
 * on the host, so the searched bytes stay there.
 */
import { fromSystemError, KeelError } from "../../boundary/errors.js";
import {
	compileOverride,
	isIgnored,
	joinPath,
	type Level,
	type Override,
	parseIgnoreFile,
} from "../search/ignore-rules.js";

/** Rules of a fetched ignore file; an absent file has none. */
const parseIgnoreText = (text: string | undefined, re2: Re2) =>
	text === undefined ? [] : parseIgnoreFile(text, re2);

import { compileFindMatcher } from "../search/js.js";
import { compileGrepMatcher, loadRe2, type Re2 } from "../search/patterns.js";
import { comparePaths, grepBuffer, throwIfAborted } from "../search/semantics.js";
import type { FindOutcome, FindRequest, GrepMatch, GrepOutcome, GrepRequest, SearchOps } from "../types.js";
import { EXIT, errnoError } from "./errors.js";
import { type ExecTransport, runScript } from "./transport.js";

type Kind = "file" | "dir" | "symlink" | "other";

interface Node {
	name: string;
	kind: Kind;
	size: number;
}

interface Listing {
	/** The search path is a file, not a directory. */
	isFile: boolean;
	/** Children per directory, relative to the search root ("" is the root), sorted like walk.ts. */
	tree: Map<string, Node[]>;
	/** Ancestor ignore files (absolute path → text) and ancestor directories holding `.git`. */
	files: Map<string, string>;
	gitDirs: Set<string>;
}

const LIST = `LC_ALL=C; export LC_ALL
root=$1 custom=$2
shift 2
command -v base64 >/dev/null 2>&1 || exit 127
if [ -f "$root" ]; then printf 'T\\0f\\0'; exit 0; fi
if [ ! -d "$root" ]; then
  if [ -e "$root" ]; then exit ${EXIT.ENOTDIR}; fi
  exit ${EXIT.ENOENT}
fi
for d do
  case $d in /) p=;; *) p=$d;; esac
  x=
  if [ -e "$p/.git" ]; then printf 'G\\0%s\\0' "$d"; x=$p/.git/info/exclude; fi
  for f in "$p/$custom" "$p/.ignore" "$p/.gitignore" \${x:+"$x"}; do
    if [ -f "$f" ] && [ -r "$f" ]; then printf 'I\\0%s\\0' "$f"; base64 -w0 < "$f"; printf '\\0'; fi
  done
done
find "$root" -mindepth 1 \\( -name .git -printf 'E\\0%y\\0%s\\0%P\\0' -prune \\) -o -printf 'E\\0%y\\0%s\\0%P\\0'
exit 0
`;

/** One record per argument: "1" + base64 of the file, or "0" when it is not a readable file. */
const FETCH = `for f do
  if [ -f "$f" ] && [ -r "$f" ]; then printf 1; base64 -w0 < "$f"; printf '\\0'; else printf '0\\0'; fi
done
`;

const FETCH_MAX_FILES = 256;
const FETCH_MAX_BYTES = 4 * 1024 * 1024;
const FETCH_MAX_ARG_BYTES = 64 * 1024;
const KINDS: Record<string, Kind> = { f: "file", d: "dir", l: "symlink" };

async function fetch(
	transport: ExecTransport,
	paths: string[],
	signal?: AbortSignal,
): Promise<(Buffer | undefined)[]> {
	if (paths.length === 0) return [];
	const r = await runScript(transport, FETCH, paths, { signal });
	throwIfAborted(signal);
	const recs = r.stdout.toString("latin1").split("\0");
	return paths.map((_, i) =>
		recs[i]?.startsWith("1") ? Buffer.from(recs[i].slice(1), "base64") : undefined,
	);
}

function ancestorsOf(root: string): string[] {
	const dirs = ["/"];
	for (const part of root.split("/").filter(Boolean)) dirs.push(joinPath(dirs[dirs.length - 1], part));
	return dirs;
}

async function list(
	transport: ExecTransport,
	root: string,
	custom: string,
	signal?: AbortSignal,
): Promise<Listing> {
	throwIfAborted(signal);
	const r = await runScript(transport, LIST, [root, custom, ...ancestorsOf(root)], { signal });
	throwIfAborted(signal);
	if (r.exitCode === EXIT.ENOENT || r.exitCode === EXIT.ENOTDIR) {
		throw fromSystemError(errnoError(r.exitCode === EXIT.ENOENT ? "ENOENT" : "ENOTDIR", root), root);
	}
	if (r.exitCode === 127) {
		// Without base64 the ignore files could not be read: refuse rather than search what they hide.
		throw new KeelError(
			"BACKEND_UNAVAILABLE",
			"The search fallback needs base64 (GNU coreutils) on the target; install coreutils there, or rg and fd.",
		);
	}
	if (r.exitCode !== 0) {
		throw new KeelError("IO_ERROR", `Listing ${root} failed on the target: ${r.stderr.trim()}`, {
			path: root,
		});
	}
	const t = r.stdout.toString("utf8").split("\0");
	const out: Listing = { isFile: false, tree: new Map(), files: new Map(), gitDirs: new Set() };
	for (let i = 0; i < t.length; ) {
		const tag = t[i];
		if (tag === "T") {
			out.isFile = true;
			i += 2;
		} else if (tag === "G") {
			out.gitDirs.add(t[i + 1]);
			i += 2;
		} else if (tag === "I") {
			out.files.set(t[i + 1], Buffer.from(t[i + 2], "base64").toString("utf8"));
			i += 3;
		} else if (tag === "E") {
			const rel = t[i + 3];
			const slash = rel.lastIndexOf("/");
			const parent = slash < 0 ? "" : rel.slice(0, slash);
			const node = { name: rel.slice(slash + 1), kind: KINDS[t[i + 1]] ?? "other", size: Number(t[i + 2]) };
			const siblings = out.tree.get(parent);
			if (siblings) siblings.push(node);
			else out.tree.set(parent, [node]);
			i += 4;
		} else i++;
	}
	for (const nodes of out.tree.values()) nodes.sort((a, b) => comparePaths(a.name, b.name));
	return out;
}

/** Levels from `/` down to the search root, from the listing's ancestor records. */
function ancestorLevels(root: string, custom: string, l: Listing, re2: Re2): Level {
	let level: Level | undefined;
	for (const dir of ancestorsOf(root)) {
		const p = dir === "/" ? "" : dir;
		const rules = (name: string) => parseIgnoreText(l.files.get(`${p}/${name}`), re2);
		const hasGit = l.gitDirs.has(dir);
		level = {
			dir,
			parent: level,
			hasGit,
			anyGit: hasGit || (level?.anyGit ?? false),
			custom: rules(custom),
			dot: rules(".ignore"),
			git: rules(".gitignore"),
			exclude: hasGit ? rules(".git/info/exclude") : [],
		};
	}
	return level!;
}

interface Entry {
	abs: string;
	rel: string;
	name: string;
	kind: Kind;
	size: number;
}

/**
 * The walk of walk.ts over a listing: ignore files of directories inside the root are fetched
 * first (one call), then the walk is synchronous.
 */
async function walkListing(
	transport: ExecTransport,
	root: string,
	custom: string,
	l: Listing,
	override: Override | undefined,
	signal: AbortSignal | undefined,
	re2: Re2,
): Promise<Entry[]> {
	const wanted: string[] = [];
	for (const [dir, nodes] of l.tree) {
		const abs = dir === "" ? root : joinPath(root, dir);
		for (const n of nodes) {
			if ([custom, ".ignore", ".gitignore"].includes(n.name)) wanted.push(joinPath(abs, n.name));
			if (n.name === ".git") wanted.push(joinPath(abs, ".git/info/exclude"));
		}
	}
	const texts = new Map<string, string>();
	for (let i = 0; i < wanted.length; i += FETCH_MAX_FILES) {
		const batch = wanted.slice(i, i + FETCH_MAX_FILES);
		const got = await fetch(transport, batch, signal);
		batch.forEach((p, k) => {
			const b = got[k];
			if (b) texts.set(p, b.toString("utf8"));
		});
	}
	const levelFor = (abs: string, parent: Level, names: Set<string>): Level => {
		const rules = (name: string) =>
			names.has(name) ? parseIgnoreText(texts.get(joinPath(abs, name)), re2) : [];
		const hasGit = names.has(".git");
		return {
			dir: abs,
			parent,
			hasGit,
			anyGit: hasGit || parent.anyGit,
			custom: rules(custom),
			dot: rules(".ignore"),
			git: rules(".gitignore"),
			exclude: hasGit ? parseIgnoreText(texts.get(joinPath(abs, ".git/info/exclude")), re2) : [],
		};
	};
	const out: Entry[] = [];
	const visit = (dirAbs: string, dirRel: string, level: Level) => {
		for (const n of l.tree.get(dirRel) ?? []) {
			if (n.name === ".git") continue;
			const isDir = n.kind === "dir";
			const e = { abs: joinPath(dirAbs, n.name), rel: dirRel ? `${dirRel}/${n.name}` : n.name, ...n };
			const verdict = override?.(e.rel, isDir);
			if (verdict === "ignore") continue;
			if (verdict === undefined && isIgnored(level, e.abs, isDir, custom !== ".fdignore")) continue;
			out.push(e);
			if (isDir) {
				const names = new Set((l.tree.get(e.rel) ?? []).map((c) => c.name));
				visit(e.abs, e.rel, levelFor(e.abs, level, names));
			}
		}
	};
	visit(root, "", ancestorLevels(root, custom, l, re2));
	return out;
}

/** A file the walk kept for grep: absolute path and size (for batching). */
export interface SearchFile {
	abs: string;
	size: number;
}

/**
 * Searches the contents of the files the walk kept (in walk order) and gives their first `max`
 * matches, in order. Made once per request, before the walk, so a bad pattern fails early.
 */
export type ContentSearch = (
	req: GrepRequest,
	re2: Re2,
) => (files: readonly SearchFile[], max: number) => Promise<GrepMatch[]>;

/** The default content search: contents fetched in batches, matched with the JS engine's regex. */
function fetchedContents(transport: ExecTransport): ContentSearch {
	return (req, re2) => {
		const regex = compileGrepMatcher(req, re2);
		return async (files, max) => {
			const found: GrepMatch[] = [];
			for (let i = 0; i < files.length && found.length < max; ) {
				// Batches bounded by file count, content bytes and argument bytes (ARG_MAX).
				const batch: string[] = [];
				let bytes = 0;
				let argBytes = 0;
				while (
					i < files.length &&
					(batch.length === 0 ||
						(batch.length < FETCH_MAX_FILES && bytes < FETCH_MAX_BYTES && argBytes < FETCH_MAX_ARG_BYTES))
				) {
					batch.push(files[i].abs);
					bytes += files[i].size;
					argBytes += Buffer.byteLength(files[i].abs) + 1;
					i++;
				}
				const got = await fetch(transport, batch, req.signal);
				for (let k = 0; k < batch.length && found.length < max; k++) {
					const b = got[k];
					if (b) found.push(...grepBuffer(batch[k], b, regex, req.context, max - found.length));
				}
			}
			return found;
		};
	};
}

async function fallbackGrep(
	transport: ExecTransport,
	contents: ContentSearch,
	engine: string,
	req: GrepRequest,
): Promise<GrepOutcome> {
	const re2 = await loadRe2();
	const search = contents(req, re2);
	const override = req.glob ? compileOverride(req.glob, re2) : undefined;
	const listing = await list(transport, req.path, ".rgignore", req.signal);
	// A file named explicitly is searched whatever the ignore rules and glob say.
	const files = listing.isFile
		? [{ abs: req.path, size: 0 }]
		: (await walkListing(transport, req.path, ".rgignore", listing, override, req.signal, re2)).filter(
				(e) => e.kind === "file",
			);
	const found = await search(files, req.limit + 1);
	throwIfAborted(req.signal);
	return { matches: found.slice(0, req.limit), limitReached: found.length > req.limit, engine };
}

async function fallbackFind(
	transport: ExecTransport,
	engine: string,
	req: FindRequest,
): Promise<FindOutcome> {
	const re2 = await loadRe2();
	const matches = compileFindMatcher(req.pattern, re2);
	const listing = await list(transport, req.path, ".fdignore", req.signal);
	if (listing.isFile)
		throw new KeelError("NOT_DIRECTORY", `Not a directory: ${req.path}.`, { path: req.path });
	const entries = await walkListing(transport, req.path, ".fdignore", listing, undefined, req.signal, re2);
	const paths: string[] = [];
	for (const e of entries) {
		if (!matches(e.rel, e.name)) continue;
		paths.push(e.kind === "dir" ? `${e.rel}/` : e.rel);
		if (paths.length > req.limit) break;
	}
	throwIfAborted(req.signal);
	return { paths: paths.slice(0, req.limit), limitReached: paths.length > req.limit, engine };
}

export interface FallbackSearchOptions {
	/** Engine names the outcomes report (default "exec-fallback" for both). */
	engine?: { grep: string; find: string };
	/** How grep searches file contents (default: fetched over the transport, matched in JS). */
	contents?: ContentSearch;
}

export function createFallbackSearch(transport: ExecTransport, opts: FallbackSearchOptions = {}): SearchOps {
	const engine = opts.engine ?? { grep: "exec-fallback", find: "exec-fallback" };
	const contents = opts.contents ?? fetchedContents(transport);
	return {
		grep: (req) => fallbackGrep(transport, contents, engine.grep, req),
		find: (req) => fallbackFind(transport, engine.find, req),
	};
}
