/**
 * Depth-first sorted directory walk that respects the ignore rules and stops when the consumer does.
 *
 * Each directory is listed through a descriptor opened below its parent's descriptor, by name,
 * with O_NOFOLLOW (`/proc/self/fd/<parent>/<name>`): a directory swapped for a link after its
 * parent was listed is refused (skipped), never listed at the link's target. An entry's `open` is
 * below its directory's descriptor too, valid until the walk is next resumed: a consumer opens it
 * (with O_NOFOLLOW) before asking for the next entry.
 */
import { closeSync, constants, type Dirent, existsSync, openSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { isIgnored, joinPath, type Level, loadAncestors, loadLevel, type Override } from "./ignore-rules.js";
import type { Re2 } from "./patterns.js";
import { comparePaths, throwIfAborted } from "./semantics.js";

export type EntryKind = "file" | "dir" | "symlink" | "other";

export interface WalkEntry {
	abs: string;
	/** Where to open it: below its directory's descriptor (`abs` without /proc), until the walk resumes. */
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

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A directory opened for one walk, and its sorted entries once listed. */
interface Listing {
	fd: number;
	/** Where its entries are opened: below its descriptor, or by name without /proc. */
	base: string;
	entries: Promise<Dirent[]>;
}

/** The descriptors one walk holds open: at most its depth times LIST_AHEAD + 1. */
class Listings {
	private readonly open = new Set<number>();
	private readonly viaProc = existsSync("/proc/self/fd");

	/** Open `path` as a directory (not through a link at its last component) and start listing it. */
	list(path: string, follow = false): Listing {
		let fd = -1;
		try {
			fd = openSync(path, follow ? DIR_FLAGS & ~constants.O_NOFOLLOW : DIR_FLAGS);
		} catch {
			// unreadable, gone, or no longer a directory (a link swapped in): skipped, as rg/fd do
			return { fd, base: path, entries: Promise.resolve([]) };
		}
		this.open.add(fd);
		const base = this.viaProc ? `/proc/self/fd/${fd}` : path;
		return { fd, base, entries: sortedEntries(base) };
	}

	/** Close a listing's descriptor once its entries are listed and its children opened. */
	async done(l: Listing): Promise<void> {
		if (l.fd < 0 || !this.open.delete(l.fd)) return;
		await l.entries;
		closeSync(l.fd);
	}

	/** At the walk's end: every descriptor still open, after its listing in flight settles. */
	async closeAll(pending: Listing[]): Promise<void> {
		await Promise.all(pending.map((l) => l.entries));
		for (const fd of this.open) closeSync(fd);
		this.open.clear();
	}
}

async function sortedEntries(dir: string): Promise<Dirent[]> {
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
	private readonly listings: (Listing | undefined)[] = [];
	private ahead = 0;

	constructor(
		readonly listing: Listing,
		private readonly all: Listings,
		dir: string,
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
				open: `${listing.base}/${d.name}`,
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

	/** The listing of the entry just returned by next() (a directory). */
	children(): Listing {
		const at = this.i - 1;
		const listing = this.listings[at] ?? this.all.list(this.childPath(at));
		this.listings[at] = undefined;
		this.listAhead(1);
		return listing;
	}

	/** Listings started ahead and not yet taken (the walk stopped early). */
	pending(): Listing[] {
		return this.listings.filter((l) => l !== undefined);
	}

	private childPath(at: number): string {
		return `${this.listing.base}/${this.entries[at].name}`;
	}

	private listAhead(n: number): void {
		while (n > 0 && this.ahead < this.entries.length) {
			const at = this.ahead++;
			if (at < this.i || this.entries[at].kind !== "dir") continue;
			this.listings[at] = this.all.list(this.childPath(at));
			n--;
		}
	}
}

/** Depth-first, sorted, lazily: the consumer stops the walk by leaving its loop. */
export async function* walk(root: string, opts: WalkOptions): AsyncGenerator<WalkEntry> {
	const top = await loadAncestors(root, opts.customIgnore, opts.re2);
	const all = new Listings();
	const open = opts.openRoot ?? root;
	// The start directory is the checked one (or its pinned handle, itself a link): followed.
	const first = all.list(open, true);
	const stack = [new Frame(first, all, root, "", await first.entries, top, opts)];
	try {
		while (stack.length > 0) {
			const frame = stack[stack.length - 1];
			const entry = frame.next();
			if (!entry) {
				stack.pop();
				await all.done(frame.listing);
				continue;
			}
			throwIfAborted(opts.signal);
			yield entry;
			if (entry.kind !== "dir") continue;
			const listing = frame.children();
			const children = await listing.entries;
			const names = new Set(children.map((c) => c.name));
			const level = await loadLevel(entry.abs, frame.level, opts.customIgnore, opts.re2, names);
			stack.push(new Frame(listing, all, entry.abs, entry.rel, children, level, opts));
		}
	} finally {
		await all.closeAll(stack.flatMap((f) => [f.listing, ...f.pending()]));
	}
}
