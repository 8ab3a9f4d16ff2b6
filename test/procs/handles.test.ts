/**
 * Process handles through the tools on local: a server started in the background, waited for by
 * pattern, queried from another call, its log read from a cursor, killed with what it set loose; a
 * foreground command that outruns its yield time; a Python REPL and a full-screen program in a
 * terminal; fifty at once against the bounds; nothing left after close. Real processes, found in
 * the host's process table by a marker in their command lines.
 */
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createExecBackend } from "../../src/backend/exec/index.js";
import type { ExecTransport } from "../../src/backend/exec/transport.js";
import type { ProcessLimits } from "../../src/procs/types.js";
import { Session } from "../../src/session.js";
import { details, HTTP_SERVER, handleTests, out, processesWith } from "../fixtures/processes.js";
import {
	expectReplAnswers,
	expectReplExits,
	type HandleRow,
	itBoundsFiftyHandles,
	itReadsAYieldedCommandLater,
	itServesAndKillsAWebServer,
	itShowsAFullScreenProgram,
} from "./handle-cases.js";

const PYTHON = (() => {
	try {
		execFileSync("python3", ["-c", "0"]);
		return "python3";
	} catch {
		return undefined;
	}
})();

const t = handleTests("handles");
const marker = () => t.marker();

async function open(profile: "unified" | "codex" | "pi" = "unified", limits?: Partial<ProcessLimits>) {
	return t.keep(await Session.create({ root: t.dir, profile, ...(limits ? { processLimits: limits } : {}) }));
}

/** This file's row of the cases every backend passes (handle-cases.ts). */
const local: HandleRow = {
	t,
	open: (_m, limits) => open("unified", limits),
	carrying: processesWith,
	timeoutMs: 60_000,
};

describe("local: a web server under a process handle", () => {
	itServesAndKillsAWebServer({
		...local,
		server: () => `exec ${process.execPath} -e '${HTTP_SERVER}'`,
		fetch: (port, m) => ({
			command: `${process.execPath} -e 'fetch("http://127.0.0.1:${port}/hello-${m}").then(r => r.text()).then(console.log)'`,
			answer: `hi /hello-${m}`,
		}),
		logged: (m) => `GET /hello-${m}`,
		whileRunning: { exactly: 1 },
		hostPid: true,
	});
});

describe("local: a foreground command that outruns its yield time", () => {
	itReadsAYieldedCommandLater(local);

	it("a handle's timeout kills it", async () => {
		const s = await open();
		const m = marker();
		const r = await s.call("bash", { command: `sleep 1000; : ${m}`, background: true, timeout: 0.3 });
		const id = details(r).process.id as number;
		const done = await s.call("process", { action: "wait", id, timeout: 20 });
		expect(details(done).process.state).toBe("timed out");
		expect(processesWith(m)).toEqual([]);
	});

	it("a command that ends within its yield time answers at once with its exit", async () => {
		const s = await open();
		const r = await s.call("bash", { command: "echo quick", yield: 20 });
		expect(out(r)).toContain("quick");
		expect(details(r).process).toMatchObject({ state: "exited", exitCode: 0 });
	});
});

describe.skipIf(!PYTHON)("local: terminal mode", () => {
	it("drives a Python REPL through stdin and reads its output as plain text", async () => {
		const s = await open();
		const { id } = await expectReplAnswers(s);
		await expectReplExits(s, id);
	}, 30_000);

	itShowsAFullScreenProgram(local);
});

describe("local: bounds", () => {
	itBoundsFiftyHandles({ ...local, onePerHandle: false, closeWaits: true });
});

describe("local: the pi profile keeps pi's bash", () => {
	it("has no background, yield or tty, and no process tool", async () => {
		const s = await open("pi");
		const bash = s.tools.find((t) => t.name === "bash");
		expect(Object.keys(bash?.parameters.properties ?? {})).toEqual(["command", "timeout"]);
		expect(s.tools.some((t) => t.name === "process")).toBe(false);
		const r = await s.call("bash", { command: "true", background: true });
		expect(r.ok).toBe(false);
	});
});

describe("local: the codex profile's exec_command and write_stdin", () => {
	it("a command past its yield time answers with a session_id; write_stdin writes and polls it to its exit", async () => {
		const s = await open("codex");
		const r = await s.call("exec_command", {
			cmd: "read line; echo got-$line; sleep 0.3; echo E$((40+2)); exit 4",
			yield_time_ms: 300,
		});
		expect(out(r)).toMatch(/Process running with session ID \d+/);
		const sessionId = details(r).session_id as number;
		const written = await s.call("write_stdin", {
			session_id: sessionId,
			chars: "abc\n",
			yield_time_ms: 2000,
		});
		let all = out(written);
		if (!all.includes("exited"))
			all += out(await s.call("write_stdin", { session_id: sessionId, yield_time_ms: 20_000 }));
		expect(all).toContain("got-abc");
		expect(all).toContain("E42");
		expect(all).toContain("Process exited with code 4");
	}, 30_000);

	it("max_output_tokens cuts the middle of long output", async () => {
		const s = await open("codex");
		const r = await s.call("exec_command", { cmd: "seq 1 20000", max_output_tokens: 50 });
		const text = out(r);
		expect(text).toContain("Process exited with code 0");
		expect(text).toMatch(/^1$/m);
		expect(text).toMatch(/^20000$/m);
		expect(text).not.toMatch(/^10000$/m);
		expect(text).toContain("tokens cut");
	});
});

describe("local: handles against hostile commands", () => {
	it("a flood of output stays within keepBytes and maxSpillBytes; an old cursor past both is OUTPUT_DROPPED", async () => {
		const limits = { keepBytes: 64 * 1024, maxSpillBytes: 512 * 1024 };
		const s = await open("unified", limits);
		const r = await s.call("bash", { command: "yes flood-line", background: true });
		const id = details(r).process.id as number;
		// Well past both bounds.
		for (;;) {
			const seen = await s.call("process", { action: "read", id });
			if ((details(seen).process.outputBytes as number) > 4 * limits.maxSpillBytes) break;
			await new Promise((res) => setTimeout(res, 20));
		}
		const table = s.processes as unknown as { entries: Map<number, { log: { heldBytes: number } }> };
		expect(table.entries.get(id)?.log.heldBytes).toBeLessThanOrEqual(limits.keepBytes);
		const spilled = readdirSync(s.spill.dir)
			.filter((n) => n.startsWith("process-"))
			.reduce((n, f) => n + statSync(join(s.spill.dir, f)).size, 0);
		expect(spilled).toBeLessThanOrEqual(limits.maxSpillBytes);
		expect(spilled).toBeGreaterThan(limits.maxSpillBytes - 128 * 1024);
		// The spilled start is whole; a cursor past the spill and before memory is gone, by name.
		expect(out(await s.call("process", { action: "read", id, cursor: 0 }))).toMatch(
			/^flood-line\nflood-line\n/,
		);
		const lost = await s.call("process", { action: "read", id, cursor: limits.maxSpillBytes + 1000 });
		expect(lost.ok).toBe(false);
		if (!lost.ok) {
			expect(lost.error.code).toBe("OUTPUT_DROPPED");
			expect(lost.error.message).toContain("keepBytes");
			expect(lost.error.message).toContain("maxSpillBytes");
		}
		await s.call("process", { action: "kill", id });
	}, 30_000);

	it("a kill racing a pending wait ends the wait at once; stdin of a dead handle, a bad id and a bad signal answer clearly", async () => {
		const s = await open();
		const r = await s.call("bash", { command: "sleep 1000", background: true });
		const id = details(r).process.id as number;
		const waiting = s.call("process", { action: "wait", id, pattern: "never-printed", timeout: 600 });
		await new Promise((res) => setTimeout(res, 100));
		await s.call("process", { action: "kill", id });
		const waited = await waiting;
		expect(details(waited).process.state).toBe("killed");
		const write = await s.call("process", { action: "write", id, chars: "x" });
		expect(write.ok).toBe(false);
		const unknown = await s.call("process", { action: "read", id: 999 });
		expect(!unknown.ok && unknown.error.code).toBe("UNKNOWN_PROCESS");
		const r2 = await s.call("bash", { command: "sleep 1000", background: true });
		const bad = await s.call("process", { action: "signal", id: details(r2).process.id, signal: "SIGNOPE" });
		expect(!bad.ok && bad.error.code).toBe("INVALID_ARGS");
		const badPattern = await s.call("process", { action: "wait", id: details(r2).process.id, pattern: "(" });
		expect(!badPattern.ok && badPattern.error.code).toBe("INVALID_PATTERN");
	}, 30_000);

	it("SIGINT reaches the whole group; a handle that traps it keeps running", async () => {
		const s = await open();
		const r = await s.call("bash", {
			// `wait` is interrupted by a trapped signal at once; a foreground child would make bash
			// ignore a SIGINT that child did not die of (it may catch it before its exec).
			command: "trap 'echo got-int' INT; echo ready; while :; do sleep 1 & wait $!; done",
			background: true,
		});
		const id = details(r).process.id as number;
		const ready = await s.call("process", { action: "wait", id, pattern: "ready", timeout: 20 });
		await s.call("process", { action: "signal", id, signal: "INT" });
		// From the cursor before the signal: the signal's own answer may have shown the trap's line.
		const cursor = details(ready).cursor as number;
		const seen = await s.call("process", { action: "wait", id, cursor, pattern: "got-int", timeout: 20 });
		expect(out(seen)).toContain('matched "got-int"');
		expect(details(seen).process.state).toBe("running");
		await s.call("process", { action: "signal", id, signal: "SIGTERM" });
		const done = await s.call("process", { action: "wait", id, timeout: 20 });
		expect(details(done).process).toMatchObject({ state: "exited", signal: "SIGTERM" });
	}, 30_000);
});

/** Runs argv on this machine as a container's exec would: a backend without process handles. */
const execHere: ExecTransport = (argv, o) =>
	new Promise((resolve, reject) => {
		const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
		child.stdin.on("error", () => {});
		if (o.stdin instanceof Uint8Array) child.stdin.end(o.stdin);
		else if (o.stdin) o.stdin.pipe(child.stdin);
		else child.stdin.end();
		child.stdout.on("data", (c: Buffer) => o.onData?.(c, "stdout"));
		child.stderr.on("data", (c: Buffer) => o.onData?.(c, "stderr"));
		child.on("error", reject);
		child.on("close", (code) => resolve({ exitCode: code }));
	});

describe("a backend without process handles", () => {
	it("answers UNSUPPORTED, naming the backend, and starts nothing", async () => {
		const m = marker();
		for (const [profile, tool, args] of [
			["unified", "bash", { command: `sleep 1000; : ${m}`, background: true }],
			["unified", "bash", { command: `sleep 1000; : ${m}`, tty: true }],
			["codex", "exec_command", { cmd: `sleep 1000; : ${m}` }],
		] as const) {
			const s = t.keep(
				await Session.create({ root: t.dir, profile, backend: createExecBackend({ transport: execHere }) }),
			);
			const r = await s.call(tool, args);
			expect(r.ok).toBe(false);
			if (!r.ok) {
				expect(r.error.code).toBe("UNSUPPORTED");
				expect(r.error.message).toContain(s.backend.kind);
			}
			expect(processesWith(m)).toEqual([]);
		}
	});
});
