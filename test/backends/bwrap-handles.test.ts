/**
 * Process handles on bwrap: each runs in a sandbox of its own, whose PID namespace holds whatever
 * the command starts. A server started in the background is waited for, queried from another call
 * (with the network shared), its log read from a cursor, and killed with what it set loose; a
 * command that outruns its yield time is read later, and what it set loose ends with it (its
 * sandbox does); a REPL works through pipes inside the sandbox (a terminal is refused there); close leaves nothing. Real bwrap, real processes.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import { type CallResult, Session } from "../../src/session.js";
import { bwrapAvailable } from "../contract/backends.js";
import { processesWith } from "../fixtures/processes.js";

const available = await bwrapAvailable();
if (!available) console.log("bwrap-handles.test: skipped (bwrap cannot run here)");

let dir: string;
let m = "";
const sessions: Session[] = [];
beforeEach(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-bwrap-handles-")));
	m = `keelproc${randomBytes(5).toString("hex")}`;
});
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.close()));
	for (const line of processesWith(m)) process.kill(Number(line.split(" ")[0]), "SIGKILL");
	await rm(dir, { recursive: true, force: true });
});

async function open(network = false): Promise<Session> {
	const backend = createBwrapBackend({ roots: [dir], ...(network ? { network: true } : {}) });
	const s = await Session.create({ root: dir, backend, profile: "unified" });
	sessions.push(s);
	return s;
}

function out(r: CallResult): string {
	if (!r.ok) throw new Error(`call failed: ${r.error.code} ${r.error.message}`);
	return r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

function details(r: CallResult): Record<string, any> {
	if (!r.ok) throw new Error(`call failed: ${r.error.code} ${r.error.message}`);
	return r.details as Record<string, any>;
}

const SERVER = `require("http").createServer((q, r) => { console.log(q.method, q.url); r.end("hi " + q.url); }).listen(0, "127.0.0.1", function () { console.log("listening on port " + this.address().port); })`;

describe.skipIf(!available)("bwrap: process handles", () => {
	it("a background server: waited for, queried from another call, log read from a cursor, killed with what it set loose", async () => {
		const s = await open(true);
		const started = await s.call("bash", {
			command: `setsid sh -c 'sleep 1000; : ${m}' </dev/null >/dev/null 2>&1 & exec node -e '${SERVER}'`,
			background: true,
		});
		const id = details(started).process.id as number;
		const ready = await s.call("process", { action: "wait", id, pattern: "port (\\d+)", timeout: 20 });
		const port = Number(/port (\d+)/.exec(out(ready))?.[1]);
		expect(port).toBeGreaterThan(0);
		const cursor = details(ready).cursor as number;
		const page = await s.call("bash", {
			command: `node -e 'fetch("http://127.0.0.1:${port}/hello-${m}").then(r => r.text()).then(console.log)'`,
		});
		expect(out(page)).toContain(`hi /hello-${m}`);
		const log = await s.call("process", { action: "wait", id, cursor, pattern: `hello-${m}`, timeout: 20 });
		expect(out(log)).toContain(`GET /hello-${m}`);
		expect(out(log)).not.toContain(`port ${port}`);
		expect(processesWith(m).length).toBeGreaterThan(0); // bwrap's argv names it too
		const killed = await s.call("process", { action: "kill", id });
		expect(details(killed).process.state).toBe("killed");
		expect(processesWith(m)).toEqual([]);
	}, 30_000);

	it("a command past its yield time is read later; close leaves nothing", async () => {
		const s = await open();
		const r = await s.call("bash", {
			command: `setsid sh -c 'sleep 1000; : ${m}' </dev/null >/dev/null 2>&1 & echo A$((1+1)); sleep 1; echo B$((2+2))`,
			yield: 0.2,
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

	it("a Python REPL driven through pipes inside the sandbox; a terminal is refused there", async () => {
		const s = await open();
		// The sandbox is mounted from descriptors handed to bwrap; a pseudo-terminal's child cannot get them.
		const tty = await s.call("bash", { command: "python3 -q", tty: true });
		expect(tty.ok).toBe(false);
		if (!tty.ok) expect(tty.error.code).toBe("UNSUPPORTED");
		const r = await s.call("bash", { command: "python3 -i -q -u", background: true });
		const id = details(r).process.id as number;
		await s.call("process", { action: "wait", id, pattern: ">>> ", timeout: 20 });
		await s.call("process", { action: "write", id, chars: "print(6 * 7, 'x' * 3)\n" });
		const seen = await s.call("process", { action: "wait", id, cursor: 0, pattern: "42 xxx", timeout: 20 });
		expect(out(seen)).toContain("42 xxx");
	}, 30_000);
});
