/**
 * Process handles through the tools on the podman backend (the command runner inside the container,
 * on an `exec -i` of its own): a server that prints "ready" waited for, queried over stdin, its
 * output read from a cursor, killed with a setsid escapee; a web server waited for and queried
 * from another call; a foreground command past its yield time read later; a Python REPL and a
 * full-screen program in the container's own pseudo-terminal; fifty started at once against the
 * bounds; and nothing left after the session's close or after the runner's exec client dies (a
 * dropped link). The host's process table shows the container's processes.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createContainerBackend } from "../../src/backend/container/index.js";
import type { ProcessLimits } from "../../src/procs/table.js";
import { Session } from "../../src/session.js";
import { podmanContainer, podmanMissing } from "../fixtures/podman.js";
import {
	details,
	expectDrawnScreen,
	handleTests,
	killMarked,
	out,
	placeDrawScreen,
	processesWith,
	waitFor,
} from "../fixtures/processes.js";

const why = podmanMissing();
if (why) console.warn(`container process handle tests skipped: ${why}`);

const t = handleTests("ctproc");

/** A session on the test container; its exec clients carry `m` on their command line. */
async function open(m: string, limits?: Partial<ProcessLimits>): Promise<Session> {
	const name = podmanContainer();
	const backend = createContainerBackend({
		kind: "podman",
		prefix: ["podman", "exec", "-i", "-e", `KEEL_T=${m}-client`, "--", name],
		label: `podman container ${name}`,
	});
	return t.keep(
		await Session.create({
			root: t.dir,
			backend,
			profile: "unified",
			...(limits ? { processLimits: limits } : {}),
		}),
	);
}

/** Processes carrying `m` in the container (not the exec clients on this side). */
const inside = (m: string) => processesWith(m).filter((l) => !l.includes("-client"));

/** Reads lines on stdin and answers each, after saying it is ready. */
const SERVER =
	"import sys\nprint('ready', flush=True)\nfor line in sys.stdin:\n    print('answer-' + line.strip(), flush=True)\n";

describe.skipIf(why !== undefined)("podman: process handles", { timeout: 60_000 }, () => {
	it("a server waited for, queried over stdin, read from a cursor, and killed with what it set loose", async () => {
		const m = t.marker();
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
		expect(inside(m).length).toBe(2);
		const killed = await s.call("process", { action: "kill", id });
		expect(details(killed).process.state).toBe("killed");
		expect(inside(m)).toEqual([]);
	});

	it("a web server: waited for, queried from another call, its log read from a cursor, killed", async () => {
		const m = t.marker();
		const s = await open(m);
		const started = await s.call("bash", {
			command: `setsid sh -c 'sleep 1000; : ${m}' </dev/null >/dev/null 2>&1 & exec python3 -u -m http.server 0 --bind 127.0.0.1 2>&1`,
			background: true,
		});
		const id = details(started).process.id as number;
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
		const page = await s.call("bash", {
			command: `python3 -c 'import urllib.request as u; print("status", u.urlopen("http://127.0.0.1:${port}/?hello-${m}").status)'`,
		});
		expect(out(page)).toContain("status 200");
		const log = await s.call("process", { action: "wait", id, cursor, pattern: `hello-${m}`, timeout: 20 });
		expect(out(log)).toContain(`"GET /?hello-${m} HTTP/1.1" 200`);
		expect(out(log)).not.toContain(`port ${port}`);
		const killed = await s.call("process", { action: "kill", id });
		expect(details(killed).process.state).toBe("killed");
		expect(inside(m)).toEqual([]);
	});

	it("a foreground command past its yield time becomes a handle, and its later output is read", async () => {
		const s = await open(t.marker());
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
	});

	it("gives a full-screen program's current screen in the container's terminal, not its escapes", async () => {
		const m = t.marker();
		const s = await open(m);
		await placeDrawScreen(t.dir);
		const r = await s.call("bash", { command: `python3 draw.py ${m}`, tty: true });
		const id = details(r).process.id as number;
		expectDrawnScreen(
			await s.call("process", { action: "wait", id, cursor: 0, pattern: "WORLD", timeout: 20 }),
		);
		await s.call("process", { action: "kill", id });
		expect(inside(m)).toEqual([]);
	});

	it("fifty at once: the live limit answers PROCESS_LIMIT by name, output stays within its bounds, close leaves none", async () => {
		const limits = { maxLive: 40, keepBytes: 4096, maxSpillBytes: 64 * 1024 };
		const m = t.marker();
		const s = await open(m, limits);
		// Each prints 20000 bytes, then lingers.
		const command = `head -c 20000 /dev/zero | tr '\\0' x; echo; sleep 1000; : ${m}`;
		const results = await Promise.all(
			Array.from({ length: 50 }, () => s.call("bash", { command, background: true })),
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
		for (const id of ids) expect(table.entries.get(id)?.log.heldBytes).toBeLessThanOrEqual(limits.keepBytes);
		const spilled = readdirSync(s.spill.dir)
			.filter((n) => n.startsWith("process-"))
			.reduce((n, f) => n + statSync(join(s.spill.dir, f)).size, 0);
		expect(spilled).toBeLessThanOrEqual(limits.maxSpillBytes);
		// Past the spill budget, a read by cursor of what was dropped names the limits.
		const first = await Promise.all(ids.map((id) => s.call("process", { action: "read", id, cursor: 0 })));
		const dropped = first.filter((r) => !r.ok);
		expect(dropped.length).toBeGreaterThan(0);
		for (const r of dropped) if (!r.ok) expect(r.error.message).toContain("maxSpillBytes");
		expect(await waitFor(() => inside(m).length === 40, 15_000), inside(m).length.toString()).toBe(true);
		await s.close();
		expect(await waitFor(() => inside(m).length === 0, 15_000), inside(m).join("\n")).toBe(true);
	});

	it("a Python REPL in the container's pseudo-terminal", async () => {
		const s = await open(t.marker());
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
			const m = t.marker();
			const s = await open(m);
			await s.call("bash", {
				command: `setsid sh -c 'sleep 1000; : ${m}' & sleep 1000; : ${m}`,
				background: true,
			});
			await s.call("bash", { command: `sleep 1000; : ${m}`, tty: true });
			expect(await waitFor(() => inside(m).length === 3, 15_000), processesWith(m).join("\n")).toBe(true);
			if (how === "close") await s.close();
			else {
				// Every exec client of this session (the runner's among them): the link to the container gone.
				killMarked(`${m}-client`);
			}
			expect(await waitFor(() => inside(m).length === 0, 15_000), inside(m).join("\n")).toBe(true);
		}
	});
});
