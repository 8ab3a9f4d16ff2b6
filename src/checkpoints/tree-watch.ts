/**
 * Which directories of the workspace changed since the last look, from inotify: what lets a
 * checkpoint of an unchanged tree cost one read of an empty queue instead of a stat of every
 * entry.
 *
 * What a quiet queue proves. Every directory a scan lists is watched before it is listed (the
 * watch is added through the directory's open descriptor, so it is on the directory that was
 * listed). A watch is on an inode, so every change to a name in it (create, delete, rename in or
 * out) and every write, truncate, chmod or close-after-write of a file in it queues an event,
 * whoever makes it and through whichever mount (a sandbox's bind mounts are the same inodes). So a
 * change after the listing is in the queue, and one before it is in the listing.
 *
 * What it does not see (its limits): a write through a memory mapping (no event until the file
 * is closed or its times change), a write through a hard link from a directory that is not
 * watched, a mount or unmount inside the tree. An overflowed queue, a changed `.gitignore` or an
 * unmounted directory makes the caller scan in full; a watch that cannot be added (the user's
 * fs.inotify.max_user_watches) turns watching off for the session (stat scans from then on).
 */
import { closeSync } from "node:fs";
import { IN, type InotifyLibc, lazyInotify } from "../backend/bwrap/inotify.js";

const IN_MODIFY = 0x2;
const IN_CLOSE_WRITE = 0x8;
const MASK =
	IN_MODIFY |
	IN.ATTRIB |
	IN_CLOSE_WRITE |
	IN.MOVED_FROM |
	IN.MOVED_TO |
	IN.CREATE |
	IN.DELETE |
	IN.DELETE_SELF |
	IN.MOVE_SELF |
	IN.ONLYDIR |
	IN.EXCL_UNLINK;
const EVENT_HEADER = 16;

export class TreeWatch {
	/** Watch descriptor → the directory's path when it was (last) listed. */
	private readonly dirs = new Map<number, string>();
	private failed = false;
	private readonly buf = Buffer.alloc(64 * 1024);

	private constructor(
		private readonly libc: InotifyLibc,
		private fd: number,
	) {}

	/** A watch, or undefined where inotify is not available (no koffi, no instance left). */
	static open(load = lazyInotify()): TreeWatch | undefined {
		const libc = load();
		if (!libc) return undefined;
		const fd = libc.init();
		return fd < 0 ? undefined : new TreeWatch(libc, fd);
	}

	/** False once a watch could not be added: the tree is not wholly watched any more. */
	get usable(): boolean {
		return !this.failed && this.fd >= 0;
	}

	/** Watch the directory open at `fdPath` (`/proc/self/fd/N`), listed as `dirPath`. */
	add(fdPath: string, dirPath: string): void {
		if (this.failed) return;
		// No IN_DONT_FOLLOW: /proc/self/fd/N is followed to the directory that is open.
		const wd = this.libc.addWatch(this.fd, fdPath, MASK);
		if (wd < 0) this.failed = true;
		else this.dirs.set(wd, dirPath);
	}

	/** Forget every watch and start a new instance (before a full scan adds them again). */
	reset(): boolean {
		this.close();
		this.dirs.clear();
		this.failed = false;
		this.fd = this.libc.init();
		return this.fd >= 0;
	}

	/**
	 * The directories with a change since the last drain, or undefined when the queue cannot say
	 * (overflow, an unmount, a `.gitignore` changed, a read error): scan in full.
	 */
	drain(): Set<string> | undefined {
		const dirty = new Set<string>();
		for (;;) {
			const n = this.libc.read(this.fd, this.buf, this.buf.length);
			if (n < 0) return this.libc.errnoName() === "EAGAIN" ? dirty : undefined;
			if (n === 0) return dirty;
			for (let off = 0; off + EVENT_HEADER <= n; ) {
				const wd = this.buf.readInt32LE(off);
				const mask = this.buf.readUInt32LE(off + 4);
				const len = this.buf.readUInt32LE(off + 12);
				const name = len
					? this.buf.toString("utf8", off + EVENT_HEADER, off + EVENT_HEADER + len).replace(/\0+$/, "")
					: "";
				off += EVENT_HEADER + len;
				if (mask & (IN.Q_OVERFLOW | IN.UNMOUNT)) return undefined;
				const dir = this.dirs.get(wd);
				if (dir === undefined) continue;
				if (mask & IN.IGNORED) {
					this.dirs.delete(wd);
					continue;
				}
				if (name === ".gitignore") return undefined;
				if (mask & (IN.DELETE_SELF | IN.MOVE_SELF)) continue; // its parent has the change
				dirty.add(dir);
			}
		}
	}

	close(): void {
		if (this.fd >= 0) closeSync(this.fd);
		this.fd = -1;
	}
}
