/**
 * Process handles on the command runner (src/backend/remote/host/runner_live.py) without sshd or a
 * container: the runner started over a local `sh` carrier, exactly as a container's exec client
 * would give it (ssh/run-live.ts runnerHandles). A server that prints "ready" waited for, stdin
 * written, a signal, a group kill that takes a setsid escapee too; a terminal with a Python REPL;
 * the carrier's input ending (a dropped link) and the runner SIGKILLed by a command: nothing of the
 * handles is left on this machine. Processes are found by their KEEL_CALL_TAG-free marker in /proc.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { childShellPipe } from "../../src/backend/container/pipe.js";
import { type RunnerHandles, runnerHandles } from "../../src/backend/ssh/run-live.js";
import type { LiveProcess } from "../../src/backend/types.js";
import { handleTests, processesWith, untilMatches as until, waitFor } from "../fixtures/processes.js";

const python = spawnSync("python3", ["-c", "import sys; sys.exit(sys.version_info < (3, 8))"]).status === 0;
const procOk = spawnSync("sh", ["-c", "test -r /proc/self/environ"]).status === 0;
const missing = !python ? "python3 >= 3.8 is not installed" : !procOk ? "no /proc" : undefined;
if (missing) console.warn(`skipping the runner handle tests: ${missing}`);

// What the handles leave is given 5 s to end with them before it is killed.
const t = handleTests("runh", { settleMs: 5000 });
const marker = () => t.marker();
const handles: RunnerHandles[] = [];
afterEach(() => {
	for (const h of handles.splice(0)) h.close();
});

/** `env sh`: the carrier a container's `podman exec -i NAME sh` would be, here on this machine. */
const PLAIN = ["env"];
/**
 * A carrier whose sh, and so the runner, starts with SIGINT and SIGQUIT ignored (as `cmd &` leaves
 * them) and descriptors 7 and 8 open (as a login shell's rc file may leave them).
 */
const IGNORING = ["sh", "-c", `trap '' INT QUIT; exec 7</etc/hostname 8>/dev/null; exec "$0"`];

function open(carrier: string[] = PLAIN): RunnerHandles {
	const h = runnerHandles(() => childShellPipe(carrier, "this machine"), "this machine");
	handles.push(h);
	return h;
}

/** A started handle with its output collected. */
async function start(h: RunnerHandles, command: string, terminal?: { cols: number; rows: number }) {
	const chunks: Buffer[] = [];
	const proc = await h.start({
		command,
		cwd: t.dir,
		...(terminal ? { terminal } : {}),
		onData: (c) => chunks.push(Buffer.from(c)),
	});
	return { proc, text: () => Buffer.concat(chunks).toString("utf8") };
}

describe.skipIf(missing)("process handles on the command runner (no sshd)", () => {
	it("ready, stdin, a signal to the group, and a kill that takes a setsid escapee before it answers", async () => {
		const h = open();
		const m = marker();
		const { proc, text } = await start(
			h,
			`setsid sh -c 'sleep 1000; : ${m}' </dev/null >/dev/null 2>&1 & trap 'echo got-int' INT; echo ready; while read line; do echo "got-$line"; done; sleep 1000; : ${m}`,
		);
		expect(proc.pid).toBeGreaterThan(0);
		await until(text, /ready\n/);
		expect(await proc.write("one\ntwo\n")).toBe(true);
		await until(text, /got-one\ngot-two\n/);
		expect(proc.signal("SIGINT")).toBe(true);
		await until(text, /got-int\n/);
		expect(processesWith(m).length).toBe(2);
		await proc.kill();
		// Answered once the group and the tagged escapee are gone.
		expect(processesWith(m)).toEqual([]);
		expect(await proc.exited).toEqual({ code: null, signal: "SIGKILL" });
	});

	it("a runner started with SIGINT ignored: a handle still gets it at its default (a trap works, and it kills)", async () => {
		const h = open(IGNORING);
		const trapping = await start(
			h,
			"trap 'echo got-int' INT; echo ready; while :; do sleep 1 & wait $!; done",
		);
		await until(trapping.text, /ready\n/);
		expect(trapping.proc.signal("SIGINT")).toBe(true);
		await until(trapping.text, /got-int\n/);
		const plain = await start(h, "echo ready; sleep 1000");
		await until(plain.text, /ready\n/);
		plain.proc.signal("SIGINT");
		expect(await plain.proc.exited).toEqual({ code: null, signal: "SIGINT" });
		await trapping.proc.kill();
		await plain.proc.kill();
	});

	it("a handle gets its own three descriptors only, with pipes and in a terminal", async () => {
		const h = open(IGNORING);
		for (const terminal of [undefined, { cols: 80, rows: 24 }]) {
			// `; true` keeps bash from exec'ing ls: the listing is the shell's own descriptors.
			const { proc, text } = await start(h, "ls -1 /proc/$$/fd; true", terminal);
			await proc.exited;
			await proc.drained;
			const fds = text()
				.trim()
				.split(/\r?\n/)
				.map(Number)
				.sort((a, b) => a - b);
			expect(fds, text()).toEqual([0, 1, 2]);
			await proc.kill();
		}
	});

	it("stdin's end reaches the command; its exit and end of output are told; a write after it is refused", async () => {
		const h = open();
		const { proc, text } = await start(h, "cat; echo end-of-input; exit 5");
		expect(await proc.write("abc\n")).toBe(true);
		proc.closeStdin();
		expect(await proc.exited).toEqual({ code: 5, signal: null });
		await proc.drained;
		expect(text()).toBe("abc\nend-of-input\n");
		expect(await proc.write("late\n")).toBe(false);
		await proc.kill();
	});

	it("a missing working directory fails the start with ENOENT", async () => {
		const h = open();
		await expect(
			h.start({ command: "true", cwd: join(t.dir, "no", "such"), onData: () => {} }),
		).rejects.toMatchObject({ code: "ENOENT" });
	});

	it("a terminal: a Python REPL is driven through it, isatty, of the size asked for", async () => {
		const h = open();
		const { proc, text } = await start(h, "python3 -q", { cols: 100, rows: 30 });
		await until(text, />>> $/);
		await proc.write("import os, sys; print('tty', sys.stdin.isatty(), tuple(os.get_terminal_size()))\n");
		expect(await until(text, /tty True \(100, 30\)/)).toContain("tty True (100, 30)");
		await proc.write("exit()\n");
		expect(await proc.exited).toEqual({ code: 0, signal: null });
		await proc.kill();
	});

	it("the carrier's input ending (a dropped link) kills every handle and what it set loose", async () => {
		const h = open();
		const m = marker();
		const a = await start(h, `setsid sh -c 'sleep 1000; : ${m}' & sleep 1000; : ${m}`);
		const b = await start(h, `sleep 1000; : ${m}`, { cols: 80, rows: 24 });
		expect(await waitFor(() => processesWith(m).length === 3, 10_000)).toBe(true);
		h.close();
		expect(await waitFor(() => processesWith(m).length === 0, 10_000), processesWith(m).join("\n")).toBe(
			true,
		);
		for (const p of [a.proc, b.proc] as LiveProcess[]) expect((await p.exited).signal).toBe("SIGKILL");
	});

	it("a command that SIGKILLs the runner: the handles end, and the next runner kills what they left", async () => {
		const h = open();
		const m = marker();
		const a = await start(h, `setsid sh -c 'sleep 1000; : ${m}' & sleep 1000; : ${m}`);
		expect(await waitFor(() => processesWith(m).length === 2, 10_000)).toBe(true);
		// After a pause: the runner answers "started" before its death, which is what is tested here
		// (a kill racing that answer fails the start itself with BACKEND_UNAVAILABLE).
		const killer = await start(h, "sleep 0.5; kill -9 $PPID");
		await killer.proc.exited;
		expect(await a.proc.exited).toEqual({ code: null, signal: "SIGKILL" });
		// Nobody killed them yet: the runner that held them is gone.
		expect(processesWith(m).length).toBe(2);
		const next = await start(h, "echo next");
		await until(next.text, /next/);
		expect(await waitFor(() => processesWith(m).length === 0, 10_000), processesWith(m).join("\n")).toBe(
			true,
		);
	});
});
