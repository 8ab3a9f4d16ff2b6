/**
 * Helping a killed process die (leftovers.ts). SIGKILL only marks a process: it dies when the
 * scheduler next runs it. A command can keep its leftovers nearly off the CPU by setting its own
 * session's autogroup to nice 19 (weight 15 against 1024 for every other session on that CPU):
 * measured here, a killed one pinned to a CPU shared with 8 busy sessions took 1.1-1.5 s to die,
 * and past the sweep's bound it outlives its call. Setting that autogroup back to nice 0 is allowed
 * to its owner without privilege (a lower nice is not): it then died in about 30 ms. The group is
 * the leftover's own session's, which only the command's processes share.
 */
import { closeSync, constants, openSync, readFileSync, writeSync } from "node:fs";

/**
 * Undo a dying process's low autogroup nice. False: try again on a later pass (a process without
 * CAP_SYS_ADMIN may change an autogroup once per 100 ms, machine-wide: EAGAIN).
 */
export function hastenDeath(pid: number): boolean {
	const path = `/proc/${pid}/autogroup`;
	let fd: number | undefined;
	try {
		// "/autogroup-123 nice 19"; absent where the kernel has no autogroups
		const nice = Number(readFileSync(path, "latin1").trim().split(" ").pop());
		if (!(nice > 0)) return true;
		fd = openSync(path, constants.O_WRONLY);
		writeSync(fd, "0");
		return true;
	} catch (e) {
		return (e as NodeJS.ErrnoException).code !== "EAGAIN";
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}
