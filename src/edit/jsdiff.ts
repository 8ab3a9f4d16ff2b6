/**
 * jsdiff, loaded the first time keel computes a diff (an edit's result, a preserved-lines check)
 * rather than when keel starts: a session that only reads never needs it. Its CommonJS build is
 * required synchronously, so the diff functions stay synchronous; Node's require cache holds it.
 */
import { createRequire } from "node:module";

const requireHere = createRequire(import.meta.url);

export const jsdiff = (): typeof import("diff") => requireHere("diff");

/**
 * Load jsdiff before a change starts committing. A module read from disk in the middle of a commit
 * (an I/O error, a full disk) would fail the call after files were changed, and its answer would
 * no longer say what is on disk; a failure here comes first, with nothing changed.
 */
export function loadDiffBeforeCommit(): void {
	jsdiff();
}
