/**
 * Process handles through the tools on the podman backend (the command runner inside the container,
 * on an `exec -i` of its own): a server that prints "ready" waited for, queried over stdin, its
 * output read from a cursor, killed with a setsid escapee; a Python REPL in the container's own
 * pseudo-terminal; and nothing left after the session's close or after the runner's exec client
 * dies (a dropped link). The host's process table shows the container's processes.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createContainerBackend } from "../../src/backend/container/index.js";
import { type CallResult, Session } from "../../src/session.js";
import { podmanContainer, podmanMissing } from "../fixtures/podman.js";
import { processesWith, waitFor } from "../fixtures/processes.js";

const why = podmanMissing();
if (why) console.warn(`container process handle tests skipped: ${why}`);

let dir: string;
const sessions: Session[] = [];
const markers: string[] = [];

beforeEach(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-container-handles-")));
});
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.close()));
	for (const m of markers.splice(0))
		for (const line of processesWith(m)) process.kill(Number(line.split(" ")[0]), "SIGKILL");
	await rm(dir, { recursive: true, force: true });
});

function marker(): string {
	const m = `keelctproc${randomBytes(5).toString("hex")}`;
	markers.push(m);
	return m;
}

/** A session on the test container; its exec clients carry `m` on their command line. */
async function open(m: string): Promise<Session> {
	const name = podmanContainer();
	const backend = createContainerBackend({
		kind: "podman",
		prefix: ["podman", "exec", "-i", "-e", `KEEL_T=${m}-client`, "--", name],
		label: `podman container ${name}`,
	});
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

/** Reads lines on stdin and answers each, after saying it is ready. */
const SERVER =
	"import sys\nprint('ready', flush=True)\nfor line in sys.stdin:\n    print('answer-' + line.strip(), flush=True)\n";

describe.skipIf(why !== undefined)("podman: process handles", { timeout: 60_000 }, () => {
	it("a server waited for, queried over stdin, read from a cursor, and killed with what it set loose", async () => {
		const m = marker();
		const s = await open(m);
		const started = await s.call("bash", {
			command: `setsid sh -c 'sleep 1000; : ${m}' </dev/null >/dev/null 2>&1 & exec python3 -c "${SERVER}" ${m}`,
			background: true,
		});
		const id = details(started).process.id as number;
		const ready = await s.call("process", { action: "wait", id, cursor: 0, pattern: "ready", timeout: 20 });
		const cursor = details(ready).cursor as number;
		await s.call("process", { action: "write", id, chars: `q-${m}\n` });
		const answer = await s.call("process", {
			action: "wait",
			id,
			cursor,
			pattern: `answer-q-${m}`,
			timeout: 20,
		});
		// The output after the cursor (the status line after it quotes the command).
		const printed = out(answer).split("\n[process ")[0];
		expect(printed).toBe(`answer-q-${m}\n`);
		expect(processesWith(m).filter((l) => !l.includes("-client")).length).toBe(2);
		const killed = await s.call("process", { action: "kill", id });
		expect(details(killed).process.state).toBe("killed");
		expect(processesWith(m).filter((l) => !l.includes("-client"))).toEqual([]);
	});

	it("a Python REPL in the container's pseudo-terminal", async () => {
		const s = await open(marker());
		const r = await s.call("bash", { command: "python3 -q", tty: true });
		const id = details(r).process.id as number;
		const prompt = await s.call("process", { action: "wait", id, cursor: 0, pattern: ">>> ", timeout: 20 });
		const cursor = details(prompt).cursor as number;
		await s.call("process", { action: "write", id, chars: "import sys; print(6 * 7, sys.stdin.isatty())\n" });
		const seen = await s.call("process", { action: "wait", id, cursor, pattern: "42 True", timeout: 20 });
		expect(out(seen)).toContain("42 True");
		expect(out(seen)).not.toMatch(/\x1b/);
		await s.call("process", { action: "write", id, chars: "exit()\n" });
		const end = await s.call("process", { action: "wait", id, timeout: 20 });
		expect(details(end).process).toMatchObject({ state: "exited", exitCode: 0 });
	});

	it("the session's close, and a dead exec client, leave nothing in the container", async () => {
		for (const how of ["close", "client killed"] as const) {
			const m = marker();
			const s = await open(m);
			await s.call("bash", {
				command: `setsid sh -c 'sleep 1000; : ${m}' & sleep 1000; : ${m}`,
				background: true,
			});
			await s.call("bash", { command: `sleep 1000; : ${m}`, tty: true });
			const inside = () => processesWith(m).filter((l) => !l.includes("-client"));
			expect(await waitFor(() => inside().length === 3, 15_000), processesWith(m).join("\n")).toBe(true);
			if (how === "close") await s.close();
			else {
				// Every exec client of this session (the runner's among them): the link to the container gone.
				for (const line of processesWith(`${m}-client`)) process.kill(Number(line.split(" ")[0]), "SIGKILL");
			}
			expect(await waitFor(() => inside().length === 0, 15_000), inside().join("\n")).toBe(true);
		}
	});
});
