/**
 * The directories one protected-set scan depends on, watched with inotify so that checking the
 * kept scan costs a read of an empty queue instead of a stat of every directory (protect-cache.ts).
 *
 * What a quiet queue proves. Every watched directory was watched before it was listed or anything
 * in it was looked up, and its parent was watched before it (down from `/`). A watch is on an inode:
 * every change to the names in a watched directory (create, delete, rename in or out, exchange,
 * hard link) queues an event, whoever makes it and through whichever mount (the sandbox's bind
 * mounts are the same inodes). So while no event about a name the scan cares about has been
 * queued, each watched path still leads to the directory that was listed, and that directory
 * still holds the names it held when it was listed. A change made before the watch was added is in
 * the listing; one made after it is in the queue: no clock is involved, so the "racily clean" rule
 * (protect-cache.ts) is not needed for what is watched.
 *
 * Events about names the scan ignores (a regular file created in the workspace, a build's output)
 * are read and dropped: `names` and `rules` say which names of a directory the scan looked at.
 * Anything else (an overflowed queue, a watch gone (IN_IGNORED: its directory was deleted), a
 * change to the directory itself (IN_ATTRIB: its permissions), an unknown watch, a read error, a
 * mount or unmount on a watched directory or a name in one, which moves paths without any event:
 * the mount table is polled, and read again when it changed) counts as a change.
 *
 * What is not covered is said per path ("uncovered"): a path through a symlink (inotify watches
 * where the link leads, not the link's name), a directory that could not be watched (EACCES), one
 * on a file system whose changes may come from elsewhere without events (NFS, FUSE, 9p, ...). The
 * caller stats those on every check. `complete` turns false when the instance ran out of watches
 * (ENOSPC: fs.inotify.max_user_watches) or memory: the caller then falls back to stat'ing all.
 */
import { close as closeFd, closeSync, lstatSync, openSync } from "node:fs";
import { posix } from "node:path";
import { LOCAL_FS, mountIds, parseMountinfo, readAll } from "../mount-table.js";
import { IN, type InotifyLibc, POLLERR, POLLPRI } from "./inotify.js";

/** Changes to the names of a directory, and to the directory itself. */
const DIR_MASK =
	IN.ATTRIB |
	IN.CREATE |
	IN.DELETE |
	IN.MOVED_FROM |
	IN.MOVED_TO |
	IN.DELETE_SELF |
	IN.MOVE_SELF |
	IN.ONLYDIR |
	IN.DONT_FOLLOW |
	IN.EXCL_UNLINK;
const SELF = IN.IGNORED | IN.DELETE_SELF | IN.MOVE_SELF | IN.UNMOUNT;

/**
 * Looked-up names are compared without ASCII case, and any name with other characters counts: in
 * a case-folding directory a lookup of `.envrc` finds `.ENVRC` (or a name with a Kelvin sign).
 */
const NON_ASCII = /[^\x00-\x7f]/;

/** Which names of one directory the scan depends on. */
export type NameRule = (name: string, isDir: boolean) => boolean;

interface Watched {
	names?: Set<string>;
	rules: NameRule[];
	/** Every name (a directory whose whole listing was used). */
	all: boolean;
}

export type Coverage = "watched" | "absent" | "uncovered";

interface PathState {
	coverage: Coverage;
	watched?: Watched;
	/** On a file system inotify sees every change of. */
	local: boolean;
}

export interface DirWatchesOptions {
	/** Refuse watches past this many, as ENOSPC would (tests). */
	maxWatches?: number;
	/** The mount table's text instead of /proc/self/mountinfo's (tests; polling still uses the real one). */
	mountinfo?: string;
}

export class DirWatches {
	private readonly byWd = new Map<number, Watched>();
	private readonly byPath = new Map<string, PathState>();
	private readonly mountFs: Map<string, string>;
	/** Mount id -> mount point, as last read. */
	private mountPoints: Map<string, string>;
	/** Every directory watched (what a mount can move). */
	private readonly watchedPaths = new Set<string>();
	private readonly buf = Buffer.allocUnsafe(64 * 1024);
	private broken = false;
	private closed = false;
	/** False once a watch could not be added for want of watches or memory. */
	complete = true;
	/** Every name of a listed directory counts (a truncated scan's order depends on all of them). */
	strict = false;

	private constructor(
		private readonly libc: InotifyLibc,
		private readonly fd: number,
		private readonly mountsFd: number,
		mountinfo: string,
		private readonly opts: DirWatchesOptions,
	) {
		this.mountFs = parseMountinfo(mountinfo);
		this.mountPoints = mountIds(mountinfo);
	}

	/** A new instance, or undefined when inotify is not there (EMFILE: max_user_instances). */
	static open(libc: InotifyLibc, opts: DirWatchesOptions = {}): DirWatches | undefined {
		// The mount table is opened first: a mount from here on shows as a poll event.
		let mountsFd: number;
		let text: string;
		try {
			mountsFd = openSync("/proc/self/mountinfo", "r");
			text = readAll(mountsFd);
		} catch {
			return undefined;
		}
		const fd = libc.init();
		if (fd < 0) {
			closeSync(mountsFd);
			return undefined;
		}
		return new DirWatches(libc, fd, mountsFd, opts.mountinfo ?? text, opts);
	}

	get count(): number {
		return this.byWd.size;
	}

	/** Watch `dir` (absolute, normalized) and each directory above it, top down. */
	watch(dir: string): Coverage {
		return this.entry(dir).coverage;
	}

	/** The scan looked up `name` in `dir` (already watched). */
	name(dir: string, name: string): void {
		const w = this.byPath.get(dir)?.watched;
		if (!w) return;
		w.names ??= new Set();
		w.names.add(name.toLowerCase());
	}

	/** The scan listed `dir` (already watched): `rule` picks the names it used, all without one. */
	listed(dir: string, rule?: NameRule): void {
		const w = this.byPath.get(dir)?.watched;
		if (!w) return;
		if (rule) w.rules.push(rule);
		else w.all = true;
	}

	private entry(dir: string): PathState {
		const known = this.byPath.get(dir);
		if (known) return known;
		let local: boolean;
		if (dir === "/") local = LOCAL_FS.has(this.mountFs.get("/") ?? "");
		else {
			const parent = this.entry(posix.dirname(dir));
			if (parent.coverage !== "watched") {
				const below: PathState = { coverage: parent.coverage, local: false };
				this.byPath.set(dir, below);
				return below;
			}
			this.name(posix.dirname(dir), posix.basename(dir));
			const fs = this.mountFs.get(dir); // a mount point: its own file system
			local = fs === undefined ? parent.local : LOCAL_FS.has(fs);
		}
		const state = this.add(dir, local);
		this.byPath.set(dir, state);
		if (state.coverage === "watched") this.watchedPaths.add(dir);
		return state;
	}

	private add(dir: string, local: boolean): PathState {
		const uncovered: PathState = { coverage: "uncovered", local };
		// Not watched at all where events may be missing (its events would only be noise).
		if (!this.complete || this.closed || !local) return uncovered;
		if (this.opts.maxWatches !== undefined && this.byWd.size >= this.opts.maxWatches) {
			this.complete = false;
			return uncovered;
		}
		const wd = this.libc.addWatch(this.fd, dir, DIR_MASK);
		if (wd >= 0) {
			// A second path to a watched inode (a bind mount in the roots) shares its watch and names.
			let watched = this.byWd.get(wd);
			if (!watched) {
				watched = { rules: [], all: false };
				this.byWd.set(wd, watched);
			}
			return { coverage: "watched", watched, local };
		}
		const err = this.libc.errnoName();
		// Its parent is watched: an entry of that name appearing later is an event there.
		if (err === "ENOENT") return { coverage: "absent", local };
		if (err === "ENOTDIR") {
			// A file: nothing lies below it. A link: where it leads is not watched.
			const st = lstatSync(dir, { throwIfNoEntry: false });
			return st?.isSymbolicLink() ? uncovered : { coverage: "absent", local };
		}
		if (err === "ENOSPC" || err === "ENOMEM") this.complete = false;
		return uncovered;
	}

	/**
	 * Reads the queue to its end without waiting. "quiet": no event about anything the scan used
	 * (and none since the instance was opened); "changed"; "overflow": events were lost.
	 */
	settle(): "quiet" | "changed" | "overflow" {
		if (this.broken || this.closed) return "changed";
		const mounts = this.libc.pollNow(this.mountsFd, POLLPRI);
		if (mounts < 0 || ((mounts & (POLLPRI | POLLERR)) !== 0 && this.mountsMoved())) return this.break();
		let overflow = false;
		for (;;) {
			const n = this.libc.read(this.fd, this.buf, this.buf.length);
			if (n === 0) break;
			if (n < 0) {
				const err = this.libc.errnoName();
				if (err === "EAGAIN" || err === "EWOULDBLOCK") break; // one number, two names
				return this.break();
			}
			for (let at = 0; at + 16 <= n; ) {
				const wd = this.buf.readInt32LE(at);
				const mask = this.buf.readUInt32LE(at + 4);
				const len = this.buf.readUInt32LE(at + 12);
				const end = this.buf.indexOf(0, at + 16);
				const name = this.buf.toString("utf8", at + 16, end < 0 || end > at + 16 + len ? at + 16 + len : end);
				at += 16 + len;
				if (mask & IN.Q_OVERFLOW) {
					overflow = true;
					continue;
				}
				const w = this.byWd.get(wd);
				if (!w || mask & SELF || name === "") return this.break();
				// A looked-up name matches whatever a case-folding directory (ext4 +F) would answer with.
				if (w.all || (w.names && (NON_ASCII.test(name) || w.names.has(name.toLowerCase())))) {
					return this.break();
				}
				const isDir = (mask & IN.ISDIR) !== 0;
				for (const rule of w.rules) if (this.strict || rule(name, isDir)) return this.break();
			}
		}
		return overflow ? "overflow" : "quiet";
	}

	/**
	 * The mount table changed: whether a mount or unmount was at a watched directory or at a name in
	 * one (a container started elsewhere moves nothing the scan read).
	 */
	private mountsMoved(): boolean {
		let now: Map<string, string>;
		try {
			const fd = openSync("/proc/self/mountinfo", "r");
			try {
				now = mountIds(readAll(fd));
			} finally {
				closeSync(fd);
			}
		} catch {
			return true;
		}
		const before = this.mountPoints;
		this.mountPoints = now;
		const moved = (point: string) =>
			this.watchedPaths.has(point) || this.watchedPaths.has(posix.dirname(point));
		for (const [id, point] of now) if (before.get(id) !== point && moved(point)) return true;
		for (const [id, point] of before) if (now.get(id) !== point && moved(point)) return true;
		return false;
	}

	private break(): "changed" {
		this.broken = true;
		return "changed";
	}

	/** The scan is over: what each path led to is no longer needed (the watches stay). */
	seal(): void {
		this.byPath.clear();
	}

	/** Frees the watches (the kernel's teardown runs off the event loop). */
	close(): void {
		if (this.closed) return;
		this.closed = true;
		closeFd(this.fd, () => {});
		closeFd(this.mountsFd, () => {});
	}
}
