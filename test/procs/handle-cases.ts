/**
 * The process-handle cases every backend passes, written once: a web server waited for, queried
 * from another call, its log read from a cursor and killed with what it set loose; a foreground
 * command past its yield time read later; a full-screen program's screen; fifty handles at once
 * against the bounds. Each backend's test file registers them inside its own describe, with what
 * differs on that backend (its row), so each keeps its file, suite and tier (test/tiers.ts).
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { ProcessLimits } from "../../src/procs/types.js";
import type { CallResult, Session } from "../../src/session.js";
import {
	details,
	expectDrawnScreen,
	type HandleTestState,
	out,
	placeDrawScreen,
	waitFor,
} from "../fixtures/processes.js";

/** How a backend's handles are opened and seen in this host's process table. */
export interface HandleRow {
	/** The test file's scratch directory, sessions and markers. */
	t: HandleTestState;
	/** A session of one case; `m` is the case's marker (a backend may put it on its clients' command lines). */
	open(m: string, limits?: Partial<ProcessLimits>): Promise<Session>;
	/** The processes carrying `m` that the backend runs for its handles (not its clients). */
	carrying(m: string): string[];
	/** Each case's time limit, ms. */
	timeoutMs: number;
}

/** A web server on one backend: how it is started and asked, and what shows it ran. */
export interface WebServerRow extends HandleRow {
	/** The server's command: it prints "port N" once listening and logs each request. */
	server(m: string): string;
	/** A command that asks the server at `port` for a page naming `m`, and what its answer holds. */
	fetch(port: number, m: string): { command: string; answer: string };
	/** The server's log line for that request. */
	logged(m: string): string;
	/** Processes carrying the marker while the server runs: exactly, or at least (a sandbox's argv names it too). */
	whileRunning?: { exactly: number } | { atLeast: number };
	/** The handle's pid is this host's: it is checked gone after the kill. */
	hostPid: boolean;
}

const pidAlive = (pid: number) => {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
};

/** A background web server: waited for, queried from another call, its log read from a cursor, killed with a setsid escapee. */
export function itServesAndKillsAWebServer(row: WebServerRow): void {
	it(
		"a web server: waited for, queried from another call, its log read from a cursor, killed with what it set loose",
		async () => {
			const m = row.t.marker();
			const s = await row.open(m);
			// The server, and a `setsid` escapee that leaves its process group: kill must take both.
			const started = await s.call("bash", {
				command: `setsid sh -c 'sleep 1000; : ${m}' </dev/null >/dev/null 2>&1 & ${row.server(m)}`,
				background: true,
			});
			const id = details(started).process.id as number;
			expect(details(started).process.state).toBe("running");

			const ready = await s.call("process", {
				action: "wait",
				id,
				cursor: 0,
				pattern: "port (\\d+)",
				timeout: 20,
			});
			const port = Number(/port (\d+)/.exec(out(ready))?.[1]);
			expect(port).toBeGreaterThan(0);
			const cursor = details(ready).cursor as number;

			const asked = row.fetch(port, m);
			const page = await s.call("bash", { command: asked.command });
			expect(out(page)).toContain(asked.answer);

			// The request's log line, read from the cursor the wait returned: nothing from before it.
			const log = await s.call("process", { action: "wait", id, cursor, pattern: `hello-${m}`, timeout: 20 });
			expect(out(log)).toContain(row.logged(m));
			expect(out(log)).not.toContain(`port ${port}`);

			if (row.whileRunning && "exactly" in row.whileRunning)
				expect(row.carrying(m).length).toBe(row.whileRunning.exactly);
			if (row.whileRunning && "atLeast" in row.whileRunning)
				expect(row.carrying(m).length).toBeGreaterThanOrEqual(row.whileRunning.atLeast);
			const pid = details(started).process.pid as number;
			const killed = await s.call("process", { action: "kill", id });
			expect(details(killed).process.state).toBe("killed");
			// kill answers once the group and the escapee are gone, not some time later.
			if (row.hostPid) expect(pidAlive(pid)).toBe(false);
			expect(row.carrying(m)).toEqual([]);
			const listed = await s.call("process", { action: "list" });
			expect(out(listed)).toMatch(new RegExp(`process ${id} .*killed`));
		},
		row.timeoutMs,
	);
}

/** A foreground command that outruns its yield time: what it printed, a handle, and its later output. */
export async function expectYieldedCommandReadLater(s: Session): Promise<void> {
	// The command's text (shown in the status line) does not hold what it prints.
	const r = await s.call("bash", {
		command: "echo A$((1+1)); sleep 1; echo B$((2+2)); exit 3",
		yield: 0.2,
	});
	expect(out(r)).toContain("A2");
	expect(out(r)).not.toContain("B4");
	const id = details(r).process.id as number;
	expect(details(r).process.state).toBe("running");
	const done = await s.call("process", { action: "wait", id, timeout: 20 });
	expect(out(done)).toContain("B4");
	expect(out(done)).not.toContain("A2");
	expect(details(done).process).toMatchObject({ state: "exited", exitCode: 3 });
}

/** expectYieldedCommandReadLater as a case of its own. */
export function itReadsAYieldedCommandLater(row: HandleRow): void {
	it(
		"a foreground command past its yield time becomes a handle, and its later output is read",
		async () => {
			await expectYieldedCommandReadLater(await row.open(row.t.marker()));
		},
		row.timeoutMs,
	);
}

/**
 * A Python REPL in a terminal, driven through stdin: its answer read as plain text. The REPL is
 * left running; its handle and the write's answer (whose cursor a caller may read on from).
 */
export async function expectReplAnswers(s: Session): Promise<{ id: number; answer: CallResult }> {
	const r = await s.call("bash", { command: "python3 -q", tty: true });
	const id = details(r).process.id as number;
	await s.call("process", { action: "wait", id, cursor: 0, pattern: ">>> ", timeout: 20 });
	const answer = await s.call("process", { action: "write", id, chars: "print(6 * 7, 'x' * 3)\n" });
	let text = out(answer);
	if (!text.includes("42 xxx")) {
		text = out(await s.call("process", { action: "wait", id, pattern: "42 xxx", timeout: 20 }));
	}
	expect(text).toContain("42 xxx");
	expect(text).not.toMatch(/\x1b/);
	return { id, answer };
}

/** The REPL ended by its own exit(): the handle's state says so. */
export async function expectReplExits(s: Session, id: number): Promise<void> {
	await s.call("process", { action: "write", id, chars: "exit()\n" });
	const end = await s.call("process", { action: "wait", id, timeout: 20 });
	expect(details(end).process).toMatchObject({ state: "exited", exitCode: 0 });
}

/** A full-screen program in a terminal: its current screen as text, not its escapes; killed, it leaves nothing. */
export function itShowsAFullScreenProgram(row: HandleRow): void {
	it(
		"gives a full-screen program's current screen, not its escapes",
		async () => {
			const m = row.t.marker();
			const s = await row.open(m);
			await placeDrawScreen(row.t.dir);
			const r = await s.call("bash", { command: `python3 draw.py ${m}`, tty: true });
			const id = details(r).process.id as number;
			expectDrawnScreen(
				await s.call("process", { action: "wait", id, cursor: 0, pattern: "WORLD", timeout: 20 }),
			);
			await s.call("process", { action: "kill", id });
			expect(row.carrying(m)).toEqual([]);
		},
		row.timeoutMs,
	);
}

/** Fifty handles on one backend: what is seen of them, and when they are gone. */
export interface FiftyRow extends HandleRow {
	/** Each live handle is exactly one process carrying the marker (false: at least one; a sandbox's argv names it too). */
	onePerHandle: boolean;
	/** The first of them runs in a terminal. */
	firstInTerminal?: boolean;
	/** The session's close returns once every process is gone (false: they are gone within seconds). */
	closeWaits: boolean;
}

/** Fifty handles at once: the live limit, the memory and spill bounds, a freed slot, and nothing left after the close. */
export function itBoundsFiftyHandles(row: FiftyRow): void {
	it(
		"fifty at once: the live limit answers PROCESS_LIMIT by name, output stays within its bounds, close leaves none",
		async () => {
			const limits = { maxLive: 40, keepBytes: 4096, maxSpillBytes: 64 * 1024 };
			const m = row.t.marker();
			const s = await row.open(m, limits);
			// Each prints 20000 bytes, then lingers.
			const command = `head -c 20000 /dev/zero | tr '\\0' x; echo; sleep 1000; : ${m}`;
			const results = await Promise.all(
				Array.from({ length: 50 }, (_, i) =>
					s.call("bash", { command, background: true, tty: row.firstInTerminal === true && i === 0 }),
				),
			);
			expect(results.filter((r) => r.ok).length).toBe(40);
			const refused = results.filter((r) => !r.ok);
			expect(refused.length).toBe(10);
			for (const r of refused) {
				if (r.ok) continue;
				expect(r.error.code).toBe("PROCESS_LIMIT");
				expect(r.error.message).toContain("maxLive");
			}
			const ids = results.filter((r) => r.ok).map((r) => details(r).process.id as number);
			await Promise.all(
				ids.map((id) => s.call("process", { action: "wait", id, cursor: 0, pattern: "x\\n", timeout: 30 })),
			);
			const table = s.processes as unknown as { entries: Map<number, { log: { heldBytes: number } }> };
			for (const id of ids)
				expect(table.entries.get(id)?.log.heldBytes).toBeLessThanOrEqual(limits.keepBytes);
			// Spilled in total: no more than the budget.
			const spilled = readdirSync(s.spill.dir)
				.filter((n) => n.startsWith("process-"))
				.reduce((n, f) => n + statSync(join(s.spill.dir, f)).size, 0);
			expect(spilled).toBeLessThanOrEqual(limits.maxSpillBytes);
			// Some output was spilled whole (readable from cursor 0); the rest is dropped, and asking for it names the limit.
			const first = await Promise.all(ids.map((id) => s.call("process", { action: "read", id, cursor: 0 })));
			const whole = first.filter((r) => r.ok);
			const dropped = first.filter((r) => !r.ok);
			expect(whole.length).toBeGreaterThan(0);
			expect(dropped.length).toBeGreaterThan(0);
			for (const r of whole) expect(out(r).startsWith("x".repeat(1000))).toBe(true);
			for (const r of dropped) {
				if (r.ok) continue;
				expect(r.error.code).toBe("OUTPUT_DROPPED");
				expect(r.error.message).toContain("maxSpillBytes");
			}
			// One killed frees a slot.
			await s.call("process", { action: "kill", id: ids[0] });
			expect((await s.call("bash", { command: `sleep 1000; : ${m}`, background: true })).ok).toBe(true);
			const live = () => row.carrying(m).length;
			expect(
				await waitFor(() => (row.onePerHandle ? live() === 40 : live() >= 40), 15_000),
				`${live()}`,
			).toBe(true);
			await s.close();
			if (row.closeWaits) expect(row.carrying(m)).toEqual([]);
			else expect(await waitFor(() => live() === 0, 15_000), row.carrying(m).join("\n")).toBe(true);
		},
		row.timeoutMs,
	);
}
