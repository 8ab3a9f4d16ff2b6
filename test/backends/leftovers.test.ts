/**
 * What a `bash` call leaves running on local: `cmd &`, `nohup`,
 * `setsid` and a double fork are gone when the call returns; `background: true` keeps them (as a
 * process handle) until the session closes; a SIGKILLed keel leaves nothing running for long (the watchdog). Real
 * processes, found in the host's process table by a marker in their command lines.
 */
import { describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import { runKeel } from "../fixtures/keel-cli.js";
import { handleTests, out, processesWith, waitFor } from "../fixtures/processes.js";

const t = handleTests("leftovers");
const marker = () => t.marker();

/** A long sleep whose command line carries `m`. */
const sleeper = (m: string) => `sh -c 'sleep 1000; : ${m}'`;

async function open(profile: "pi" | "unified" = "pi"): Promise<Session> {
	return t.keep(await Session.create({ root: t.dir, profile }));
}

describe("local: nothing a call starts outlives it", () => {
	const shapes: [string, (m: string) => string][] = [
		["cmd &", (m) => `${sleeper(m)} & echo started`],
		["nohup cmd &", (m) => `nohup ${sleeper(m)} >/dev/null 2>&1 & echo started`],
		["setsid cmd", (m) => `setsid ${sleeper(m)} >/dev/null 2>&1 < /dev/null & echo started`],
		["setsid --fork", (m) => `setsid -f ${sleeper(m)} >/dev/null 2>&1 < /dev/null; echo started`],
		["double fork (daemon)", (m) => `( ( ${sleeper(m)} >/dev/null 2>&1 & ) & ); echo started`],
	];
	for (const [name, command] of shapes) {
		it(`${name}: gone when the call returns`, async () => {
			const s = await open();
			const m = marker();
			const r = await s.call("bash", { command: command(m) });
			expect(r.ok).toBe(true);
			expect(processesWith(m)).toEqual([]);
		});
	}

	it("setsid cmd, 100 calls in a row: none survives (the sweep races the child's execve)", async () => {
		// A sweep over the call's pid window takes microseconds; a child caught between its old and
		// new image has no environment to read yet and must not be taken for a stranger.
		const s = await open();
		const m = marker();
		for (let i = 0; i < 100; i++) {
			const r = await s.call("bash", {
				command: `setsid ${sleeper(`${m}-${i}`)} >/dev/null 2>&1 < /dev/null & echo started`,
			});
			expect(r.ok).toBe(true);
		}
		expect(processesWith(m)).toEqual([]);
	});

	it("a timed-out call's setsid children are gone too", async () => {
		const s = await open();
		const m = marker();
		const r = await s.call("bash", { command: `setsid ${sleeper(m)} & sleep 100`, timeout: 0.5 });
		expect(r.ok).toBe(false);
		expect(processesWith(m)).toEqual([]);
	});
});

describe("local: background: true", () => {
	it("keeps them past the call, lists them, and kills them at session close", async () => {
		const s = await open("unified");
		const m = marker();
		const r = await s.call("bash", {
			command: `setsid ${sleeper(m)} >/dev/null 2>&1 & echo started`,
			background: true,
		});
		expect(r.ok).toBe(true);
		const textOut = out(r);
		expect(textOut).toMatch(/process \d+ \(pid \d+\)/);
		expect(textOut).toContain(m);
		expect(processesWith(m).length).toBeGreaterThan(0);
		await s.call("bash", { command: "true" }); // a later call does not take them
		expect(processesWith(m).length).toBeGreaterThan(0);
		await s.close();
		expect(processesWith(m)).toEqual([]);
	});

	it("is refused where it cannot be kept (the pi profile has pi's schema; bwrap ends everything)", async () => {
		const s = await open("pi");
		const r = await s.call("bash", { command: "true", background: true });
		expect(r.ok).toBe(false);
	});
});

describe("local: keel killed with SIGKILL", () => {
	it("the running command and what it set loose are killed by the watchdog", async () => {
		const m = marker();
		const line = JSON.stringify({
			tool: "bash",
			args: { command: `setsid ${sleeper(m)} >/dev/null 2>&1 < /dev/null & ${sleeper(m)}` },
		});
		const run = await runKeel(t.dir, ["batch", "--root", t.dir], {
			input: `${line}\n`,
			during: async (child) => {
				expect(await waitFor(() => processesWith(m).length >= 2, 10_000)).toBe(true);
				child.kill("SIGKILL");
			},
		});
		expect(run.code).toBe(null);
		expect(await waitFor(() => processesWith(m).length === 0, 10_000)).toBe(true);
	});
});
