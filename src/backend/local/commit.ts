/**
 * The durable atomic commit on this machine: a temp file in the
 * target's directory, created exclusively with the target's mode, owner, group and extended
 * attributes (local/xattrs.ts), fsynced; then a no-clobber link(2) for a create, or for a replace
 * an identity-and-bytes check followed by the swap (local/lease.ts: refused while another process
 * has the file open for writing); then the directory is fsynced. Directories made on the way are
 * fsynced into their parents before the link. From the link or swap on the change is visible: a
 * later step's error is an AfterCommitError (the commit happened), never a plain failure. Every
 * step names entries of the pinned directory
 * (local/pin.ts), so a directory swapped for a link after the guard's check cannot redirect the
 * temp file, the link or the rename. A temp file never outlives a failed commit.
 */
import {
	accessSync,
	close,
	closeSync,
	constants,
	fchmodSync,
	fchownSync,
	fstatSync,
	fsync,
	linkSync,
	lstatSync,
	openSync,
	renameSync,
	unlinkSync,
} from "node:fs";
import { posix } from "node:path";
import { promisify } from "node:util";
import { AfterCommitError } from "../../boundary/errors.js";
import { pathFact } from "../../boundary/path-facts.js";
import { fromSystemError } from "../../boundary/system-errors.js";
import { changed, writeCollision } from "../changed-errors.js";
import { isMountPoint } from "../mount-table.js";
import { sameIdentity, tempNameFor } from "../temp-names.js";
import type { Expected, FileStat, WriteOptions } from "../types.js";
import { holdsExpected, READ_FLAGS } from "./bytes.js";
import { lockDir } from "./dir-lock.js";
import { type SwapNames, swapWatched } from "./lease.js";
import type { LazyLibc } from "./libc.js";
import { type DirPins, type PinnedDir, renamePathError } from "./pin.js";
import { toFileStat } from "./stat.js";
import type { XattrCopier, XattrSnapshot } from "./xattrs.js";

const fsyncFd = promisify(fsync);
const closeFd = promisify(close);

function lstatSyncOrNull(path: string): FileStat | null {
	const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
	return st ? toFileStat(st) : null;
}

/** A real descriptor on the pinned directory (its O_PATH handle can be neither fsynced nor locked). */
function openDirFd(dir: PinnedDir): number {
	return openSync(dir.path, constants.O_RDONLY | constants.O_DIRECTORY); // never blocks
}

export async function fsyncDir(dir: PinnedDir, fd = openDirFd(dir)): Promise<void> {
	try {
		await fsyncFd(fd);
	} finally {
		closeSync(fd);
	}
}

/** fsync the parent of every directory `made` (in creation order), so each new entry is durable. */
async function fsyncMadeDirs(pins: DirPins, made: readonly string[]): Promise<void> {
	for (const d of made) {
		const parent = pins.open(posix.dirname(d));
		try {
			await fsyncDir(parent);
		} finally {
			parent.release();
		}
	}
}

/**
 * A replace must leave what a write in place would: the caller must be allowed to write the file
 * in place (a 0444 file or someone else's is refused, not replaced), and the new file keeps the
 * owner and group (set before the rename; refused when this process cannot set them).
 */
function checkReplace(target: string, at: string): void {
	try {
		accessSync(at, constants.W_OK);
	} catch (e) {
		const code = (e as NodeJS.ErrnoException).code;
		// Gone (or a link now) since it was read: the compare-and-swap would fail the same way.
		if (code === "ENOENT" || code === "ELOOP") throw changed(target);
		if (code !== "EACCES" && code !== "EPERM") throw e;
		throw pathFact("not-writable-in-place", target);
	}
}

function keepOwner(target: string, fd: number, before: FileStat): void {
	if (before.uid === undefined || before.gid === undefined) return;
	const made = fstatSync(fd);
	if (made.uid === before.uid && made.gid === before.gid) return;
	try {
		fchownSync(fd, before.uid, before.gid);
	} catch (e) {
		const code = (e as NodeJS.ErrnoException).code;
		if (code !== "EPERM" && code !== "EACCES") throw e;
		throw pathFact("owner-not-kept", target, { uid: before.uid, gid: before.gid });
	}
}

export interface CommitHooks {
	/** Called after the temp file is durable and before the compare-and-swap (tests use it to interleave). */
	beforeCommit?: (target: string) => Promise<void> | void;
	/**
	 * Called synchronously after the final check, right before the swap (tests use it to open the
	 * file for writing in that window).
	 */
	beforeSwap?: (target: string) => void;
}

/**
 * The replaced file, opened (never following a link) before the temp file is filled: its extended
 * attributes are copied from this handle, and the compare-and-swap checks this same handle.
 * Null when nothing is there to open any more (a plain overwrite then creates the file).
 */
function openReplaced(target: string, at: string, cas: boolean): number | null {
	try {
		return openSync(at, READ_FLAGS);
	} catch (e) {
		if (cas) throw changed(target);
		const code = (e as NodeJS.ErrnoException).code;
		if (code === "ENOENT" || code === "ELOOP") return null;
		throw e;
	}
}

/**
 * Compare-and-swap through the handle `fd` on the target: its identity checked, its bytes hashed
 * (identity can survive an in-place write within one timestamp tick; the bytes cannot), its
 * extended attributes compared with those copied. Then the final check, whose cost is the same
 * whatever the file holds, under a lease that shows whether another process holds the file open
 * for writing (local/lease.ts): the handle's identity again, the name still leading to it; and
 * then nothing but the swap. A small file is checked with synchronous calls only, so nothing else
 * in this process runs between the first check and the swap; a large one is hashed
 * asynchronously, and everything after the hash is synchronous. On success the handle is closed in the pool
 * (`released`); otherwise the caller closes it.
 */
async function swapIn(
	fd: number,
	names: SwapNames,
	expect: Expected,
	attrsKept: () => boolean,
	{ libc, hooks }: Pick<CommitKit, "libc" | "hooks">,
): Promise<{ released: Promise<void> }> {
	const { at, target } = names;
	const same = () => {
		const now = toFileStat(fstatSync(fd, { bigint: true }));
		// Mode and owner too: where ctime is coarse (kernels before 6.13), a chmod within the clock
		// tick of the last change leaves it as it was.
		const e = expect.stat;
		return sameIdentity(now, e) && now.mode === e.mode && now.uid === e.uid && now.gid === e.gid;
	};
	if (!same()) throw changed(target);
	if (!(await holdsExpected(fd, Number(expect.stat.size), expect))) throw changed(target);
	// The attributes copied to the temp file must still be the target's own. How many there are to
	// compare is up to whoever sets them, so this comes before the final check, not inside it.
	if (!attrsKept()) throw changed(target);
	swapWatched(
		libc,
		fd,
		names,
		() => {
			// The handle was opened before the temp file was filled: the name may lead elsewhere by now.
			const named = lstatSyncOrNull(at);
			if (!same() || !named || !sameIdentity(named, expect.stat)) throw changed(target);
		},
		hooks.beforeSwap,
	);
	// This handle holds the last reference to the replaced file: closing it frees the file's
	// blocks (up to milliseconds on ext4). That close goes to the pool, beside the directory's
	// fsync, instead of stalling the event loop. It also ends the lease.
	return { released: closeFd(fd).catch(() => {}) };
}

/**
 * Create a temp file beside `target`, let `fill` write it, make it durable, then commit it over
 * `target` according to `opts.expect`.
 */
/** What a commit needs besides the paths: one of each per backend. */
export interface CommitKit {
	pins: DirPins;
	hooks: CommitHooks;
	xattrs: XattrCopier;
	libc: LazyLibc;
}

export async function commitVia(
	{ pins, hooks, xattrs, libc }: CommitKit,
	target: string,
	opts: WriteOptions,
	fill: (temp: string, fd: number) => Promise<void>,
): Promise<FileStat> {
	const made: string[] = [];
	const dir = pins.open(posix.dirname(target), opts.mkdirs ? made : undefined);
	const name = posix.basename(target);
	const at = dir.at(name);
	const temp = dir.at(tempNameFor(name));
	let committed = false;
	let created = false;
	let replaced: number | null = null;
	let copied: XattrSnapshot = null;
	let dirFd: number | null = null;
	try {
		// With a compare-and-swap the stat planned on stands for the file's own: the swap refuses
		// unless the identity (with ctime, which chmod and chown change) is still that one.
		const cas = opts.expect && opts.expect !== "absent" ? opts.expect : undefined;
		const before = cas ? cas.stat : lstatSyncOrNull(at);
		if (before?.type === "dir") throw fromSystemError({ code: "EISDIR" }, target);
		const replacing = before?.type === "file" && opts.expect !== "absent";
		if (replacing) {
			checkReplace(target, at);
			replaced = openReplaced(target, at, cas !== undefined);
		}
		const mode = before?.type === "file" ? before.mode : (opts.mode ?? 0o644);
		// open(2) of a new file never waits on the disk: synchronous, like the walk.
		const fd = openSync(
			temp,
			constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
			mode & 0o777,
		);
		created = true;
		try {
			await fill(temp, fd);
			if (replacing) keepOwner(target, fd, before);
			if (replaced !== null) copied = xattrs.copy(replaced, fd, target);
			// After chown (which clears setuid/setgid) and an ACL (which may clear setgid): the umask
			// may also have narrowed the create mode.
			fchmodSync(fd, mode);
			await fsyncFd(fd);
		} finally {
			closeSync(fd);
		}
		// A directory made for this file reaches the disk before the file is linked into it: a
		// power loss must not keep the file's commit (or a move's removal) and drop its directory.
		await fsyncMadeDirs(pins, made);
		await hooks.beforeCommit?.(target);
		let released: Promise<void> | undefined;
		if (opts.expect === "absent") {
			// link(2) fails with EEXIST if anything appeared meanwhile: no check-then-rename window.
			try {
				linkSync(temp, at);
			} catch (e) {
				if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
				throw writeCollision(target);
			}
			committed = true;
			unlinkSync(temp);
		} else if (cas) {
			if (replaced === null) throw changed(target);
			const held = replaced;
			dirFd = openDirFd(dir);
			const unlock = await lockDir(libc, dirFd, target);
			try {
				({ released } = await swapIn(held, { temp, at, target }, cas, () => xattrs.unchanged(held, copied), {
					libc,
					hooks,
				}));
			} finally {
				unlock();
			}
			replaced = null; // renamed: swapIn's `released` closes it
			committed = true;
		} else {
			// A plain overwrite checks nothing else, but still must not cut off a writer.
			if (replaced === null) renameSync(temp, at);
			else swapWatched(libc, replaced, { temp, at, target }, () => {}, hooks.beforeSwap);
			committed = true;
		}
		const syncFd = dirFd ?? openDirFd(dir);
		dirFd = null; // fsyncDir closes it
		await Promise.all([fsyncDir(dir, syncFd), released]);
		return toFileStat(lstatSync(at, { bigint: true }));
	} catch (e) {
		if (!committed && (e as NodeJS.ErrnoException)?.code === "EBUSY" && isMountPoint(target))
			throw pathFact("mounted-over", target);
		const err = renamePathError(e, dir.path, dir.dir);
		// From the link or rename on, the new file is what the name shows: the commit happened.
		if (committed) throw new AfterCommitError(lstatSyncOrNull(at) ?? undefined, err);
		throw err;
	} finally {
		if (replaced !== null) closeSync(replaced);
		if (dirFd !== null) closeSync(dirFd);
		if (!committed) {
			if (created) {
				try {
					unlinkSync(temp);
				} catch {}
			}
			pins.removeMade(made);
		}
		dir.release();
	}
}
