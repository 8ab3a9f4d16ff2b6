import { describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import type { ProcessLimits } from "../../src/procs/types.js";
import { Session } from "../../src/session.js";
import { TERMINAL_SIZE } from "../../src/tools/process.js";
import { bwrapAvailable } from "../contract/backends.js";
import { details, HTTP_SERVER, handleTests, out, processesWith, waitFor } from "../fixtures/processes.js";
import {
	type HandleRow,
	itBoundsFiftyHandles,
	itServesAndKillsAWebServer,
	itShowsAFullScreenProgram,
} from "../procs/handle-cases.js";

const available = await bwrapAvailable();
if (!available) console.log("bwrap-handles.test: skipped (bwrap cannot run here)");

const t = handleTests("bwrap-handles");

async function open(network = false, limits?: Partial<ProcessLimits>): Promise<Session> {
	const backend = createBwrapBackend({ roots: [t.dir], ...(network ? { network: true } : {}) });
	return t.keep(
		await Session.create({
			root: t.dir,
			backend,
			profile: "unified",
			...(limits ? { processLimits: limits } : {}),
		}),
	);
}

/** This file's row of the cases every backend passes (test/procs/handle-cases.ts). */
const bwrap: HandleRow = {
	t,
	open: (_m, limits) => open(false, limits),
	carrying: processesWith,
	timeoutMs: 60_000,
};

describe.skipIf(!available)("bwrap: process handles", () => {
	itServesAndKillsAWebServer({
		...bwrap,
		open: () => open(true),
		server: () => `exec node -e '${HTTP_SERVER}'`,
		fetch: (port, m) => ({
			command: `node -e 'fetch("http://127.0.0.1:${port}/hello-${m}").then(r => r.text()).then(console.log)'`,
			answer: `hi /hello-${m}`,
		}),
		logged: (m) => `GET /hello-${m}`,
		whileRunning: { atLeast: 1 }, // bwrap's argv names it too
		hostPid: false,
	});

	it("a command past its yield time is read later; close leaves nothing", async () => {
		const s = await open();
		const m = t.marker();
		const r = await s.call("bash", {
			// A fresh sandbox starts first: a yield of 1 s leaves it time to print A2 on a loaded
			// machine (0.2 s did not, once), and the command still runs 1 s past it.
			command: `setsid sh -c 'sleep 1000; : ${m}' </dev/null >/dev/null 2>&1 & echo A$((1+1)); sleep 2; echo B$((2+2))`,
			yield: 1,
		});
		expect(out(r)).toContain("A2");
		const id = details(r).process.id as number;
		const done = await s.call("process", { action: "wait", id, timeout: 20 });
		expect(out(done)).toContain("B4");
		expect(details(done).process).toMatchObject({ state: "exited", exitCode: 0 });
		// The sandbox ends with its command: the escapee went with it.
		expect(processesWith(m)).toEqual([]);
		const kept = await s.call("bash", { command: `sleep 1000; : ${m}`, background: true });
		expect(details(kept).process.state).toBe("running");
		expect(processesWith(m).length).toBeGreaterThan(0);
		await s.close();
		expect(processesWith(m)).toEqual([]);
	}, 30_000);

	it("a Python REPL driven through pipes inside the sandbox", async () => {
		const s = await open();
		const r = await s.call("bash", { command: "python3 -i -q -u", background: true });
		const id = details(r).process.id as number;
		await s.call("process", { action: "wait", id, pattern: ">>> ", timeout: 20 });
		await s.call("process", { action: "write", id, chars: "print(6 * 7, 'x' * 3)\n" });
		const seen = await s.call("process", { action: "wait", id, cursor: 0, pattern: "42 xxx", timeout: 20 });
		expect(out(seen)).toContain("42 xxx");
	}, 30_000);
});

describe.skipIf(!available)("bwrap: bounds", () => {
	itBoundsFiftyHandles({ ...bwrap, onePerHandle: false, firstInTerminal: true, closeWaits: true });
});

describe.skipIf(!available)("bwrap: terminal mode (a pseudo-terminal made inside the sandbox)", () => {
	it("drives a Python REPL through stdin: a terminal of the size asked for, plain text, SIGINT, end of input", async () => {
		const s = await open();
		const r = await s.call("bash", { command: "python3 -q", tty: true });
		const id = details(r).process.id as number;
		const prompt = await s.call("process", { action: "wait", id, cursor: 0, pattern: ">>> ", timeout: 20 });
		let cursor = details(prompt).cursor as number;
		await s.call("process", {
			action: "write",
			id,
			chars: "import os, sys; print(6 * 7, sys.stdin.isatty(), os.get_terminal_size())\n",
		});
		const seen = await s.call("process", {
			action: "wait",
			id,
			cursor,
			pattern: "lines=\\d+\\)",
			timeout: 20,
		});
		expect(out(seen)).toContain(
			`42 True os.terminal_size(columns=${TERMINAL_SIZE.cols}, lines=${TERMINAL_SIZE.rows})`,
		);
		expect(out(seen)).not.toMatch(/\x1b/);
		// A signal goes to the terminal's process group: the REPL interrupts its input line.
		cursor = details(seen).cursor as number;
		await s.call("process", { action: "write", id, chars: "'never run'" });
		await s.call("process", { action: "signal", id, signal: "SIGINT" });
		const interrupted = await s.call("process", {
			action: "wait",
			id,
			cursor,
			pattern: "KeyboardInterrupt",
			timeout: 20,
		});
		expect(out(interrupted)).toContain("KeyboardInterrupt");
		// The end of input is the terminal's end-of-file character: the REPL ends on it.
		await s.call("process", { action: "write", id, eof: true });
		const end = await s.call("process", { action: "wait", id, timeout: 20 });
		expect(details(end).process).toMatchObject({ state: "exited", exitCode: 0 });
	}, 30_000);

	it("codex's exec_command with tty and write_stdin, to the program's exit", async () => {
		const backend = createBwrapBackend({ roots: [t.dir] });
		const s = t.keep(await Session.create({ root: t.dir, backend, profile: "codex" }));
		const r = await s.call("exec_command", {
			cmd: "read -p 'name? ' line; tty; echo got-$line; exit 4",
			tty: true,
			yield_time_ms: 500,
		});
		expect(out(r)).toMatch(/Process running with session ID \d+/);
		const sessionId = details(r).session_id as number;
		let all = out(r);
		all += out(await s.call("write_stdin", { session_id: sessionId, chars: "abc\n", yield_time_ms: 2000 }));
		if (!all.includes("exited"))
			all += out(await s.call("write_stdin", { session_id: sessionId, yield_time_ms: 20_000 }));
		expect(all).toContain("name? ");
		expect(all).toContain("/dev/pts/0");
		expect(all).toContain("got-abc");
		expect(all).toContain("Process exited with code 4");
	}, 30_000);

	itShowsAFullScreenProgram(bwrap);

	it("the program holds its own terminal as 0, 1 and 2 and no other descriptor; the terminal is the sandbox's; the server's are out of reach", async () => {
		const s = await open();
		// The shell's own descriptors (a simple command's fork is the listing's, not the shell's),
		// where they lead, and /dev/tty: opened only through a controlling terminal.
		const r = await s.call("bash", {
			command: [
				"ls -1 /proc/$$/fd",
				"readlink /proc/$$/fd/0 /proc/$$/fd/1 /proc/$$/fd/2",
				"[ /proc/$$/fd/0 -ef /dev/pts/0 ] && echo same-as-pts-0",
				"ls -1 /dev/pts",
				"echo via-tty > /dev/tty && echo controlling",
				// The server's descriptors (its control pipes, the terminal's near end): none opens.
				"for f in 0 1 2 3 4 5 6 7 8 9; do { : < /proc/1/fd/$f || : > /proc/1/fd/$f; } 2>/dev/null && echo reached-$f; done; true",
			].join("; "),
			tty: true,
		});
		const id = details(r).process.id as number;
		const done = await s.call("process", { action: "wait", id, cursor: 0, timeout: 20 });
		expect(details(done).process).toMatchObject({ state: "exited", exitCode: 0 });
		const lines = out(done).split("\n[process ")[0].trimEnd().split("\n");
		expect(lines).toEqual([
			"0",
			"1",
			"2",
			"/dev/pts/0",
			"/dev/pts/0",
			"/dev/pts/0",
			"same-as-pts-0",
			"0",
			"ptmx",
			"via-tty",
			"controlling",
		]);
	}, 30_000);

	it("input larger than the terminal's buffer arrives whole", async () => {
		const s = await open();
		// Raw mode: no line editing, every byte passes; the reader takes them at its own pace.
		const r = await s.call("bash", {
			command: "stty raw -echo; echo ready; head -c 200000 | wc -c; echo done",
			tty: true,
		});
		const id = details(r).process.id as number;
		const ready = await s.call("process", { action: "wait", id, cursor: 0, pattern: "ready", timeout: 20 });
		await s.call("process", { action: "write", id, chars: "y".repeat(200_000) });
		const cursor = details(ready).cursor as number;
		const end = await s.call("process", { action: "wait", id, cursor, pattern: "done", timeout: 20 });
		expect(out(end)).toMatch(/^200000$/m);
	}, 30_000);

	it("a kill takes the terminal's group and what it set loose; close leaves nothing", async () => {
		const s = await open();
		const m = t.marker();
		const tty = (k: string) =>
			s.call("bash", {
				command: `setsid sh -c 'sleep 1000; : ${m}-${k}-loose' </dev/null >/dev/null 2>&1 & sleep 1000; : ${m}-${k}`,
				tty: true,
			});
		const first = details(await tty("a")).process.id as number;
		await tty("b");
		// Each: its shell (both markers on its command line) and the escapee.
		const both = () => ["a", "b"].every((k) => processesWith(`${m}-${k}`).length === 2);
		expect(await waitFor(both, 15_000), processesWith(m).join("\n")).toBe(true);
		const killed = await s.call("process", { action: "kill", id: first });
		expect(details(killed).process.state).toBe("killed");
		// Answered once everything of it is gone; the other terminal's are untouched.
		expect(processesWith(`${m}-a`)).toEqual([]);
		expect(processesWith(`${m}-b`).length).toBe(2);
		await s.close();
		expect(processesWith(m)).toEqual([]);
	}, 30_000);
});
