/**
 * The facts a file operation reports when it found something other than what was planned or
 * checked, the same on every backend (local, bwrap, ssh, exec, the containers and sandbox SDKs).
 * Each names the canonical path; the words are the boundary's (boundary/path-facts.ts).
 */
import { type PathFactError, pathFact } from "../boundary/path-facts.js";

/** The file is not the one read: a rival wrote, replaced or removed it since. */
export function changed(path: string): PathFactError {
	return pathFact("changed-since-read", path);
}

/** The file opened is not the one checked a moment before (a replace in between). */
export function swapped(path: string): PathFactError {
	return pathFact("replaced-while-opening", path);
}

/** A directory on the path was swapped for a link (or something else) after the guard checked it. */
export function swappedDir(path: string): PathFactError {
	return pathFact("dir-replaced-while-opening", path);
}

/** A file truncated between its open and the read of the size it had then. */
export function changedWhileRead(path: string): PathFactError {
	return pathFact("changed-while-reading", path);
}

/** The source of content to copy changed since it was written, or `during` the copy. */
export function sourceChanged(source: string, during: boolean): PathFactError {
	return pathFact("source-changed", source, { during });
}

/** A create found the name taken: it never overwrites. */
export function writeCollision(path: string): PathFactError {
	return pathFact("already-exists", path);
}
