/**
 * The protected-set scan, kept between commands (issue 12: two scans per command were 3 ms each on
 * an empty workspace, more on a real one). A scan's answer depends only on what it read: the
 * directories it listed, the paths it looked up, the git files it parsed.
 *
 * Two ways to know that none of it changed:
 * - Watched (dir-watches.ts), from `watchFrom` listed directories on: every directory the scan
 *   listed or looked in is watched with inotify before it is read, and a check reads the queue
 *   without waiting: no event about a name the scan used, no overflow and no mount means the
 *   directories are as listed. The files whose bytes were parsed and paths resolved through links
 *   (`ScanRecord.checked`, a handful per git directory) are still stat'ed on every check: inotify
 *   does not report writes through mmap. Its cost does not grow with the workspace.
 * - Stat'ed, without inotify (koffi missing, no instance or watch left, a file system inotify does
 *   not see every change of) and for small workspaces: every path was stat'ed (lstat, and stat
 *   through a link) before it was read, and the check stats them all again: when every identity
 *   (device, inode, mode, size, mtime, ctime, in nanoseconds) is unchanged, nothing the scan saw
 *   changed. Any entry added, removed or renamed in a listed directory changes that directory's
 *   mtime; any rewrite of a parsed file changes its ctime (which utimes cannot put back); a path
 *   looked up that appears, or now leads elsewhere (a swapped ancestor, a retargeted link), has
 *   another identity, or none. An overflowed queue falls back to this check too.
 *
 * File times tick coarsely (a few ms), so a change in the same tick as the stat can leave them
 * equal: a scan that saw anything stat'ed change within the last RACY_MS is not kept (git's
 * "racily clean" rule), and the next call scans again. A watch has no tick (it is added before the
 * read), so for a watched scan only the paths still stat'ed on every check count.
 */
import { type BigIntStats, lstatSync, statSync } from "node:fs";
import { posix } from "node:path";
import type { FileOps } from "../types.js";
import { DirWatches, type DirWatchesOptions, type NameRule } from "./dir-watches.js";
import { type LazyInotify, lazyInotify } from "./inotify.js";
import { type ProtectedScan, type ProtectOptions, scanProtected } from "./protect.js";

/** A change this recent may share its timestamp with the stat that recorded it. */
const RACY_MS = 2_000;

type Signature = string;

function identity(st: BigIntStats | undefined): string {
	if (!st) return "-";
	return `${st.dev}:${st.ino}:${st.mode}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

function statsOf(path: string): { l?: BigIntStats; s?: BigIntStats } {
	try {
		// No exceptions for what is missing (most looked-up names are): they cost more than the stat.
		const l = lstatSync(path, { bigint: true, throwIfNoEntry: false });
		return { l, s: l?.isSymbolicLink() ? statSync(path, { bigint: true, throwIfNoEntry: false }) : l };
	} catch {
		return {}; // not reachable (ENOTDIR, EACCES): recorded as absent
	}
}

/** lstat and stat of `path`, as one string ("-" for what is missing). */
function signatureOf(path: string): Signature {
	const { l, s } = statsOf(path);
	const li = identity(l);
	return `${li}|${s === l ? li : identity(s)}`;
}

/** The signature, and the latest time any of it changed (what the racy rule looks at). */
function recordOf(path: string): { sig: Signature; changedMs: number } {
	const { l, s } = statsOf(path);
	const changedNs = [l?.mtimeNs, l?.ctimeNs, s?.mtimeNs, s?.ctimeNs].reduce<bigint>(
		(a, b) => (b !== undefined && b > a ? b : a),
		0n,
	);
	const li = identity(l);
	return { sig: `${li}|${s === l ? li : identity(s)}`, changedMs: Number(changedNs / 1_000_000n) };
}

/**
 * The paths one scan read, with what they were just before. With `watches`, each directory is
 * watched before it is stat'ed, listed or looked in, and `checked` holds what the watches do not
 * speak for: files whose bytes were read and paths resolved through links (a handful per git
 * directory), stat'ed on every check as before (inotify does not report writes through mmap).
 */
export class ScanRecord {
	readonly seen = new Map<string, Signature>();
	/** Stat'ed on every check even while the watches hold. */
	readonly checked = new Map<string, Signature>();
	private readonly listed = new Set<string>();
	/** Something the scan read changed within RACY_MS of it. */
	racy = false;
	/** The same, counting only `checked`: what a watched scan is kept by. */
	racyChecked = false;
	/** Directories listed. */
	dirs = 0;

	constructor(readonly watches?: DirWatches) {}

	private readonly recent = new Set<string>();

	private record(p: string, checked: boolean): void {
		let sig = this.seen.get(p);
		if (sig === undefined) {
			const r = recordOf(p);
			sig = r.sig;
			this.seen.set(p, sig);
			if (r.changedMs >= Date.now() - RACY_MS) {
				this.racy = true;
				this.recent.add(p);
			}
		}
		if (checked && !this.checked.has(p)) {
			this.checked.set(p, sig);
			if (this.recent.has(p)) this.racyChecked = true;
		}
	}

	/** A file about to be read, or a path about to be resolved: stat'ed on every check. */
	touch(path: string): void {
		this.record(posix.resolve(path), true);
	}

	/**
	 * A directory about to be listed: its watch (or its mtime) then speaks for every name in it;
	 * `rule` picks the names the scan uses (all without one).
	 */
	list(dir: string, rule?: NameRule): void {
		const p = posix.resolve(dir);
		this.dirs++;
		const coverage = this.watches?.watch(p);
		if (coverage === "watched") this.watches!.listed(p, rule);
		this.record(p, coverage === "uncovered");
		this.listed.add(p);
	}

	/** A path whose type alone is looked at: covered by its directory when that was listed or watched. */
	lookup(path: string): void {
		const p = posix.resolve(path);
		const dir = posix.dirname(p);
		const coverage = this.watches?.watch(dir);
		if (coverage === "watched") this.watches!.name(dir, posix.basename(p));
		if (!this.listed.has(dir)) this.record(p, coverage === "uncovered");
	}

	/** Whether every recorded path is as it was (the check without watches: stats and a compare). */
	unchanged(): boolean {
		for (const [p, sig] of this.seen) if (signatureOf(p) !== sig) return false;
		return true;
	}

	/** Whether the paths stat'ed on every check are as they were. */
	checkedUnchanged(): boolean {
		for (const [p, sig] of this.checked) if (signatureOf(p) !== sig) return false;
		return true;
	}

	/** `fs` with every path it is given (and every realpath it answers) recorded first. */
	wrap(fs: FileOps): FileOps {
		return new Proxy(fs, {
			get: (target, key, receiver) => {
				const value = Reflect.get(target, key, receiver);
				if (typeof value !== "function") return value;
				return (...args: unknown[]) => {
					if (typeof args[0] === "string") {
						if (key === "lstat") this.lookup(args[0]);
						else this.touch(args[0]);
					}
					const out = value.apply(target, args);
					if (key === "realpath" && out instanceof Promise) {
						return out.then((r: unknown) => {
							if (typeof r === "string") this.touch(r);
							return r;
						});
					}
					return out;
				};
			},
		});
	}
}

function keyOf(opts: ProtectOptions): string {
	return JSON.stringify([opts.roots, opts.home, opts.extra ?? []]);
}

export interface ProtectedScanCacheOptions {
	/**
	 * Watch the directories with inotify from this many listed directories on (default 64). Below
	 * it the stat check costs little, and no inotify instance (fs.inotify.max_user_instances, 128
	 * per user by default) is held.
	 */
	watchFrom?: number;
	/** Limits for the watches (tests simulate ENOSPC with maxWatches). */
	watches?: DirWatchesOptions;
	/** The inotify binding (default: koffi, loaded on the first full scan); null: none. */
	inotify?: LazyInotify;
}

interface Kept {
	key: string;
	record: ScanRecord;
	scan: ProtectedScan;
	/** Watched: checked by reading the queue and stat'ing `record.checked`; else by stat'ing all. */
	watches?: DirWatches;
}

/** One backend's kept scan (state on the runner, never module-wide). */
export class ProtectedScanCache {
	private kept: Kept | undefined;
	private readonly inotify: LazyInotify;
	/**
	 * Scans done in full; answered from the record; of those, answered by the watches; checks that
	 * fell back to stat'ing every path (an overflowed queue).
	 */
	readonly counts = { full: 0, kept: 0, watched: 0, fellBack: 0 };

	constructor(private readonly opts: ProtectedScanCacheOptions = {}) {
		this.inotify = opts.inotify ?? lazyInotify();
	}

	/** How the scan now kept is checked: "watched", "stat", or undefined when none is kept. */
	get mode(): "watched" | "stat" | undefined {
		return this.kept ? (this.kept.watches ? "watched" : "stat") : undefined;
	}

	private holds(kept: Kept): boolean {
		if (!kept.watches) return kept.record.unchanged();
		const queue = kept.watches.settle();
		if (queue === "quiet") {
			if (!kept.record.checkedUnchanged()) return false;
			this.counts.watched++;
			return true;
		}
		if (queue === "changed" || kept.record.racy) return false;
		// Events were lost: what the stats say is what there is to know. The watches stay: what
		// happens from now on is queued again.
		this.counts.fellBack++;
		return kept.record.unchanged();
	}

	async scan(opts: ProtectOptions): Promise<ProtectedScan> {
		const key = keyOf(opts);
		const kept = this.kept;
		if (kept && kept.key === key && this.holds(kept)) {
			this.counts.kept++;
			return kept.scan;
		}
		if (this.kept === kept) this.drop();
		const libc = this.inotify();
		const watches = libc ? DirWatches.open(libc, this.opts.watches) : undefined;
		const record = new ScanRecord(watches);
		let scan: ProtectedScan;
		try {
			scan = await scanProtected(opts, record);
		} catch (e) {
			watches?.close();
			throw e;
		}
		this.counts.full++;
		if (watches) {
			watches.strict = scan.truncated;
			watches.seal();
		}
		let next: Kept | undefined;
		const watched = watches?.complete && record.dirs >= (this.opts.watchFrom ?? 64);
		if (watched) {
			// What changed while it ran (its own mkdir of a hooks directory, too) is in the queue.
			if (watches.settle() === "quiet" && !record.racyChecked && record.checkedUnchanged()) {
				next = { key, record, scan, watches };
			}
		} else if (!record.racy && record.unchanged()) next = { key, record, scan };
		if (!next?.watches) watches?.close();
		if (next) {
			this.drop();
			this.kept = next;
		}
		return scan;
	}

	private drop(): void {
		this.kept?.watches?.close();
		this.kept = undefined;
	}

	/** Frees the watches (the backend closes). */
	close(): void {
		this.drop();
	}
}
