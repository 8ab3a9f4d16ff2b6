/**
 * What one protected-set scan read (protect.ts), recorded before it was read, and the check that
 * none of it changed: by stat'ing every path, or with the directories' inotify watches
 * (dir-watches.ts) by stat'ing only what the watches do not speak for. Why each is enough, and the
 * "racily clean" rule, are in protect-cache.ts, which keeps the scan.
 */
import { type BigIntStats, lstatSync, statSync } from "node:fs";
import { posix } from "node:path";
import type { FileOps } from "../types.js";
import type { DirWatches, NameRule } from "./dir-watches.js";

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

	/**
	 * With `rescanAt` (a record without watches): once `dirs` directories are listed or about to
	 * be (`ahead`), `wantWatches` is asked (it loads inotify), and when it says yes the scan stops
	 * with a WatchFromStart, to be begun again watched from its first directory.
	 */
	constructor(
		readonly watches?: DirWatches,
		private readonly rescanAt?: { dirs: number; wantWatches: () => boolean },
	) {}

	private readonly recent = new Set<string>();
	/** `rescanAt.wantWatches` was asked. */
	private asked = false;
	/** Thrown once the scan is to be begun again (to what was already under way, too). */
	private stopped: WatchFromStart | undefined;

	private stopAt(dirs: number): void {
		if (this.rescanAt && !this.asked && dirs >= this.rescanAt.dirs) {
			this.asked = true;
			if (this.rescanAt.wantWatches()) this.stopped = new WatchFromStart();
		}
		if (this.stopped) throw this.stopped;
	}

	/**
	 * The scan is about to list `count` directories at once (one level of the tree): when they
	 * would reach `rescanAt`, it stops before reading any of them.
	 */
	ahead(count: number): void {
		this.stopAt(this.dirs + count);
	}

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
		this.stopAt(this.dirs);
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

/**
 * A scan without watches reached the watch threshold: what it listed so far was not watched before
 * it was read, so it is begun again with watches (once per cache: later full scans watch at once).
 */
export class WatchFromStart extends Error {}
