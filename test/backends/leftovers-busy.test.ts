import { afterEach, describe, expect, it } from "vitest";
import type { Session } from "../../src/session.js";
import { BusyCpu, CPU, lastPid, liveSince, TASKSET } from "../fixtures/busy-cpu.js";
import { processesWith } from "../fixtures/processes.js";
import { useWorkspace } from "../fixtures/workspace.js";

// Each test opens its session itself, on the profile it checks.
const ws = useWorkspace({ prefix: "keel-leftovers-busy-", session: false });
const busy = new BusyCpu("keelbusy");
const marker = () => busy.marker();
const hog = () => busy.hog();

// Registered after the workspace's hook, so the hog stops before the sessions close.
afterEach(() => busy.cleanup());

/**
 * A `setsid --fork` leftover that spins on the hog's CPU, its command line carrying `m`. It runs
 * at a low priority, and a moment before the call ends, so once killed it waits for its turn on
 * that CPU: 10 to 30 ms here, against some 8 ms for the 8 passes the sweep used to stop at. Its new
 * session is a new autogroup, where nice alone would not lower it against the hog: the group is
 * niced too.
 */
const busyLeftover = (m: string, nice = 10) =>
	`${TASKSET} -c ${CPU} nice -n ${nice} setsid -f sh -c '{ echo ${nice} > /proc/self/autogroup; } 2>/dev/null; while :; do :; done; : ${m}' >/dev/null 2>&1 < /dev/null; sleep 0.05; echo started`;

async function open(profile: "pi" | "unified"): Promise<Session> {
	return ws().open({ profile });
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

	it("a leftover that starves its own session (autogroup nice 19) on a crowded CPU: gone when its call returns", async () => {
		// Killed, it would wait past the sweep's 2-s bound for its turn to die; the sweep sets its
		// autogroup back to nice 0.
		busy.crowd(12);
		const s = await open("pi");
		const survivors: string[] = [];
		for (let i = 0; i < 3; i++) {
			const m = marker();
			const from = lastPid();
			const r = await s.call("bash", { command: busyLeftover(m, 19) });
			survivors.push(...liveSince(from, m));
			expect(r.ok).toBe(true);
		}
		expect(survivors).toEqual([]);
	}, 60_000);

	it("what process handles left running is gone when the session's close returns", async () => {
		hog();
		const s = await open("unified");
		const m = marker();
		const from = lastPid();
		// Nice 19: close's passes read all of /proc (tens of ms each here), so a kill must wait longer
		// than for a call's windowed passes to outlast the 8 the sweep used to stop at.
		for (let i = 0; i < 5; i++) {
			// A handle (yield): what the command sets loose stays after it ends, until the close.
			const r = await s.call("bash", { command: busyLeftover(`${m}-${i}`, 19), yield: 60 });
			expect(r.ok).toBe(true);
		}
		expect(processesWith(m).length).toBe(5);
		await s.close();
		expect(liveSince(from, m)).toEqual([]);
	});
});
