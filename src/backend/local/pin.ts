/**
 * Handle-pinned directories on this machine.
 *
 * The path guard checks a canonical path (no links, no `..`). An operation then must act on what
 * was checked, even if a directory on the path is swapped for a link in between. So every
 * operation starts from an open handle on its root (opened when the guard canonicalized the
 * roots) and opens each directory below it with O_NOFOLLOW | O_DIRECTORY: a canonical path has
 * no links, so a link met on the way is a swap, and the operation fails (CHANGED_ON_DISK)
 * instead of following it. The operation itself then names `/proc/self/fd/N/name`: the kernel
 * resolves that from the open directory, not by name (see docs/ARCHITECTURE.md for why this and
 * not openat2 through an FFI).
 *
 * The walk uses synchronous calls: each step is one open(2) of ~3 µs, far less than the
 * thread-pool round trip (~20 µs) an async call costs.
 */

import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, rmdirSync } from "node:fs";
import { posix } from "node:path";
import { swappedDir as swappedError } from "../changed-errors.js";

/** Linux's O_PATH (Node does not name it): a handle for lookups only, never blocks, needs no read permission. */
const O_PATH = 0o10000000;
const DIR_FLAGS = O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const FILE_FLAGS = O_PATH | constants.O_NOFOLLOW;

/** Pinning needs /proc/self/fd and O_PATH: Linux. Elsewhere paths are used by name (docs/SAFETY.md). */
const PINNING = process.platform === "linux";

export interface PinnedDir {
	/** The directory's canonical path (for messages and results). */
	readonly dir: string;
	/** `/proc/self/fd/N`: the kernel resolves it from the open directory, not by name. */
	readonly path: string;
	/** The O_PATH descriptor (-1 without pinning). */
	readonly fd: number;
	/** `path/name`: an entry of the pinned directory. */
	at(name: string): string;
	/** Close the handle (a root's stays open until the pins are closed). */
	release(): void;
}

function procPath(fd: number): string {
	return `/proc/self/fd/${fd}`;
}

export { swappedError };

function errno(e: unknown): string | undefined {
	return (e as NodeJS.ErrnoException)?.code;
}

/** Rewrite a system error about a /proc/self/fd path to name the canonical path instead. */
export function renamePathError(e: unknown, pinned: string, canonical: string): unknown {
	const err = e as NodeJS.ErrnoException & { dest?: string };
	if (!pinned.startsWith("/proc/") || typeof err?.message !== "string" || !err.message.includes(pinned))
		return e;
	// Only digits and slashes in `pinned`; "/proc/self/fd/1" must not match inside "/proc/self/fd/12".
	const proc = new RegExp(`${pinned}(?![0-9])`, "g");
	err.message = err.message.replace(proc, canonical);
	if (typeof err.path === "string") err.path = err.path.replace(proc, canonical);
	if (typeof err.dest === "string") err.dest = err.dest.replace(proc, canonical);
	return e;
}

interface Root {
	dir: string;
	fd: number;
}

/** The open roots of one FileOps instance, and walks below them. Closed by `close()`. */
export class DirPins {
	private roots: Root[] = [];

	/** Open a handle on each root (canonical directories); the deepest root is tried first. */
	pin(roots: readonly string[]): void {
		if (!PINNING) return;
		for (const dir of roots) {
			if (this.roots.some((r) => r.dir === dir)) continue;
			this.roots.push({ dir, fd: openSync(dir, DIR_FLAGS) });
		}
		this.roots.sort((a, b) => b.dir.length - a.dir.length);
	}

	close(): void {
		for (const r of this.roots.splice(0)) closeSync(r.fd);
	}

	/**
	 * Open canonical directory `dir` one component at a time from the deepest pinned root above it
	 * (from "/" when none is), never following a link. With `made`, missing directories are
	 * created (and their canonical paths pushed to `made`). Throws the step's errno error (ENOENT,
	 * ENOTDIR for a file in the way, EACCES), or CHANGED_ON_DISK when a component is a link.
	 */
	open(dir: string, made?: string[]): PinnedDir {
		if (!PINNING) return byName(dir);
		const root = this.roots.find((r) => dir === r.dir || dir.startsWith(r.dir === "/" ? "/" : `${r.dir}/`));
		if (root && root.dir === dir) return pinned(dir, root.fd, false);
		let fd = root ? root.fd : openSync("/", DIR_FLAGS);
		let owned = !root;
		let at = root ? root.dir : "/";
		try {
			for (const name of dir.slice(at.length).split("/")) {
				if (name === "") continue;
				if (name === "." || name === "..") throw swappedError(dir); // canonical paths have neither
				const next = openStep(fd, name, made, posix.join(at, name));
				if (owned) closeSync(fd);
				fd = next;
				owned = true;
				at = posix.join(at, name);
			}
		} catch (e) {
			if (owned) closeSync(fd);
			throw e;
		}
		return pinned(dir, fd, owned);
	}

	/**
	 * An O_PATH handle on the file `path` itself (not following a link), for tools that take a
	 * path (rg): `/proc/<pid>/fd/N` then names exactly this file. The caller closes `fd`.
	 */
	openFile(path: string): { fd: number; type: "file" | "dir" | "other" } {
		const dir = this.open(posix.dirname(path));
		try {
			const fd = openSync(dir.at(posix.basename(path)), FILE_FLAGS);
			const st = fstatSync(fd);
			if (st.isSymbolicLink()) {
				closeSync(fd);
				throw swappedError(path);
			}
			return { fd, type: st.isFile() ? "file" : st.isDirectory() ? "dir" : "other" };
		} catch (e) {
			throw renamePathError(e, dir.path, dir.dir);
		} finally {
			dir.release();
		}
	}

	/** Remove directories a failed commit created (deepest first), while they are empty. */
	removeMade(made: readonly string[]): void {
		for (const d of [...made].reverse()) {
			try {
				const parent = this.open(posix.dirname(d));
				try {
					rmdirSync(parent.at(posix.basename(d)));
				} finally {
					parent.release();
				}
			} catch {
				return;
			}
		}
	}
}

function openStep(fd: number, name: string, made: string[] | undefined, canonical: string): number {
	const step = `${procPath(fd)}/${name}`;
	try {
		return openSync(step, DIR_FLAGS);
	} catch (e) {
		const code = errno(e);
		if (code === "ENOENT" && made) {
			try {
				mkdirSync(step, 0o777);
				made.push(canonical);
			} catch (m) {
				if (errno(m) !== "EEXIST") throw renamePathError(m, procPath(fd), posix.dirname(canonical));
			}
			return openStep(fd, name, undefined, canonical);
		}
		// O_DIRECTORY | O_NOFOLLOW on a link fails with ENOTDIR (O_PATH) or ELOOP: tell a link apart
		// from a file in the way (a path that does not exist as written).
		if (
			(code === "ENOTDIR" || code === "ELOOP") &&
			lstatSync(step, { throwIfNoEntry: false })?.isSymbolicLink()
		)
			throw swappedError(canonical);
		throw renamePathError(e, procPath(fd), posix.dirname(canonical));
	}
}

function pinned(dir: string, fd: number, owned: boolean): PinnedDir {
	const path = procPath(fd);
	let open = owned;
	return {
		dir,
		path,
		fd,
		at: (name) => `${path}/${name}`,
		release() {
			if (!open) return;
			open = false;
			closeSync(fd);
		},
	};
}

/** Without /proc (not Linux): names as given. */
function byName(dir: string): PinnedDir {
	return { dir, path: dir, fd: -1, at: (name) => posix.join(dir, name), release() {} };
}
