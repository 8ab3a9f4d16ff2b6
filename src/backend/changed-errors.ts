/**
 * The errors of a file operation that found something other than what was planned or checked,
 * worded once for every backend (local, bwrap, ssh, exec, the containers and sandbox SDKs): each
 * names the path and what to do next.
 */
import { KeelError } from "../boundary/errors.js";

/** The file is not the one read: a rival wrote, replaced or removed it since. */
export function changed(path: string): KeelError {
	return new KeelError(
		"CHANGED_ON_DISK",
		`${path} changed on disk after it was read; read it again and redo the change.`,
		{ path },
	);
}

/** The file opened is not the one checked a moment before (a replace in between). */
export function swapped(path: string): KeelError {
	return new KeelError("CHANGED_ON_DISK", `${path} was replaced while it was being opened; try again.`, {
		path,
	});
}

/** A directory on the path was swapped for a link (or something else) after the guard checked it. */
export function swappedDir(path: string): KeelError {
	return new KeelError(
		"CHANGED_ON_DISK",
		`${path} changed while it was being opened (a directory on its path was replaced, e.g. by a link); try again.`,
		{ path },
	);
}

/** A file truncated between its open and the read of the size it had then. */
export function changedWhileRead(path: string): KeelError {
	return new KeelError("CHANGED_ON_DISK", `${path} changed while it was being read; read it again.`, {
		path,
	});
}

/** A create found the name taken: it never overwrites. */
export function writeCollision(path: string): KeelError {
	return new KeelError(
		"WRITE_COLLISION",
		`${path} already exists; choose another path, or read it first to overwrite it.`,
		{ path },
	);
}
