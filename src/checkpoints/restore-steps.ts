/**
 * The non-file steps of a restore on this machine, each through descriptors opened one component
 * at a time from the root with O_NOFOLLOW | O_DIRECTORY: a directory swapped for a link meanwhile
 * fails the step, never redirects it outside the root.
 */
import { closeSync, constants, fchmodSync, fstatSync, openSync } from "node:fs";
import { posix } from "node:path";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** The directory `dir` (below `root`, canonical) opened without following any link. */
function openDirBelow(root: string, dir: string): number {
	let fd = openSync(root, DIR_FLAGS);
	for (const name of posix.relative(root, dir).split("/").filter(Boolean)) {
		try {
			const next = openSync(`/proc/self/fd/${fd}/${name}`, DIR_FLAGS);
			closeSync(fd);
			fd = next;
		} catch (e) {
			closeSync(fd);
			throw e;
		}
	}
	return fd;
}

/** Run `act` on `path`'s name inside its parent, the parent opened from `root` without links. */
export function inParentDir<T>(root: string, path: string, act: (at: string) => T): T {
	const fd = openDirBelow(root, posix.dirname(path));
	try {
		return act(`/proc/self/fd/${fd}/${posix.basename(path)}`);
	} finally {
		closeSync(fd);
	}
}

export function chmodNoFollow(root: string, path: string, mode: number): void {
	inParentDir(root, path, (at) => {
		const fd = openSync(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
		try {
			if (fstatSync(fd).isSymbolicLink()) return;
			fchmodSync(fd, mode);
		} finally {
			closeSync(fd);
		}
	});
}
