/**
 * Which pids a call's processes can have (the per-call sweep without reading every
 * process's environment). Linux hands out pids in order, wrapping at pid_max, so every process
 * created after a mark was taken has a pid in the cyclic window (mark, now], as long as the
 * allocator did not go all the way round in between. The kernel's count of created tasks
 * (/proc/stat `processes`, every fork and thread on the machine) bounds how far it went: while
 * that count grew by less than half of pid_max, the window is exact, and only its pids need
 * looking at. Otherwise (or when /proc cannot tell) the sweep reads the whole of /proc as before.
 *
 * What this misses: forks that fail after their pid was taken (a cgroup's pids.max refusing them)
 * move the allocator without being counted; more than pid_max/2 of those within one call could
 * wrap the window unseen. The environment tag already lets a process that rewrites its own
 * environment escape the sweep, so this is no new door for hostile code.
 */
import { readFileSync, readlinkSync } from "node:fs";

/** Where pid allocation stood when a call began (read before its first process is spawned). */
export interface PidMark {
	/** The last pid handed out in this pid namespace (/proc/loadavg's fifth field). */
	lastPid: number;
	/** Tasks created on the machine since boot (/proc/stat `processes`). */
	forks: number;
	/** /proc/sys/kernel/pid_max. */
	pidMax: number;
}

/** Up to this many pids are opened directly; a wider window filters a readdir of /proc. */
const MAX_PROBES = 512;

function readLastPid(): number | undefined {
	const fields = readFileSync("/proc/loadavg", "latin1").trim().split(" ");
	const n = Number(fields[4]);
	return Number.isInteger(n) && n > 0 ? n : undefined;
}

function readForks(): number | undefined {
	const text = readFileSync("/proc/stat", "latin1");
	const at = text.indexOf("\nprocesses ");
	if (at < 0) return undefined;
	const n = Number.parseInt(text.slice(at + 11, at + 40), 10);
	return Number.isInteger(n) ? n : undefined;
}

/** A mark for now, or undefined when /proc does not describe this pid namespace (then: full sweeps). */
export function takePidMark(): PidMark | undefined {
	try {
		// /proc mounted for another pid namespace lists pids the counters do not speak of.
		if (readlinkSync("/proc/self") !== String(process.pid)) return undefined;
		const pidMax = Number(readFileSync("/proc/sys/kernel/pid_max", "latin1").trim());
		const forks = readForks();
		const lastPid = readLastPid();
		if (!Number.isInteger(pidMax) || forks === undefined || lastPid === undefined) return undefined;
		return { lastPid, forks, pidMax };
	} catch {
		return undefined;
	}
}

export interface PidWindow {
	has(pid: number): boolean;
	/** The pids to open when the window is narrow (otherwise undefined: read /proc and filter). */
	probe?: number[];
}

/** The pids created since `mark`, or undefined when that cannot be bounded (sweep everything). */
export function pidsSince(mark: PidMark): PidWindow | undefined {
	const now = takePidMark();
	if (!now || now.pidMax !== mark.pidMax) return undefined;
	const created = now.forks - mark.forks;
	if (created < 0 || created >= mark.pidMax / 2) return undefined;
	const from = mark.lastPid;
	const to = now.lastPid;
	// Not wrapped: (from, to]. Wrapped: (from, pidMax) and [1, to] (the kernel restarts above 300).
	const has = to >= from ? (p: number) => p > from && p <= to : (p: number) => p > from || p <= to;
	const width = to >= from ? to - from : mark.pidMax - 1 - from + to;
	if (width > MAX_PROBES) return { has };
	const probe: number[] = [];
	if (to >= from) for (let p = from + 1; p <= to; p++) probe.push(p);
	else {
		for (let p = from + 1; p < mark.pidMax; p++) probe.push(p);
		for (let p = 1; p <= to; p++) probe.push(p);
	}
	return { has, probe };
}
