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

/**
 * How many directories of one level are listed ahead of the walk. Listing is the walk's wait (one
 * thread-pool hop each); with several in flight the pool lists while this thread matches, and the
 * walk's order stays the sorted depth-first one.
 */
const LIST_AHEAD = 8;

/** One directory being walked: its sorted entries, what the walk decided for each, listings ahead. */
class Frame {
	i = 0;
	private readonly entries: WalkEntry[] = [];
	private readonly listings: (Promise<Dirent[]> | undefined)[] = [];
	private ahead = 0;

	constructor(
		dir: string,
		openDir: string,
		rel: string,
		children: Dirent[],
		readonly level: Level,
		opts: WalkOptions,
	) {
		for (const d of children) {
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
			this.entries.push(entry);
		}
		this.listAhead(LIST_AHEAD);
	}

	next(): WalkEntry | undefined {
		return this.entries[this.i++];
	}

	/** The sorted children of the entry just returned by next() (a directory). */
	children(): Promise<Dirent[]> {
		const at = this.i - 1;
		const listing = this.listings[at] ?? listDir(this.entries[at].open);
		this.listings[at] = undefined;
		this.listAhead(1);
		return listing;
	}

	private listAhead(n: number): void {
		while (n > 0 && this.ahead < this.entries.length) {
			const at = this.ahead++;
			if (at < this.i || this.entries[at].kind !== "dir") continue;
			this.listings[at] = listDir(this.entries[at].open);
			n--;
		}
	}
}

/** Depth-first, sorted, lazily: the consumer stops the walk by leaving its loop. */
export async function* walk(root: string, opts: WalkOptions): AsyncGenerator<WalkEntry> {
	const top = await loadAncestors(root, opts.customIgnore, opts.re2);
	const open = opts.openRoot ?? root;
	const stack = [new Frame(root, open, "", await listDir(open), top, opts)];
	while (stack.length > 0) {
		const frame = stack[stack.length - 1];
		const entry = frame.next();
		if (!entry) {
			stack.pop();
			continue;
		}
		throwIfAborted(opts.signal);
		yield entry;
		if (entry.kind !== "dir") continue;
		const children = await frame.children();
		const names = new Set(children.map((c) => c.name));
		const level = await loadLevel(entry.abs, frame.level, opts.customIgnore, opts.re2, names);
		stack.push(new Frame(entry.abs, entry.open, entry.rel, children, level, opts));
	}
}
