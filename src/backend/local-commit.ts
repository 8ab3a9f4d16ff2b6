/**
 * The durable atomic commit on this machine (REQUIREMENTS M4, M5, M12): a temp file in the
 * target's directory, created exclusively with the target's mode, owner and group, fsynced; then a
 * no-clobber link(2) for a create, or an identity-and-hash check followed by rename(2) for a
 * replace; then the directory is fsynced. Every step names entries of the pinned directory
 * (local-pin.ts), so a directory swapped for a link after the guard's check cannot redirect the
 * temp file, the link or the rename. A temp file never outlives a failed commit.
 */
import { createHash } from "node:crypto";
import { accessSync, constants, fstatSync, lstatSync, renameSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { posix } from "node:path";
import { pipeline } from "node:stream/promises";
import { fromSystemError, KeelError } from "../boundary/errors.js";
import { type DirPins, type PinnedDir, renamePathError } from "./local-pin.js";
import { toFileStat } from "./local-stat.js";
import { sameIdentity, tempNameFor } from "./temp-names.js";
import type { Expected, FileStat, WriteOptions } from "./types.js";

/** Files up to this size are hashed from one read: a stream costs ~0.4 ms more per small file. */
const ONE_READ_HASH_BYTES = 1024 * 1024;

/** O_NONBLOCK: a FIFO swapped in for a file must not hang the open. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export async function hashHandle(h: fsp.FileHandle): Promise<string> {
	const hash = createHash("sha256");
	if ((await h.stat()).size <= ONE_READ_HASH_BYTES) hash.update(await h.readFile());
	else await pipeline(h.createReadStream({ autoClose: false, start: 0 }), hash);
	return hash.digest("hex");
}

export async function hashPath(path: string): Promise<string> {
	const h = await fsp.open(path, READ_FLAGS);
	try {
		return await hashHandle(h);
	} finally {
		await h.close();
	}
}

export function changed(target: string): KeelError {
	return new KeelError(
		"CHANGED_ON_DISK",
		`${target} changed on disk after it was read; read it again and redo the change.`,
		{ path: target },
	);
}

function lstatSyncOrNull(path: string): FileStat | null {
	const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
	return st ? toFileStat(st) : null;
}

export async function fsyncDir(dir: PinnedDir): Promise<void> {
	const h = await fsp.open(dir.path, constants.O_RDONLY | constants.O_DIRECTORY);
	try {
		await h.sync();
	} finally {
		await h.close();
	}
}

function refuse(target: string, why: string): KeelError {
	return new KeelError("PERMISSION_DENIED", `${target} ${why}`, { path: target });
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
		if ((e as NodeJS.ErrnoException).code !== "EACCES" && (e as NodeJS.ErrnoException).code !== "EPERM")
			throw e;
		throw refuse(
			target,
			"is not writable by this process; keel does not replace a file it could not write in place. Change its permissions first (e.g. chmod u+w with bash), or write a new file.",
		);
	}
}

async function keepOwner(target: string, h: fsp.FileHandle, before: FileStat): Promise<void> {
	if (before.uid === undefined || before.gid === undefined) return;
	const made = fstatSync(h.fd);
	if (made.uid === before.uid && made.gid === before.gid) return;
	try {
		await h.chown(before.uid, before.gid);
	} catch (e) {
		const code = (e as NodeJS.ErrnoException).code;
		if (code !== "EPERM" && code !== "EACCES") throw e;
		throw refuse(
			target,
			`is owned by uid ${before.uid}, gid ${before.gid}, which this process cannot give a replacement; change it another way (e.g. with bash, in place).`,
		);
	}
}

export interface CommitHooks {
	/** Called after the temp file is durable and before the compare-and-swap (tests use it to interleave). */
	beforeCommit?: (target: string) => Promise<void> | void;
}

/**
 * Compare-and-swap: the bytes are checked first (identity can survive an in-place write within
 * one timestamp tick; the bytes cannot), then identity and rename run synchronously so no other
 * commit in this process can slip between the check and the replace.
 */
async function swapIn(temp: string, at: string, target: string, expect: Expected): Promise<void> {
	const hash = await hashPath(at).catch(() => undefined);
	if (hash !== expect.sha256) throw changed(target);
	const now = lstatSyncOrNull(at);
	if (!now || !sameIdentity(now, expect.stat)) throw changed(target);
	renameSync(temp, at);
}

/**
 * Create a temp file beside `target`, let `fill` write it, make it durable, then commit it over
 * `target` according to `opts.expect`.
 */
export async function commitVia(
	pins: DirPins,
	hooks: CommitHooks,
	target: string,
	opts: WriteOptions,
	fill: (temp: string, h: fsp.FileHandle) => Promise<void>,
): Promise<FileStat> {
	const made: string[] = [];
	const dir = pins.open(posix.dirname(target), opts.mkdirs ? made : undefined);
	const name = posix.basename(target);
	const at = dir.at(name);
	const temp = dir.at(tempNameFor(name));
	let committed = false;
	let created = false;
	try {
		const before = lstatSyncOrNull(at);
		if (before?.type === "dir") throw fromSystemError({ code: "EISDIR" }, target);
		const replacing = before?.type === "file" && opts.expect !== "absent";
		if (replacing) checkReplace(target, at);
		const mode = before?.type === "file" ? before.mode : (opts.mode ?? 0o644);
		const h = await fsp.open(
			temp,
			constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
			mode & 0o777,
		);
		created = true;
		try {
			await fill(temp, h);
			if (replacing) {
				await keepOwner(target, h, before);
			}
			// After chown (which clears setuid/setgid): the umask may also have narrowed the create mode.
			await h.chmod(mode);
			await h.sync();
		} finally {
			await h.close();
		}
		await hooks.beforeCommit?.(target);
		if (opts.expect === "absent") {
			// link(2) fails with EEXIST if anything appeared meanwhile: no check-then-rename window.
			try {
				await fsp.link(temp, at);
			} catch (e) {
				if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
				throw new KeelError(
					"WRITE_COLLISION",
					`${target} already exists; choose another path, or read it first to overwrite it.`,
					{ path: target },
				);
			}
			await fsp.unlink(temp);
		} else if (opts.expect) await swapIn(temp, at, target, opts.expect);
		else renameSync(temp, at);
		committed = true;
		await fsyncDir(dir);
		return toFileStat(await fsp.lstat(at, { bigint: true }));
	} catch (e) {
		throw renamePathError(e, dir.path, dir.dir);
	} finally {
		if (!committed) {
			if (created) await fsp.unlink(temp).catch(() => {});
			pins.removeMade(made);
		}
		dir.release();
	}
}
