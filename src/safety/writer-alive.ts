/**
 * Is the keel process that wrote a record still running? A pid alone cannot say: a killed writer
 * that its parent has not reaped yet (a zombie) still answers kill(pid, 0), and after it is reaped
 * its pid can be given to an unrelated process. So a record names its writer by pid and start time
 * (field 22 of /proc/<pid>/stat, in clock ticks since boot), and the writer counts as alive only
 * when a process with that pid exists, is not a zombie, and started at that same tick.
 * Without /proc (not Linux) the check falls back to kill(pid, 0).
 */
import { readFileSync } from "node:fs";

/** The state letter and start time of `pid`, or undefined when there is no such process (or no /proc). */
function procStat(pid: number): { state: string; start: string } | undefined {
	let text: string;
	try {
		text = readFileSync(`/proc/${pid}/stat`, "latin1");
	} catch {
		return undefined;
	}
	// The command name (field 2) is in parentheses and may itself hold spaces and ')'.
	const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
	// rest[0] is field 3 (state); field 22 (starttime) is rest[19].
	return rest.length > 19 ? { state: rest[0], start: rest[19] } : undefined;
}

const HAS_PROC = process.platform === "linux";

/** This process's start time as a writer identity ("" where /proc is missing). */
export function startTimeOf(pid: number): string {
	return HAS_PROC ? (procStat(pid)?.start ?? "") : "";
}

/** True while the writer `pid` that started at `start` ("" when unknown) is running. */
export function writerAlive(pid: number, start: string): boolean {
	if (!Number.isSafeInteger(pid) || pid <= 0) return false;
	if (pid === process.pid) return start === "" || start === startTimeOf(pid);
	if (HAS_PROC) {
		const st = procStat(pid);
		if (!st || st.state === "Z" || st.state === "X") return false;
		return start === "" || st.start === start;
	}
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		return (e as NodeJS.ErrnoException).code === "EPERM";
	}
}
