/**
 * FileOps for this machine. Writes are durable and atomic (REQUIREMENTS M4, M5): a temp file in the
 * target's directory, created exclusively with the target's mode, fsynced; then a no-clobber
 * link(2) for a create, or an identity-and-hash check followed by rename(2) for a replace; then the
 * directory is fsynced. A temp file never outlives a failed commit.
 */
import { createHash } from "node:crypto";
import { type BigIntStats, constants, lstatSync, renameSync, unlinkSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { posix } from "node:path";
import { pipeline } from "node:stream/promises";
import { fromSystemError, KeelError } from "../boundary/errors.js";
import { readWindowFrom } from "./read-window.js";
import { sameIdentity, sameObject, TEMP_PREFIX, tempNameFor, tempNamePid } from "./temp-names.js";
import type { DirEntry, EntryType, Expected, FileOps, FileStat, WriteOptions } from "./types.js";

function typeOf(s: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryType {
	if (s.isFile()) return "file";
	if (s.isDirectory()) return "dir";
	if (s.isSymbolicLink()) return "symlink";
	return "other";
}

export function toFileStat(s: BigIntStats): FileStat {
	return {
		type: typeOf(s),
		size: Number(s.size),
		mode: Number(s.mode) & 0o7777,
		dev: s.dev,
		ino: s.ino,
		mtimeNs: s.mtimeNs,
		ctimeNs: s.ctimeNs,
	};
}

async function lstatOrNull(path: string): Promise<FileStat | null> {
	try {
		return toFileStat(await fsp.lstat(path, { bigint: true }));
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
		throw e;
	}
}

function lstatSyncOrNull(path: string): FileStat | null {
	const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
	return st ? toFileStat(st) : null;
}

/** Undo a failed commit's mkdir -p: remove `dir` and its parents up to `top`, while they are empty. */
async function removeEmptyDirs(dir: string, top: string): Promise<void> {
	for (let d = dir; d.length >= top.length; d = posix.dirname(d)) {
		try {
			await fsp.rmdir(d);
		} catch {
			return;
		}
		if (d === top) return;
	}
}

async function fsyncDir(dir: string): Promise<void> {
	const h = await fsp.open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
	try {
		await h.sync();
	} finally {
		await h.close();
	}
}

/** Files up to this size are hashed from one read: a stream costs ~0.4 ms more per small file. */
const ONE_READ_HASH_BYTES = 1024 * 1024;

async function hashLocal(path: string): Promise<string> {
	const h = await fsp.open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
	const hash = createHash("sha256");
	try {
		if ((await h.stat()).size <= ONE_READ_HASH_BYTES) hash.update(await h.readFile());
		else await pipeline(h.createReadStream({ autoClose: false }), hash);
	} finally {
		await h.close();
	}
	return hash.digest("hex");
}

function changed(target: string): KeelError {
	return new KeelError(
		"CHANGED_ON_DISK",
		`${target} changed on disk after it was read; read it again and redo the change.`,
		{
			path: target,
		},
	);
}

function swapped(path: string): KeelError {
	return new KeelError("CHANGED_ON_DISK", `${path} was replaced while it was being opened; try again.`, {
		path,
	});
}

function processGone(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return false;
	} catch (e) {
		return (e as NodeJS.ErrnoException).code === "ESRCH";
	}
}

export interface LocalFsHooks {
	/** Called after the temp file is durable and before the compare-and-swap (tests use it to interleave). */
	beforeCommit?: (target: string) => Promise<void> | void;
}

export function createLocalFs(hooks: LocalFsHooks = {}): FileOps {
	/**
	 * Compare-and-swap: the bytes are checked first (identity can survive an in-place write within
	 * one timestamp tick; the bytes cannot), then identity and rename run synchronously so no other
	 * commit in this process can slip between the check and the replace.
	 */
	async function swapIn(temp: string, target: string, expect: Expected): Promise<void> {
		const hash = await hashLocal(target).catch(() => undefined);
		if (hash !== expect.sha256) throw changed(target);
		const now = lstatSyncOrNull(target);
		if (!now || !sameIdentity(now, expect.stat)) throw changed(target);
		renameSync(temp, target);
	}

	/**
	 * Create a temp file beside `target`, let `fill` write it, make it durable, then commit it over
	 * `target` according to `opts.expect`.
	 */
	async function commitVia(
		target: string,
		opts: WriteOptions,
		fill: (temp: string, h: fsp.FileHandle) => Promise<void>,
	): Promise<FileStat> {
		const dir = posix.dirname(target);
		const made = opts.mkdirs ? await fsp.mkdir(dir, { recursive: true }) : undefined;
		const before = await lstatOrNull(target);
		if (before?.type === "dir") throw fromSystemError({ code: "EISDIR" }, target);
		const mode = before?.type === "file" ? before.mode : (opts.mode ?? 0o644);
		const temp = posix.join(dir, tempNameFor(posix.basename(target)));
		const h = await fsp.open(
			temp,
			constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
			mode,
		);
		let committed = false;
		try {
			try {
				await fill(temp, h);
				await h.chmod(mode); // the umask may have narrowed the create mode
				await h.sync();
			} finally {
				await h.close();
			}
			await hooks.beforeCommit?.(target);
			if (opts.expect === "absent") {
				// link(2) fails with EEXIST if anything appeared meanwhile: no check-then-rename window.
				try {
					await fsp.link(temp, target);
				} catch (e) {
					if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
					throw new KeelError(
						"WRITE_COLLISION",
						`${target} already exists; choose another path, or read it first to overwrite it.`,
						{
							path: target,
						},
					);
				}
				await fsp.unlink(temp);
			} else {
				if (opts.expect) await swapIn(temp, target, opts.expect);
				else await fsp.rename(temp, target);
			}
			committed = true;
			await fsyncDir(dir);
			return toFileStat(await fsp.lstat(target, { bigint: true }));
		} finally {
			if (!committed) {
				await fsp.rm(temp, { force: true });
				if (made) await removeEmptyDirs(dir, made);
			}
		}
	}

	return {
		realpath: (p) => fsp.realpath(p),
		lstat: async (p) => toFileStat(await fsp.lstat(p, { bigint: true })),
		stat: async (p) => toFileStat(await fsp.stat(p, { bigint: true })),
		readlink: (p) => fsp.readlink(p),

		async readFile(p, expect) {
			// O_NOFOLLOW: a link planted at the final component after the guard checked it is refused.
			const h = await fsp.open(p, constants.O_RDONLY | constants.O_NOFOLLOW);
			try {
				if (expect && !sameObject(toFileStat(await h.stat({ bigint: true })), expect)) throw swapped(p);
				return await h.readFile();
			} finally {
				await h.close();
			}
		},

		async readWindow(p, expect, window) {
			const h = await fsp.open(p, constants.O_RDONLY | constants.O_NOFOLLOW);
			try {
				if (expect && !sameObject(toFileStat(await h.stat({ bigint: true })), expect)) throw swapped(p);
				return await readWindowFrom(h, window);
			} finally {
				await h.close();
			}
		},

		async readdir(p, expect): Promise<DirEntry[]> {
			const same = async () => !expect || sameObject(toFileStat(await fsp.stat(p, { bigint: true })), expect);
			if (!(await same())) throw swapped(p);
			const entries = await fsp.readdir(p, { withFileTypes: true });
			if (!(await same())) throw swapped(p);
			return entries.map((d) => ({ name: d.name, type: typeOf(d) }));
		},

		async mkdirp(p) {
			await fsp.mkdir(p, { recursive: true });
		},

		writeFile(target, data, opts = {}) {
			return commitVia(target, opts, (_temp, h) => h.writeFile(data));
		},

		async copyFile(source, target, opts) {
			const now = await lstatOrNull(source);
			if (!now || !sameIdentity(now, opts.sourceStat)) {
				throw new KeelError(
					"CHANGED_ON_DISK",
					`The source of this content (${source}) changed since it was written; send the content again.`,
					{
						path: source,
					},
				);
			}
			return commitVia(target, opts, async (temp) => {
				await fsp.copyFile(source, temp);
				if ((await hashLocal(temp)) !== opts.sha256) {
					throw new KeelError(
						"CHANGED_ON_DISK",
						`The source of this content (${source}) changed during the copy; send the content again.`,
						{
							path: source,
						},
					);
				}
			});
		},

		hashFile: hashLocal,

		async unlink(p, expect) {
			if (expect) {
				// Synchronous check-and-remove: nothing in this process runs in between.
				const now = lstatSyncOrNull(p);
				if (!now || !sameIdentity(now, expect)) throw changed(p);
				unlinkSync(p);
			} else await fsp.unlink(p);
			await fsyncDir(posix.dirname(p));
		},

		async sweepTemps(dir) {
			let removed = 0;
			const names = await fsp.readdir(dir).catch(() => [] as string[]);
			for (const name of names) {
				if (!name.startsWith(TEMP_PREFIX)) continue;
				const pid = tempNamePid(name);
				if (pid === undefined || !processGone(pid)) continue;
				await fsp.rm(posix.join(dir, name), { force: true });
				removed++;
			}
			return removed;
		},
	};
}
