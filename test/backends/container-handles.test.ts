import { describe, expect, it } from "vitest";
import { createContainerBackend } from "../../src/backend/container/index.js";
import type { ProcessLimits } from "../../src/procs/types.js";
import { Session } from "../../src/session.js";
import { podmanContainer, podmanMissing } from "../fixtures/podman.js";
import { details, handleTests, killMarked, out, processesWith, waitFor } from "../fixtures/processes.js";
import {
	expectReplExits,
	type HandleRow,
	itBoundsFiftyHandles,
	itReadsAYieldedCommandLater,
	itServesAndKillsAWebServer,
	itShowsAFullScreenProgram,
} from "../procs/handle-cases.js";

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

/** This file's row of the cases every backend passes (test/procs/handle-cases.ts). */
const podman: HandleRow = { t, open, carrying: inside, timeoutMs: 60_000 };

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

	itServesAndKillsAWebServer({
		...podman,
		server: () => "exec python3 -u -m http.server 0 --bind 127.0.0.1 2>&1",
		fetch: (port, m) => ({
			command: `python3 -c 'import urllib.request as u; print("status", u.urlopen("http://127.0.0.1:${port}/?hello-${m}").status)'`,
			answer: "status 200",
		}),
		logged: (m) => `"GET /?hello-${m} HTTP/1.1" 200`,
		hostPid: false,
	});

	itReadsAYieldedCommandLater(podman);

	itShowsAFullScreenProgram(podman);

	itBoundsFiftyHandles({ ...podman, onePerHandle: true, closeWaits: false });

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
		await expectReplExits(s, id);
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
