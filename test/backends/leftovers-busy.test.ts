/**
 * What a `bash` call leaves running is gone when the call returns even when the CPU it runs on is
 * busy (REQUIREMENTS P4, issue 12 item 6). SIGKILL only marks a process: it lives on, environment
 * and command line intact, until the scheduler lets it run its exit. On a CPU held by another busy
 * process that takes milliseconds, while a pass of the sweep takes microseconds to a millisecond;
 * a sweep that ended after a fixed number of passes returned with the killed leftover still listed
 * (CI: one `setsid --fork` sleeper in three runs). Here an untagged busy loop holds one CPU and the
 * call's leftover is pinned to it, so every kill waits for that CPU. Real processes, found by a
 * marker.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import { processesWith } from "../fixtures/processes.js";

const TASKSET = ["/usr/bin/taskset", "/bin/taskset"].find((p) => existsSync(p));
/** The first CPU this process may run on (the hog and the leftovers share it). */
const CPU = /Cpus_allowed_list:\s*(\d+)/.exec(readFileSync("/proc/self/status", "latin1"))?.[1];

let dir: string;
const sessions: Session[] = [];
const markers: string[] = [];
const hogs: ChildProcess[] = [];

beforeEach(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-leftovers-busy-")));
});
afterEach(async () => {
	for (const h of hogs.splice(0)) h.kill("SIGKILL");
	await Promise.all(sessions.splice(0).map((s) => s.close()));
	for (const m of markers.splice(0))
		for (const line of processesWith(m)) process.kill(Number(line.split(" ")[0]), "SIGKILL");
	await rm(dir, { recursive: true, force: true });
});

function marker(): string {
	const m = `keelbusy${randomBytes(5).toString("hex")}`;
	markers.push(m);
	return m;
}

/** An untagged busy loop on CPU `CPU`, killed after the test. */
function hog(): void {
	const child = spawn(TASKSET as string, ["-c", CPU as string, "/bin/sh", "-c", "while :; do :; done"], {
		stdio: "ignore",
	});
	child.on("error", () => {});
	hogs.push(child);
}

/**
 * A `setsid --fork` leftover that spins on the hog's CPU, its command line carrying `m`. It runs
 * at a low priority, and a moment before the call ends, so once killed it waits for its turn on
 * that CPU: 10 to 30 ms here, against some 8 ms for the 8 passes the sweep used to stop at. Its new
 * session is a new autogroup, where nice alone would not lower it against the hog: the group is
 * niced too.
 */
const busyLeftover = (m: string, nice = 10) =>
	`${TASKSET} -c ${CPU} nice -n ${nice} setsid -f sh -c '{ echo ${nice} > /proc/self/autogroup; } 2>/dev/null; while :; do :; done; : ${m}' >/dev/null 2>&1 < /dev/null; sleep 0.05; echo started`;

/** The last pid handed out (/proc/loadavg's fifth field). */
function lastPid(): number {
	return Number(readFileSync("/proc/loadavg", "latin1").split(" ")[4]);
}

/**
 * Live processes created after `from` whose command line holds `m`, read straight from /proc the
 * moment the call returns (pgrep starts too late: by then a killed process has usually died).
 */
function liveSince(from: number, m: string): string[] {
	const to = lastPid();
	const pids = to >= from ? Array.from({ length: to - from }, (_, i) => from + 1 + i) : readdirSync("/proc");
	const found: string[] = [];
	for (const pid of pids) {
		try {
			const cmd = readFileSync(`/proc/${pid}/cmdline`, "latin1");
			if (cmd.includes(m)) found.push(`${pid} ${cmd.replaceAll("\0", " ")}`);
		} catch {
			// not a process, or gone
		}
	}
	return found;
}

async function open(profile: "pi" | "unified"): Promise<Session> {
	const s = await Session.create({ root: dir, profile });
	sessions.push(s);
	return s;
}

describe.skipIf(!TASKSET || CPU === undefined)("local: leftovers on a busy CPU", () => {
	it("setsid --fork, 10 calls in a row: each leftover is gone when its call returns", async () => {
		hog();
		const s = await open("pi");
		const survivors: string[] = [];
		for (let i = 0; i < 10; i++) {
			const m = marker();
			const from = lastPid();
			const r = await s.call("bash", { command: busyLeftover(m) });
			survivors.push(...liveSince(from, m));
			expect(r.ok).toBe(true);
		}
		expect(survivors).toEqual([]);
	});

	it("background: true leftovers are gone when the session's close returns", async () => {
		hog();
		const s = await open("unified");
		const m = marker();
		const from = lastPid();
		// Nice 19: close's passes read all of /proc (tens of ms each here), so a kill must wait longer
		// than for a call's windowed passes to outlast the 8 the sweep used to stop at.
		for (let i = 0; i < 5; i++) {
			const r = await s.call("bash", { command: busyLeftover(`${m}-${i}`, 19), background: true });
			expect(r.ok).toBe(true);
		}
		expect(processesWith(m).length).toBe(5);
		await s.close();
		expect(liveSince(from, m)).toEqual([]);
	});
});
