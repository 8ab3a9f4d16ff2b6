/** Depth-first sorted directory walk that respects the ignore rules and stops when the consumer does. */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { isIgnored, joinPath, type Level, loadAncestors, loadLevel, type Override } from "./ignore-rules.js";
import type { Re2 } from "./patterns.js";
import { comparePaths, throwIfAborted } from "./semantics.js";

export type EntryKind = "file" | "dir" | "symlink" | "other";

export interface WalkEntry {
	abs: string;
	/** Where to open it: `abs`, or below the pinned handle the walk started from. */
	open: string;
	rel: string;
	name: string;
	kind: EntryKind;
}

export interface WalkOptions {
	customIgnore: string;
	override?: Override;
	signal?: AbortSignal;
	/** Open the root through this path (a pinned handle, /proc/<pid>/fd/N) instead of by name. */
	openRoot?: string;
	re2: Re2;
	/** .gitignore only inside a repository (default true; find passes false, see isIgnored). */
	requireGit?: boolean;
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
export async function* walk(root: string, opts: WalkOptions): AsyncGenerator<WalkEntry> {
	const top = await loadAncestors(root, opts.customIgnore, opts.re2);
	const open = opts.openRoot ?? root;
	yield* walkDir(root, open, "", await listDir(open), top, opts);
}

async function* walkDir(
	dir: string,
	openDir: string,
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
		const entry = {
			abs: joinPath(dir, d.name),
			open: joinPath(openDir, d.name),
			rel: rel ? `${rel}/${d.name}` : d.name,
			name: d.name,
			kind,
		};
		const verdict = opts.override?.(entry.rel, isDir);
		if (verdict === "ignore") continue;
		if (verdict === undefined && isIgnored(level, entry.abs, isDir, opts.requireGit)) continue;
		yield entry;
		if (isDir) {
			const children = await listDir(entry.open);
			const names = new Set(children.map((c) => c.name));
			const childLevel = await loadLevel(entry.abs, level, opts.customIgnore, opts.re2, names);
			yield* walkDir(entry.abs, entry.open, entry.rel, children, childLevel, opts);
		}
	}
}
