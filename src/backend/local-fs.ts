/**
 * FileOps for this machine. Writes are durable and atomic: a temp file in the target's directory,
 * created exclusively, fsynced, checked against the expected identity, renamed over the target,
 * then the directory is fsynced (REQUIREMENTS M5).
 */
import { constants, type BigIntStats } from "node:fs";
import * as fsp from "node:fs/promises";
import { posix } from "node:path";
import { KeelError, fromSystemError } from "../boundary/errors.js";
import type { DirEntry, EntryType, FileOps, FileStat, WriteOptions } from "./types.js";
import { sameIdentity, tempNameFor } from "./temp-names.js";

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

async function fsyncDir(dir: string): Promise<void> {
	const h = await fsp.open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
	try {
		await h.sync();
	} finally {
		await h.close();
	}
}

export interface LocalFsHooks {
	/** Called after the temp file is durable and before the compare-and-swap (tests use it to interleave). */
	beforeCommit?: (target: string) => Promise<void> | void;
}

export function createLocalFs(hooks: LocalFsHooks = {}): FileOps {
	return {
		realpath: (p) => fsp.realpath(p),
		lstat: async (p) => toFileStat(await fsp.lstat(p, { bigint: true })),
		stat: async (p) => toFileStat(await fsp.stat(p, { bigint: true })),
		readlink: (p) => fsp.readlink(p),

		async readFile(p) {
			// O_NOFOLLOW: a link planted at the final component after the guard checked it is refused.
			const h = await fsp.open(p, constants.O_RDONLY | constants.O_NOFOLLOW);
			try {
				return await h.readFile();
			} finally {
				await h.close();
			}
		},

		async readdir(p): Promise<DirEntry[]> {
			const entries = await fsp.readdir(p, { withFileTypes: true });
			return entries.map((d) => ({ name: d.name, type: typeOf(d) }));
		},

		async mkdirp(p) {
			await fsp.mkdir(p, { recursive: true });
		},

		async writeFile(target: string, data: Uint8Array, opts: WriteOptions = {}): Promise<FileStat> {
			const dir = posix.dirname(target);
			if (opts.mkdirs) await fsp.mkdir(dir, { recursive: true });
			const before = await lstatOrNull(target);
			if (before?.type === "dir") throw fromSystemError({ code: "EISDIR" }, target);
			const mode = before?.type === "file" ? before.mode : (opts.mode ?? 0o644);
			const temp = posix.join(dir, tempNameFor(posix.basename(target)));
			const h = await fsp.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
			let renamed = false;
			try {
				try {
					await h.writeFile(data);
					await h.chmod(mode); // umask may have narrowed the create mode
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
						if ((e as NodeJS.ErrnoException).code === "EEXIST") {
							throw new KeelError("WRITE_COLLISION", `${target} already exists; choose another path or read it and overwrite.`, {
								path: target,
							});
						}
						throw e;
					}
					await fsp.unlink(temp);
					renamed = true;
				} else {
					if (opts.expect) {
						const now = await lstatOrNull(target);
						if (!now || !sameIdentity(now, opts.expect)) {
							throw new KeelError(
								"CHANGED_ON_DISK",
								`${target} changed on disk after it was read; read it again and redo the change.`,
								{ path: target },
							);
						}
					}
					await fsp.rename(temp, target);
					renamed = true;
				}
				await fsyncDir(dir);
				return toFileStat(await fsp.lstat(target, { bigint: true }));
			} finally {
				if (!renamed) await fsp.rm(temp, { force: true });
			}
		},

		unlink: (p) => fsp.unlink(p),
	};
}
