/**
 * SIGKILL a child's process group without ever killing a stranger's. A group's id is its leader's
 * pid. While any member lives the kernel gives that number to no new process, but once the group is
 * empty the number is free: a kill of `-pgid` sent later (a reset, a close, a timer) would then hit
 * whatever group took it, as root any daemon's (a container's monitor was lost this way in CI).
 *
 * So once the leader has been reaped (Node saw its exit), a process now holding the leader's pid
 * can only be new, and the group is then known to be empty of ours: no kill is sent. Otherwise the
 * kill goes to the group, which holds only what the child left behind. The kill of a reaped leader
 * that is not reused still reaches its leftovers.
 */
import { existsSync } from "node:fs";
import type { ChildLike } from "./spawn/child.js";

export function killChildGroup(child: Pick<ChildLike, "pid" | "exitCode" | "signalCode">): void {
	const pid = child.pid;
	if (pid === undefined || pid <= 0) return;
	const reaped = child.exitCode !== null || child.signalCode !== null;
	if (reaped && existsSync(`/proc/${pid}`)) return; // the number is someone else's now
	try {
		process.kill(-pid, "SIGKILL");
	} catch {
		// The group is gone.
	}
}
