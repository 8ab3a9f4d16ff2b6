/**
 * The narrowed sweep (leftovers-pids.ts): only pids handed out since the call began are looked at,
 * and that window still holds every process the call started, however it left: a wide window
 * (hundreds of forks), a leftover that forks on, a window that wraps at pid_max, and a fork count
 * too large to bound (back to reading all of /proc). Real processes, tagged as keel tags them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { CALL_TAG, findTagged, killTagged, ProcessTracker } from "../../src/backend/leftovers.js";
import { pidsSince, takePidMark } from "../../src/backend/leftovers-pids.js";
import { processesWith, waitFor } from "../fixtures/processes.js";

const started: ChildProcess[] = [];
const markers: string[] = [];
afterEach(() => {
	for (const c of started.splice(0)) c.kill("SIGKILL");
	for (const m of markers.splice(0))
		for (const line of processesWith(m)) process.kill(Number(line.split(" ")[0]), "SIGKILL");
});

function marker(): string {
	const m = `keelpid${randomBytes(5).toString("hex")}`;
	markers.push(m);
	return m;
}

/** Runs `script` in sh with the call tag set; resolves when sh exits (what it set loose stays). */
function runTagged(tag: string, script: string): Promise<void> {
	const child = spawn("/bin/sh", ["-c", script], {
		env: { ...process.env, [CALL_TAG]: tag },
		stdio: "ignore",
		detached: true,
	});
	started.push(child);
	return new Promise((resolve) => child.on("exit", () => resolve()));
}

const mark = takePidMark();
if (!mark) console.log("leftovers-pids.test: /proc gives no pid counters here; narrowed-sweep cases skipped");

describe.skipIf(!mark)("the sweep looks only at pids created since the call began", () => {
	it("finds a setsid leftover through the window, and the window excludes older tagged processes", async () => {
		const tag = randomBytes(6).toString("hex");
		const old = marker();
		await runTagged(tag, `setsid sh -c 'sleep 1000; : ${old}' >/dev/null 2>&1 < /dev/null &`);
		expect(await waitFor(() => processesWith(old).length > 0, 5000)).toBe(true);
		const since = takePidMark();
		const fresh = marker();
		await runTagged(tag, `setsid sh -c 'sleep 1000; : ${fresh}' >/dev/null 2>&1 < /dev/null &`);
		expect(await waitFor(() => processesWith(fresh).length > 0, 5000)).toBe(true);
		const inWindow = findTagged(CALL_TAG, tag, since).map((p) => p.command);
		expect(inWindow.some((c) => c.includes(fresh))).toBe(true);
		expect(inWindow.some((c) => c.includes(old))).toBe(false); // started before the mark
		expect(findTagged(CALL_TAG, tag).length).toBeGreaterThanOrEqual(4); // both sh's and sleeps
		await killTagged(CALL_TAG, tag);
	});

	it("a window wider than the probe limit (600 forks) still catches the leftover", async () => {
		const tag = randomBytes(6).toString("hex");
		const since = takePidMark();
		const m = marker();
		await runTagged(
			tag,
			`i=0; while [ $i -lt 600 ]; do /bin/true; i=$((i+1)); done; setsid sh -c 'sleep 1000; : ${m}' >/dev/null 2>&1 < /dev/null &`,
		);
		expect(await waitFor(() => processesWith(m).length > 0, 5000)).toBe(true);
		if (!since) throw new Error("no mark");
		expect(pidsSince(since)?.probe).toBeUndefined(); // the wide path: a filtered readdir
		expect(await killTagged(CALL_TAG, tag, since)).toBeGreaterThan(0);
		expect(await waitFor(() => processesWith(m).length === 0, 5000)).toBe(true);
	});

	it("a leftover that keeps forking is caught pass after pass", async () => {
		const tag = randomBytes(6).toString("hex");
		const since = takePidMark();
		const m = marker();
		await runTagged(
			tag,
			`setsid sh -c 'while :; do sh -c "sleep 1000; : ${m}" & sleep 0.01; done' >/dev/null 2>&1 < /dev/null &`,
		);
		expect(await waitFor(() => processesWith(m).length > 2, 5000)).toBe(true);
		await killTagged(CALL_TAG, tag, since);
		await new Promise((r) => setTimeout(r, 200));
		expect(processesWith(m)).toEqual([]);
		expect(findTagged(CALL_TAG, tag)).toEqual([]);
	});

	it("a window that wrapped at pid_max covers both ends", async () => {
		if (!mark) return;
		const tag = randomBytes(6).toString("hex");
		const m = marker();
		// A mark near the top of the pid space: now's last pid is below it, as after a wrap.
		const wrapped = { ...takePidMark()!, lastPid: mark.pidMax - 3 };
		await runTagged(tag, `setsid sh -c 'sleep 1000; : ${m}' >/dev/null 2>&1 < /dev/null &`);
		expect(await waitFor(() => processesWith(m).length > 0, 5000)).toBe(true);
		const window = pidsSince(wrapped);
		expect(window?.has(mark.pidMax - 1)).toBe(true);
		expect(window?.has(mark.pidMax - 3)).toBe(false);
		expect(findTagged(CALL_TAG, tag, wrapped).some((p) => p.command.includes(m))).toBe(true);
		await killTagged(CALL_TAG, tag);
	});

	it("too many forks since the mark to bound the window: every process is read", async () => {
		if (!mark) return;
		const tag = randomBytes(6).toString("hex");
		const m = marker();
		await runTagged(tag, `setsid sh -c 'sleep 1000; : ${m}' >/dev/null 2>&1 < /dev/null &`);
		expect(await waitFor(() => processesWith(m).length > 0, 5000)).toBe(true);
		// As if the allocator went round: the pid counter is back where it was, the forks are many.
		const now = takePidMark()!;
		const lapped = { ...now, forks: now.forks - now.pidMax };
		expect(pidsSince(lapped)).toBeUndefined();
		expect(findTagged(CALL_TAG, tag, lapped).some((p) => p.command.includes(m))).toBe(true);
		await killTagged(CALL_TAG, tag);
	});

	it("the tracker's mark is taken per call and its sweep kills what the call left", async () => {
		const tracker = new ProcessTracker();
		const { env, callTag, since } = tracker.tagCall();
		expect(since).toBeDefined();
		const m = marker();
		const child = spawn(
			"/bin/sh",
			["-c", `setsid sh -c 'sleep 1000; : ${m}' >/dev/null 2>&1 < /dev/null &`],
			{
				env: { ...process.env, ...env },
				stdio: "ignore",
			},
		);
		await new Promise((r) => child.on("exit", r));
		expect(await waitFor(() => processesWith(m).length > 0, 5000)).toBe(true);
		expect(await tracker.endCall(callTag, since)).toBeGreaterThan(0);
		expect(await waitFor(() => processesWith(m).length === 0, 5000)).toBe(true);
		await tracker.close();
	});
});
