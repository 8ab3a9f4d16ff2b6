/**
 * Processes a command leaves behind on this machine.
 *
 * A process group does not hold what a command starts: `setsid`, `nohup ... &` and daemons leave
 * it, and once their parent is gone nothing in /proc links them to the call. What they keep is
 * their environment, so every command keel runs here carries two variables: KEEL_SESSION_TAG (the
 * session) and KEEL_CALL_TAG (the call). When a call ends, every process of this user whose
 * environment holds its call tag is killed (SIGKILL, repeated until a pass finds none, so one
 * forking during the sweep is caught on the next pass); `background: true` calls are left to the
 * session's close, which kills everything with the session tag. A SIGKILLed process lives on until
 * the scheduler lets it run its exit (milliseconds on a busy CPU, far longer than a pass), so the
 * sweep waits for what it killed to be gone before the call returns.
 *
 * If keel itself is killed (SIGKILL included), a watchdog does the session's sweep: one small `sh`
 * per session, started with the first command, blocked reading a pipe only keel holds. Any death of
 * keel closes the pipe; the watchdog then kills every process with the session tag and exits.
 *
 * A call's sweep reads only the environments of processes created since the call began
 * (leftovers-pids.ts), a handful where a full pass reads hundreds.
 *
 * What escapes: a process that empties or rewrites its own environment (`env -i`, execve with a new
 * one) before the sweep. On bwrap the PID namespace holds everything instead (bwrap.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { hastenDeath } from "./leftovers-hasten.js";
import { type PidMark, pidsSince, takePidMark } from "./leftovers-pids.js";
import { fillPlaceholders, hostProgram, readHostFile } from "./remote/host-programs.js";

export type { PidMark } from "./leftovers-pids.js";

export const SESSION_TAG = "KEEL_SESSION_TAG";
export const CALL_TAG = "KEEL_CALL_TAG";
/** How long the watchdog keeps sweeping while passes still find something (a forking leftover). */
export const WATCHDOG_SECONDS = 5;
/** Its bound in passes, only where `date +%s` cannot tell it the time. */
const WATCHDOG_PASSES = 1000;
/** Passes in a row, a quarter second apart, that must find nothing before the watchdog ends. */
const WATCHDOG_QUIET_PASSES = 4;
const UNSURE_WAITS = 50;
/** Passes that kill something new, run back to back before the sweep yields a millisecond. */
const PASSES_IN_A_ROW = 8;
/** How long a sweep keeps at it: killing what appears, and waiting for what it killed to die. */
const SWEEP_MS = 2000;
/** Only for Atomics.wait's synchronous millisecond pause (never written). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

export interface TaggedProcess {
	pid: number;
	command: string;
}

function readProc(path: string): Buffer | undefined {
	try {
		return readFileSync(path);
	} catch {
		return undefined; // gone, or another user's
	}
}

const ENVIRON_CHUNK = 64 * 1024;

/** What /proc/PID/environ says about the needle. "empty": nothing to read (a zombie, a kernel thread, or a process in the middle of execve). */
type EnvironAnswer = "yes" | "no" | "empty";

/** Whether /proc/PID/environ holds `needle` (NUL-framed), read in chunks into `buf` (no per-process allocation). */
function environHas(pid: number, needle: Buffer, buf: Buffer): EnvironAnswer {
	let fd: number;
	try {
		fd = openSync(`/proc/${pid}/environ`, "r");
	} catch {
		return "no"; // gone, or another user's
	}
	try {
		// buf[0..keep) carries the previous chunk's tail, so a match across chunks is seen; a NUL in
		// front stands for the start of the environment.
		buf[0] = 0;
		let keep = 1;
		for (let first = true; ; first = false) {
			const n = readSync(fd, buf, keep, ENVIRON_CHUNK, null);
			if (n === 0 && first) return "empty";
			const end = keep + n;
			if (n === 0) buf[end] = 0; // the last variable ends with a NUL already; this is for safety
			if (buf.subarray(0, n === 0 ? end + 1 : end).includes(needle)) return "yes";
			if (n === 0) return "no";
			const tail = Math.min(needle.length - 1, end);
			buf.copy(buf, 0, end - tail, end);
			keep = tail;
		}
	} catch {
		return "no";
	} finally {
		closeSync(fd);
	}
}

const PF_KTHREAD = 0x00200000;

/** A live user process (not a zombie, not a kernel thread) whose environment could not be read. */
function mayBeExecing(pid: number): boolean {
	const stat = readProc(`/proc/${pid}/stat`)?.toString("latin1");
	if (!stat) return false;
	const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
	return fields[0] !== "Z" && fields[0] !== "X" && (Number(fields[6]) & PF_KTHREAD) === 0;
}

/**
 * Processes whose environment holds `name=value` (of this user: others' environ is unreadable).
 * Synchronous on purpose: /proc reads never wait on a disk, and one pass over a few hundred
 * processes costs about a millisecond this way, against tens through the thread pool.
 */
export function findTagged(name: string, value: string, since?: PidMark, unsure?: number[]): TaggedProcess[] {
	const needle = Buffer.from(`\0${name}=${value}\0`);
	const window = since ? pidsSince(since) : undefined;
	let entries: (string | number)[];
	if (window?.probe) entries = window.probe;
	else {
		try {
			entries = readdirSync("/proc");
		} catch {
			return [];
		}
	}
	const found: TaggedProcess[] = [];
	const scratch = Buffer.alloc(ENVIRON_CHUNK + needle.length);
	for (const e of entries) {
		const pid = Number(e);
		if (!Number.isInteger(pid) || pid === process.pid) continue;
		if (window && !window.has(pid)) continue;
		const answer = environHas(pid, needle, scratch);
		if (answer === "empty" && window && unsure && mayBeExecing(pid)) unsure.push(pid);
		if (answer !== "yes") continue;
		const cmd = readProc(`/proc/${pid}/cmdline`) ?? Buffer.alloc(0);
		found.push({ pid, command: cmd.toString("utf8").replace(/\0+$/, "").replaceAll("\0", " ") });
	}
	return found;
}

/**
 * SIGKILLs every process with the tag, pass after pass, until a pass finds none: not one to kill,
 * not one still dying. A killed process keeps its environment until it has run its exit, and on a
 * busy CPU that takes milliseconds where a pass takes microseconds; ending the sweep while one is
 * still listed would return the call with it alive, and would also stop looking at its neighbours
 * (a process of the window caught between its old and new image has no environment to read yet and
 * is looked at again on a later pass, never killed blind). So a pass that kills nothing new waits a
 * millisecond and looks again: while killed ones remain, up to SWEEP_MS in all (one still there is
 * helped to its turn on the CPU: leftovers-hasten.ts); when only such unreadable processes remain,
 * up to UNSURE_WAITS times. Returns how many processes were killed.
 */
export async function killTagged(name: string, value: string, since?: PidMark): Promise<number> {
	const killed = new Set<number>();
	const hastened = new Set<number>();
	const refused = new Set<number>(); // not ours to signal after all (EPERM): nothing to wait for
	const deadline = performance.now() + SWEEP_MS;
	let unsureWaits = 0;
	let chased = 0;
	for (;;) {
		const unsure: number[] = [];
		let fresh = false;
		let dying = false;
		for (const p of findTagged(name, value, since, unsure)) {
			if (refused.has(p.pid)) continue;
			try {
				process.kill(p.pid, "SIGKILL");
			} catch (e) {
				if ((e as NodeJS.ErrnoException).code !== "ESRCH") refused.add(p.pid);
				continue; // gone, or refused
			}
			if (killed.has(p.pid)) {
				dying = true;
				if (!hastened.has(p.pid) && hastenDeath(p.pid)) hastened.add(p.pid);
			} else {
				killed.add(p.pid);
				fresh = true;
			}
		}
		if (!fresh && !dying && (unsure.length === 0 || unsureWaits >= UNSURE_WAITS)) break;
		if (performance.now() >= deadline) break;
		// What the fresh ones started before the kill shows on the next pass: look again at once, but
		// let the event loop run now and then against a command that forks without end.
		if (fresh && ++chased % PASSES_IN_A_ROW !== 0) continue;
		if (!fresh && !dying) unsureWaits++;
		await sleep(1);
	}
	return killed.size;
}

/**
 * The sweep in sh, for the watchdog (host/watchdog.sh; it runs after keel is gone): passes until
 * WATCHDOG_QUIET_PASSES in a row, a quarter second apart, find nothing tagged (a killed process
 * still dying is found again; one in the middle of execve reads as untagged), for at most
 * WATCHDOG_SECONDS. A pass is one `grep -z` over every environment (GNU, busybox); without -z it
 * is tr | grep per process, seconds for a few hundred. The time is checked between passes, so a first pass always completes.
 */
export const watchdogScript = hostProgram(() =>
	fillPlaceholders(readHostFile("watchdog.sh"), {
		WATCHDOG_PASSES: String(WATCHDOG_PASSES),
		WATCHDOG_SECONDS: String(WATCHDOG_SECONDS),
		WATCHDOG_QUIET_PASSES: String(WATCHDOG_QUIET_PASSES),
	}),
);

/** One session's tags, its watchdog, and the sweeps. State hangs off the backend that owns it. */
export class ProcessTracker {
	readonly sessionTag = randomBytes(9).toString("hex");
	private watchdog: ChildProcess | undefined;
	private closed = false;

	/**
	 * Variables for one call's environment, the call's own tag, and where pid allocation stood
	 * (take it right before spawning: the sweeps then look only at pids handed out since).
	 */
	tagCall(): { env: Record<string, string>; callTag: string; since?: PidMark } {
		this.startWatchdog();
		const callTag = randomBytes(9).toString("hex");
		return { env: { [SESSION_TAG]: this.sessionTag, [CALL_TAG]: callTag }, callTag, since: takePidMark() };
	}

	/** After a call: kill what it left (resolves once it is gone). */
	endCall(callTag: string, since?: PidMark): Promise<number> {
		return killTagged(CALL_TAG, callTag, since);
	}

	/** What a background call left running (they die at close). */
	listCall(callTag: string, since?: PidMark): TaggedProcess[] {
		for (let waits = 0; ; waits++) {
			const unsure: number[] = [];
			const found = findTagged(CALL_TAG, callTag, since, unsure);
			if (unsure.length === 0 || waits >= UNSURE_WAITS) return found;
			Atomics.wait(PAUSE, 0, 0, 1); // one of the window's processes is mid-execve: look again
		}
	}

	/** Session close: every process of the session, background ones included. */
	async close(): Promise<void> {
		if (this.closed) return;
		this.closed = true;
		await killTagged(SESSION_TAG, this.sessionTag);
		this.watchdog?.stdin?.destroy();
		this.watchdog = undefined;
	}

	private startWatchdog(): void {
		if (this.watchdog || this.closed) return;
		// Not tagged itself; its stdin is a pipe whose other end only this process holds.
		const child = spawn(
			"/bin/sh",
			["-c", watchdogScript(), "keel-watchdog", `${SESSION_TAG}=${this.sessionTag}`],
			{
				detached: true,
				stdio: ["pipe", "ignore", "ignore"],
			},
		);
		child.on("error", () => {});
		child.stdin?.on("error", () => {});
		child.unref();
		(child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
		this.watchdog = child;
	}
}
