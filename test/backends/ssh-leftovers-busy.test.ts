/**
 * The ssh backend's command runner (src/backend/remote/host/runner_procs.py): what a command leaves
 * running is gone when its call returns even when the CPU it runs on is busy.
 * SIGKILL only marks a process: it lives on, environment and command line intact, until the
 * scheduler lets it run its exit. Here an untagged busy loop holds one CPU and the call's
 * `setsid -f` leftover is pinned to it at the lowest priority, so its death waits for that CPU;
 * a sweep that stopped after a fixed number of passes (microseconds each in the runner) returned
 * with it still alive. The server is this machine, so /proc here is the host's /proc, read the
 * moment the call returns.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SshBackend } from "../../src/backend/ssh/index.js";
import { BusyCpu, CPU, lastPid, liveSince, TASKSET } from "../fixtures/busy-cpu.js";
import { pythonMissing, useSshBackend } from "../fixtures/ssh-backend.js";
import { sshdMissing } from "../fixtures/sshd.js";

const missing =
	sshdMissing() ??
	pythonMissing() ??
	(!TASKSET || CPU === undefined ? "taskset is not installed" : undefined);
if (missing) console.warn(`skipping the ssh busy-CPU leftover tests: ${missing}`);

const live = useSshBackend(missing);
let b: SshBackend;
let dir: string;
const busy = new BusyCpu("keelsshbusy");
const marker = () => busy.marker();
/**
 * An untagged busy loop on CPU `CPU` (nice 19, but in this process's session group, which weighs
 * as much as any other session's), killed after each test.
 */
const hog = () => busy.hog(19);

beforeAll(() => {
	if (!missing) b = live.backend;
});
beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-busy-"));
});
afterEach(async () => {
	busy.cleanup();
	await rm(dir, { recursive: true, force: true });
});

/**
 * A `setsid -f` leftover spinning on the hog's CPU at nice 19, its command line carrying `m`. Its
 * new session is a new autogroup, where nice alone would not lower it against the hog: the group
 * is niced to 19 too, so once killed it waits many milliseconds for its turn on that CPU to die.
 * Only the leftover is pinned: the command itself, which the call waits for, runs anywhere.
 */
const busyLeftover = (m: string) =>
	`setsid -f ${TASKSET} -c ${CPU} nice -n 19 sh -c '{ echo 19 > /proc/self/autogroup; } 2>/dev/null; while :; do :; done; : ${m}' >/dev/null 2>&1 < /dev/null; sleep 0.05; echo started`;

/**
 * The same leftover, but the call returns only once it has starved its session (on a crowded CPU
 * its start-up alone can outlast any fixed sleep, and killed before that it dies at once).
 */
const starvedLeftover = (m: string) =>
	`setsid -f ${TASKSET} -c ${CPU} sh -c 'echo 19 > /proc/self/autogroup && : > ${m}.ready; while :; do :; done; : ${m}' >/dev/null 2>&1 < /dev/null; until [ -e ${m}.ready ]; do sleep 0.01; done; echo started`;

async function run(command: string, timeoutMs?: number) {
	const chunks: Buffer[] = [];
	const r = await b.exec.run({ command, cwd: dir, timeoutMs, onData: (c) => chunks.push(Buffer.from(c)) });
	return { ...r, out: Buffer.concat(chunks).toString("latin1") };
}

/** `n` calls, each leaving `leftover(marker)`; what of them is alive the moment each returns. */
async function callsInARow(n: number, leftover: (m: string) => string): Promise<string[]> {
	const survivors: string[] = [];
	for (let i = 0; i < n; i++) {
		const m = marker();
		const from = lastPid();
		const r = await run(leftover(m));
		survivors.push(...liveSince(from, m));
		expect(r.out).toBe("started\n");
	}
	return survivors;
}

describe.skipIf(missing)("ssh command runner: leftovers on a busy CPU", () => {
	it("setsid -f, 10 calls in a row: each leftover is gone when its call returns", async () => {
		hog();
		expect(await callsInARow(10, busyLeftover)).toEqual([]);
	}, 60_000);

	it("a leftover that starves its own session on a CPU crowded by 12 others: gone when its call returns", async () => {
		// Killed, it would wait past the sweep's 2-s bound for its turn to die (the CI flake, made
		// certain); the sweep sets its autogroup back to nice 0.
		busy.crowd(12);
		expect(await callsInARow(3, starvedLeftover)).toEqual([]);
	}, 60_000);

	it("on a timeout too: the leftover is gone when the call returns", async () => {
		hog();
		const m = marker();
		const from = lastPid();
		const r = await run(`${busyLeftover(m)}; sleep 30`, 1500);
		const survivors = liveSince(from, m);
		expect(r.timedOut).toBe(true);
		expect(survivors).toEqual([]);
	}, 60_000);
});
