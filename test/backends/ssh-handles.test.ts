/**
 * Process handles through the tools on the ssh backend (the command runner's runner_live.py on the
 * host): a server started in the background, waited for, queried, its log read from a cursor and
 * killed with what it set loose; stdin written; a Python REPL and a full-screen program in a
 * terminal; fifty at once against the bounds; and nothing left behind after a close, a cut
 * connection, or a command that kills the runner itself. The sshd is this machine, so the host's
 * process table is this one's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SshConnection } from "../../src/backend/ssh/connection.js";
import { createSshExec } from "../../src/backend/ssh/exec.js";
import { createSshFs } from "../../src/backend/ssh/fs.js";
import { createSshSearch } from "../../src/backend/ssh/search.js";
import { createSshProcess } from "../../src/backend/ssh/spawn.js";
import type { Backend } from "../../src/backend/types.js";
import type { ProcessLimits } from "../../src/procs/types.js";
import { Session } from "../../src/session.js";
import {
	details,
	gone,
	HTTP_SERVER,
	handleTests,
	out,
	processesWith,
	waitFor,
} from "../fixtures/processes.js";
import { pythonMissing } from "../fixtures/ssh-backend.js";
import { NO_RC_FILES, type Sshd, sshdMissing, sshOptions, startSshd } from "../fixtures/sshd.js";
import {
	expectReplAnswers,
	expectReplExits,
	expectYieldedCommandReadLater,
	type HandleRow,
	itBoundsFiftyHandles,
	itServesAndKillsAWebServer,
	itShowsAFullScreenProgram,
} from "../procs/handle-cases.js";

const missing = sshdMissing() ?? pythonMissing();
if (missing) console.warn(`skipping the ssh process handle tests: ${missing}`);

let sshd: Sshd;
const t = handleTests("sshproc");

beforeAll(async () => {
	if (!missing) sshd = await startSshd(NO_RC_FILES);
}, 60_000);
afterAll(async () => {
	await sshd?.stop();
});

/** The ssh backend as createSshBackend makes it, with its connection at hand (to cut it). */
function sshBackend(): { backend: Backend; conn: SshConnection } {
	const opts = sshOptions(sshd);
	const conn = new SshConnection(opts);
	const backend: Backend = {
		kind: "ssh",
		fs: createSshFs(conn, {}),
		exec: createSshExec(conn),
		search: createSshSearch(conn, {}),
		process: createSshProcess(conn, undefined),
		close: () => conn.close(),
	};
	return { backend, conn };
}

async function open(opts: { limits?: Partial<ProcessLimits>; profile?: "unified" | "codex" } = {}) {
	const { backend, conn } = sshBackend();
	const s = t.keep(
		await Session.create({
			root: t.dir,
			backend,
			profile: opts.profile ?? "unified",
			...(opts.limits ? { processLimits: opts.limits } : {}),
		}),
	);
	return { s, conn };
}

/** This file's row of the cases every backend passes (test/procs/handle-cases.ts). */
const ssh: HandleRow = {
	t,
	open: async (_m, limits) => (await open({ limits })).s,
	carrying: processesWith,
	timeoutMs: 90_000,
};

describe.skipIf(missing)("ssh: a web server under a process handle", () => {
	itServesAndKillsAWebServer({
		...ssh,
		server: (m) => `exec ${process.execPath} -e '${HTTP_SERVER}' ${m}`,
		fetch: (port, m) => ({
			command: `${process.execPath} -e 'fetch("http://127.0.0.1:${port}/hello-${m}").then(r => r.text()).then(console.log)'`,
			answer: `hi /hello-${m}`,
		}),
		logged: (m) => `GET /hello-${m}`,
		whileRunning: { exactly: 2 }, // the server and the setsid escapee, both on the host
		hostPid: false,
	});

	it("a foreground command past its yield time becomes a handle; stdin is written; SIGINT reaches the group", async () => {
		const { s } = await open();
		await expectYieldedCommandReadLater(s);

		const reader = await s.call("bash", {
			command: "echo ready; read a; echo got-$a; read b; echo got-$b; cat; echo eof",
			background: true,
		});
		const rid = details(reader).process.id as number;
		const start = details(
			await s.call("process", { action: "wait", id: rid, cursor: 0, pattern: "ready", timeout: 20 }),
		).cursor as number;
		await s.call("process", { action: "write", id: rid, chars: "one\n" });
		await s.call("process", { action: "write", id: rid, chars: "two\nthree\n", eof: true });
		const all = await s.call("process", {
			action: "wait",
			id: rid,
			cursor: start,
			pattern: "eof",
			timeout: 20,
		});
		expect(out(all)).toMatch(/got-one\n(.|\n)*got-two\n(.|\n)*three\neof/);
		const after = await s.call("process", { action: "write", id: rid, chars: "x" });
		expect(after.ok).toBe(false);

		const trap = await s.call("bash", {
			command: "trap 'echo got-int' INT; echo ready; while :; do sleep 1 & wait $!; done",
			background: true,
		});
		const tid = details(trap).process.id as number;
		const cursor = details(
			await s.call("process", { action: "wait", id: tid, cursor: 0, pattern: "ready", timeout: 20 }),
		).cursor;
		await s.call("process", { action: "signal", id: tid, signal: "INT" });
		const seen = await s.call("process", {
			action: "wait",
			id: tid,
			cursor,
			pattern: "got-int",
			timeout: 20,
		});
		// The trap ran: SIGINT is not left ignored by whatever started the runner (sshd's shell).
		expect(out(seen)).toContain('matched "got-int"');
		expect(details(seen).process.state).toBe("running");
		await s.call("process", { action: "signal", id: tid, signal: "SIGTERM" });
		const ended = await s.call("process", { action: "wait", id: tid, timeout: 20 });
		expect(details(ended).process).toMatchObject({ state: "exited", signal: "SIGTERM" });
	}, 40_000);
});

describe.skipIf(missing)("ssh: terminal mode (the host's pty)", () => {
	it("drives a Python REPL through stdin and reads its output as plain text", async () => {
		const { s } = await open();
		const { id, answer } = await expectReplAnswers(s);
		// A terminal: isatty, and the size asked for.
		// The write's answer may already hold the reply: from its cursor on, both together.
		const before = details(answer).cursor as number;
		await s.call("process", {
			action: "write",
			id,
			chars: "import os, sys; print('tty', sys.stdin.isatty(), os.get_terminal_size())\n",
		});
		const tty = await s.call("process", {
			action: "wait",
			id,
			cursor: before,
			pattern: "columns=\\d+",
			timeout: 20,
		});
		expect(out(tty)).toMatch(/tty True os\.terminal_size\(columns=\d+, lines=\d+\)/);
		await expectReplExits(s, id);
	}, 40_000);

	itShowsAFullScreenProgram(ssh);
});

describe.skipIf(missing)("ssh: bounds", () => {
	itBoundsFiftyHandles({ ...ssh, onePerHandle: true, closeWaits: false });
});

describe.skipIf(missing)("ssh: nothing left behind", () => {
	async function startAll(s: Session, m: string) {
		await s.call("bash", { command: `sleep 1000; : ${m}-bg`, background: true });
		await s.call("bash", {
			command: `setsid sh -c 'sleep 1000; : ${m}-loose' & sleep 1000; : ${m}-yield`,
			yield: 0.1,
		});
		await s.call("bash", { command: `sleep 1000; : ${m}-tty`, tty: true });
		const all = () => ["bg", "loose", "yield", "tty"].every((k) => processesWith(`${m}-${k}`).length > 0);
		expect(await waitFor(all, 15_000), processesWith(m).join("\n")).toBe(true);
	}

	for (const how of ["the sshd side killed", "the client socket destroyed"] as const) {
		it(`${how}: the handles and what they set loose die on the host; the handles end`, async () => {
			const { s, conn } = await open();
			const m = t.marker();
			await startAll(s, m);
			if (how === "the sshd side killed") expect(await sshd.dropConnections()).toBeGreaterThan(0);
			else (await conn.get()).client.destroy();
			expect(await gone(m), processesWith(m).join("\n")).toBe(true);
			// keel sees the link go (its socket's close) when it sees it: then every handle has ended.
			let listed = "";
			const ended = async () => {
				listed = out(await s.call("process", { action: "list" }));
				return !/running/.test(listed);
			};
			for (let i = 0; i < 100 && !(await ended()); i++) await new Promise((r) => setTimeout(r, 100));
			expect(listed).toMatch(/process 1 .*exited \(SIGKILL\)/);
			expect(listed).not.toMatch(/running/);
			// The next handle reconnects.
			const r = await s.call("bash", { command: "echo again", yield: 10 });
			expect(out(r)).toContain("again");
		}, 40_000);
	}

	it("a command that kills the runner: its handles' leftovers are killed by the next runner", async () => {
		const { s } = await open();
		const m = t.marker();
		await startAll(s, m);
		// The runner is the parent of every handle's leader.
		const killer = await s.call("bash", { command: "kill -9 $PPID" });
		expect(killer.ok).toBe(false);
		expect(processesWith(`${m}-bg`).length).toBe(1);
		const next = await s.call("bash", { command: "echo next" });
		expect(out(next)).toContain("next");
		expect(await gone(m), processesWith(m).join("\n")).toBe(true);
	}, 40_000);

	it("the session's close kills them all", async () => {
		const { s } = await open();
		const m = t.marker();
		await startAll(s, m);
		await s.close();
		expect(processesWith(m)).toEqual([]);
	}, 40_000);
});

describe.skipIf(missing)("ssh: the codex profile", () => {
	it("exec_command past its yield time, then write_stdin to completion", async () => {
		const { s } = await open({ profile: "codex" });
		const r = await s.call("exec_command", {
			cmd: "read line; echo got-$line; sleep 0.3; echo E$((40+2)); exit 4",
			yield_time_ms: 300,
		});
		expect(out(r)).toMatch(/Process running with session ID \d+/);
		const sessionId = details(r).session_id as number;
		let all = out(
			await s.call("write_stdin", { session_id: sessionId, chars: "abc\n", yield_time_ms: 2000 }),
		);
		if (!all.includes("exited"))
			all += out(await s.call("write_stdin", { session_id: sessionId, yield_time_ms: 20_000 }));
		expect(all).toContain("got-abc");
		expect(all).toContain("Process exited with code 4");
	}, 30_000);
});
