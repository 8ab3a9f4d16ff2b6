/**
 * The protected-set scan, kept between commands (two scans per command were 3 ms each on
 * an empty workspace, more on a real one). A scan's answer depends only on what it read: the
 * directories it listed, the paths it looked up, the git files it parsed.
 *
 * Two ways to know that none of it changed:
 * - Watched (dir-watches.ts), from `watchFrom` listed directories on: every directory the scan
 *   listed or looked in is watched with inotify before it is read, and a check reads the queue
 *   without waiting: no event about a name the scan used, no overflow and no mount means the
 *   directories are as listed. The files whose bytes were parsed and paths resolved through links
 *   (`ScanRecord.checked`, a handful per git directory) are still stat'ed on every check: inotify
 *   does not report writes through mmap. Its cost does not grow with the workspace. A scan is
 *   begun without watches, and without loading inotify (koffi costs 13-19 ms once per process);
 *   if it reaches `watchFrom` directories it stops and is begun again watched (what it listed so
 *   far was not watched before it was read), and the cache's later full scans are watched at once.
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
import { DirWatches, type DirWatchesOptions } from "./dir-watches.js";
import { type LazyInotify, lazyInotify } from "./inotify.js";
import { type ProtectedScan, type ProtectOptions, scanProtected } from "./protect.js";
import { ScanRecord, WatchFromStart } from "./scan-record.js";

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
	/**
	 * The inotify binding (default: koffi, loaded once a scan reaches `watchFrom` directories, so a
	 * small workspace never loads it); null: none.
	 */
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
	/** A scan of this cache reached `watchFrom` directories: full scans are watched from the start. */
	private large: boolean;
	/**
	 * Scans done in full; answered from the record; of those, answered by the watches; checks that
	 * fell back to stat'ing every path (an overflowed queue); scans begun again watched once they
	 * reached `watchFrom` directories without watches (not counted in `full`).
	 */
	readonly counts = { full: 0, kept: 0, watched: 0, fellBack: 0, rescanned: 0 };

	constructor(private readonly opts: ProtectedScanCacheOptions = {}) {
		this.inotify = opts.inotify ?? lazyInotify();
		this.large = this.watchFrom <= 0;
	}

	private get watchFrom(): number {
		return this.opts.watchFrom ?? 64;
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
		const { record, scan, watches } = await this.scanInFull(opts);
		this.counts.full++;
		if (watches) {
			watches.strict = scan.truncated;
			watches.seal();
		}
		let next: Kept | undefined;
		const watched = watches?.complete && record.dirs >= this.watchFrom;
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

	/**
	 * The scan, recorded: watched from its first directory in a cache that has seen a large
	 * workspace, else without watches (and without loading inotify) unless it reaches `watchFrom`
	 * directories, where it is begun again watched.
	 */
	private async scanInFull(
		opts: ProtectOptions,
	): Promise<{ record: ScanRecord; scan: ProtectedScan; watches?: DirWatches }> {
		if (!this.large) {
			const wantWatches = () => this.inotify() !== null;
			const record = new ScanRecord(undefined, { dirs: this.watchFrom, wantWatches });
			try {
				return { record, scan: await scanProtected(opts, record) };
			} catch (e) {
				if (!(e instanceof WatchFromStart)) throw e;
				this.large = true;
				this.counts.rescanned++;
			}
		}
		const libc = this.inotify();
		const watches = libc ? DirWatches.open(libc, this.opts.watches) : undefined;
		const record = new ScanRecord(watches);
		try {
			return { record, scan: await scanProtected(opts, record), watches };
		} catch (e) {
			watches?.close();
			throw e;
		}
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
