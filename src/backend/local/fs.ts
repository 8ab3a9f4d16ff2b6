/**
 * FileOps for this machine. Every operation on a path below a root goes through the handle of
 * its pinned directory (local/pin.ts): the directories on the path are opened one by one without
 * following links, and the operation names `/proc/self/fd/N/name`. Writes are durable and atomic
 * (local/commit.ts). The guard's own lookups (realpath, lstat, readlink of paths it is still
 * checking) are by name: they decide, and the pinned operation refuses anything that changed.
 */
import { closeSync, fstatSync, lstatSync, openSync, readFile, realpathSync, unlinkSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { posix } from "node:path";
import { promisify } from "node:util";
import { AfterCommitError, type KeelError } from "../../boundary/errors.js";
import { pathFact } from "../../boundary/path-facts.js";
import { changed, changedWhileRead, sourceChanged, swapped } from "../changed-errors.js";
import { type ChunkArena, createChunkArena } from "../chunk-arena.js";
import { readWindowFrom } from "../read-window.js";
import { sameIdentity, sameObject } from "../temp-names.js";
import type { DirEntry, FileOps, ReadCurrent } from "../types.js";
import {
	hashHandle,
	hashPath,
	READ_FLAGS,
	readAllSync,
	readSized,
	SYNC_IO_BYTES,
	writeAll,
} from "./bytes.js";
import { type CommitHooks, type CommitKit, commitVia, fsyncDir } from "./commit.js";
import { lazyLibc } from "./libc.js";
import { DirPins, type PinnedDir, renamePathError, swappedError } from "./pin.js";
import { toFileStat, typeOf } from "./stat.js";
import { sweepDir } from "./sweep.js";
import { createXattrCopier } from "./xattrs.js";

export { toFileStat } from "./stat.js";

export type LocalFsHooks = CommitHooks;

/** The whole file from an open descriptor (the caller closes it). */
const readFd = promisify(readFile) as (fd: number) => Promise<Buffer>;

/** FileOps on this machine, with the pinned roots the local search starts from. */
export interface LocalFileOps extends FileOps {
	/** Always present here: read streams large local files. */
	readWindow: NonNullable<FileOps["readWindow"]>;
	readonly pins: DirPins;
	pinRoots(roots: readonly string[]): void;
	close(): void;
}

function notAFile(path: string): KeelError {
	return pathFact("not-a-file", path);
}

export function createLocalFs(hooks: LocalFsHooks = {}): LocalFileOps {
	const pins = new DirPins();
	const libc = lazyLibc();
	const kit: CommitKit = { pins, hooks, xattrs: createXattrCopier(libc), libc };
	/** The streamed read's chunk buffers and line count (made on the first large read), and whether a read holds them. */
	let arena: ChunkArena | null | undefined; // null: WebAssembly is not available here
	let arenaBusy = false;

	/** Run `use` on entry `path` of its pinned parent directory; system errors name `path`, not /proc. */
	async function inDir<T>(path: string, use: (at: string, dir: PinnedDir) => Promise<T> | T): Promise<T> {
		const dir = pins.open(posix.dirname(path));
		try {
			return await use(dir.at(posix.basename(path)), dir);
		} catch (e) {
			throw renamePathError(e, dir.path, dir.dir);
		} finally {
			dir.release();
		}
	}

	function openReadSync(path: string, at: string): number {
		try {
			return openSync(at, READ_FLAGS);
		} catch (e) {
			if ((e as NodeJS.ErrnoException).code === "ELOOP") throw swappedError(path);
			throw e;
		}
	}

	/** Open a file for reading through its pinned directory; a link there is a swap. */
	async function openRead(path: string, at: string): Promise<fsp.FileHandle> {
		try {
			return await fsp.open(at, READ_FLAGS);
		} catch (e) {
			if ((e as NodeJS.ErrnoException).code === "ELOOP") throw swappedError(path);
			throw e;
		}
	}

	return {
		pins,
		pinRoots: (roots) => pins.pin(roots),
		close: () => pins.close(),
		// realpath(3) on the main thread: a few readlink(2)s of cached entries cost less than the
		// thread-pool hop an async call takes; the walk below a root is synchronous too.
		realpath: async (p) => realpathSync.native(p),
		lstat: (p) => inDir(p, async (at) => toFileStat(await fsp.lstat(at, { bigint: true }))),
		// Canonical paths never end in a link: one there now was swapped in after the check.
		// Synchronous: one lstat(2) through the pinned directory costs less than a thread-pool hop.
		stat: (p) =>
			inDir(p, (at) => {
				const st = toFileStat(lstatSync(at, { bigint: true }));
				if (st.type === "symlink") throw swappedError(p);
				return st;
			}),
		readlink: (p) => fsp.readlink(p),

		readFile: (p, expect) =>
			inDir(p, async (at) => {
				// open(2) with O_NONBLOCK and fstat(2) never wait: done synchronously, the read is not.
				const fd = openReadSync(p, at);
				try {
					const now = fstatSync(fd, { bigint: true });
					if (expect && !sameObject(toFileStat(now), expect)) throw swapped(p);
					const size = Number(now.size);
					// Small regular files are read synchronously (no thread-pool hop; see SYNC_IO_BYTES).
					return now.isFile() && size <= SYNC_IO_BYTES ? readAllSync(fd, size) : await readFd(fd);
				} finally {
					closeSync(fd);
				}
			}),

		readCurrent: ((p: string, maxBytes?: number) =>
			inDir(p, async (at) => {
				const fd = openReadSync(p, at);
				try {
					const stat = toFileStat(fstatSync(fd, { bigint: true }));
					if (stat.type !== "file") throw swapped(p);
					const size = Number(stat.size);
					if (maxBytes === undefined) {
						const bytes = size <= SYNC_IO_BYTES ? readAllSync(fd, size) : await readFd(fd);
						return { stat, bytes };
					}
					// Bounded: exactly the bytes `stat` describes, so a file growing meanwhile cannot pass the bound.
					if (size > maxBytes) return { stat, bytes: null };
					const bytes = await readSized(fd, size);
					if (!bytes) throw changedWhileRead(p);
					return { stat, bytes };
				} finally {
					closeSync(fd);
				}
			})) as ReadCurrent,

		readWindow: (p, expect, window) =>
			inDir(p, async (at) => {
				// As readFile: open, fstat and close synchronously (none of them waits on a regular
				// file opened O_NONBLOCK); only the chunk reads go to the thread pool.
				const fd = openReadSync(p, at);
				try {
					const opened = toFileStat(fstatSync(fd, { bigint: true }));
					if (expect && !sameObject(opened, expect)) throw swapped(p);
					if (opened.type !== "file") throw notAFile(p);
					if (arenaBusy) return await readWindowFrom(fd, opened, window, p);
					if (arena === undefined) arena = createChunkArena() ?? null;
					arenaBusy = true;
					try {
						return await readWindowFrom(fd, opened, window, p, arena ?? undefined);
					} finally {
						arenaBusy = false;
					}
				} finally {
					closeSync(fd);
				}
			}),

		async readdir(p, expect): Promise<DirEntry[]> {
			const dir = pins.open(p);
			try {
				const now = dir.fd >= 0 ? fstatSync(dir.fd, { bigint: true }) : await fsp.stat(p, { bigint: true });
				if (expect && !sameObject(toFileStat(now), expect)) throw swapped(p);
				const entries = await fsp.readdir(dir.path, { withFileTypes: true });
				return entries.map((d) => ({ name: d.name, type: typeOf(d) }));
			} catch (e) {
				throw renamePathError(e, dir.path, dir.dir);
			} finally {
				dir.release();
			}
		},

		async mkdirp(p) {
			pins.open(p, []).release();
		},

		writeFile(target, data, opts = {}) {
			return commitVia(kit, target, opts, (_temp, fd) => writeAll(fd, data));
		},

		async copyFile(source, target, opts) {
			// The source is held open (through its pinned directory) for the whole copy.
			const src = await inDir(source, (at) => openRead(source, at));
			try {
				if (!sameIdentity(toFileStat(await src.stat({ bigint: true })), opts.sourceStat))
					throw sourceChanged(source, false);
				return await commitVia(kit, target, opts, async (temp) => {
					await fsp.copyFile(`/proc/self/fd/${src.fd}`, temp);
					if ((await hashPath(temp)) !== opts.sha256) throw sourceChanged(source, true);
				});
			} finally {
				await src.close();
			}
		},

		hashFile: (p) =>
			inDir(p, async (at) => {
				const h = await openRead(p, at);
				try {
					return await hashHandle(h);
				} finally {
					await h.close();
				}
			}),

		unlink: (p, expect) =>
			inDir(p, async (at, dir) => {
				if (expect) {
					// Synchronous check-and-remove: nothing in this process runs in between.
					const now = lstatSync(at, { bigint: true, throwIfNoEntry: false });
					if (!now || !sameIdentity(toFileStat(now), expect)) throw changed(p);
				}
				unlinkSync(at);
				// The removal is visible from here on: an error making it durable does not undo it.
				await fsyncDir(dir).catch((e) => {
					throw new AfterCommitError(undefined, e);
				});
			}),

		async sweepTemps(dir) {
			let pinned: PinnedDir;
			try {
				pinned = pins.open(dir);
			} catch {
				return 0; // nothing a workspace holds may stop a session from starting
			}
			try {
				return await sweepDir(pinned);
			} finally {
				pinned.release();
			}
		},
	};
}
