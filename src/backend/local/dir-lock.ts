/**
 * Commits of keel processes on one machine take turns per directory: the compare-and-swap's check
 * and its rename run under flock(2) on the target's directory. Without it another keel process
 * (the CLI beside an MCP server, two agents on one workspace) could rename its own replacement in
 * between this one's check and rename, and one of the two edits would be lost. Within a process
 * the per-file mutation queue already orders commits; this orders them across processes.
 *
 * The lock is advisory: other programs do not take it (SAFETY.md states the window left for them).
 * It is tried without blocking, every millisecond, so the event loop never waits on it. Whoever
 * holds it past HOLD_LIMIT_MS (a hostile process in the workspace can) makes the commit fail with
 * FILE_BUSY, a retryable error that changes nothing: going on without the lock would let keel
 * processes that all gave up waiting overwrite each other's edits.
 */
import { fstatSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { type PathFactError, pathFact } from "../../boundary/path-facts.js";
import { flockHolders } from "./holders.js";
import type { LazyLibc } from "./libc.js";

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
const RETRY_MS = 1;
/** Longer than a legitimate hold: the check of a large file hashes it (~3 ms a MiB). */
export const HOLD_LIMIT_MS = 2000;

/**
 * Lock directory `dirFd` (a real descriptor, not O_PATH) for a commit to `target`; resolves with
 * the unlock. Where the file system or platform has no flock, resolves unlocked.
 */
export async function lockDir(lib: LazyLibc, dirFd: number, target: string): Promise<() => void> {
	const c = lib();
	if (!c) return () => {};
	const unlock = () => {
		c.flock(dirFd, LOCK_UN);
	};
	const started = Date.now();
	for (;;) {
		if (c.flock(dirFd, LOCK_EX | LOCK_NB) === 0) return unlock;
		const why = c.errnoName();
		if (why !== "EWOULDBLOCK" && why !== "EAGAIN") return () => {};
		if (Date.now() - started > HOLD_LIMIT_MS) throw lockHeld(dirFd, target);
		await sleep(RETRY_MS);
	}
}

function lockHeld(dirFd: number, target: string): PathFactError {
	const st = fstatSync(dirFd, { bigint: true });
	return pathFact("directory-lock-held", target, {
		holders: flockHolders(st.dev, st.ino),
		heldSeconds: HOLD_LIMIT_MS / 1000,
	});
}
