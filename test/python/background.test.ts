/**
 * The background lane: a job running past the threshold (shortened here) returns a handle,
 * keeps its worker, and reports its end to its own session only; the session can list, wait for
 * and cancel it. And no global lock: a long Python job never delays another session's read or edit.
 */
import { access, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CallResult } from "../../src/session.js";
import { endsOf, NO_PYTHON, nextEvent, pySessions, textOf } from "./helpers.js";

const make = pySessions();

const SHORT = { python: { backgroundAfterMs: 300 } };

/** Python that blocks until the test creates `go` (no wall-clock race in the assertions). */
const WAIT_FOR_GO =
	"import os, time\nopen('started', 'w').close()\nwhile not os.path.exists('go'):\n    time.sleep(0.01)\nprint('finished')\n'done'";

function details(r: CallResult): Record<string, unknown> {
	return (r.ok ? r.details : r.error.details) as Record<string, unknown>;
}

async function exists(path: string): Promise<boolean> {
	return access(path).then(
		() => true,
		() => false,
	);
}

describe.skipIf(NO_PYTHON)("python background lane", () => {
	it("a job past the threshold returns a handle; wait gives its result; only its session hears of it", async () => {
		const [a, b] = await Promise.all([make(SHORT), make(SHORT)]);
		const r = await a.session.call("python", { code: WAIT_FOR_GO });
		expect(r.ok).toBe(true);
		expect(details(r)).toMatchObject({ status: "running", lane: "background" });
		const jobId = details(r).jobId as string;
		expect(textOf(r)).toContain(`python_jobs with {"action": "wait", "jobId": "${jobId}"}`);
		expect(a.events.map((e) => e.type)).toEqual(["start", "background"]);

		const list = await a.session.call("python_jobs", { action: "list" });
		expect(textOf(list)).toMatch(new RegExp(`^${jobId}  running  background`));
		const status = await a.session.call("python_jobs", { action: "status", jobId });
		expect(details(status)).toMatchObject({ status: "running" });
		const shortWait = await a.session.call("python_jobs", { action: "wait", jobId, timeout: 0.05 });
		expect(details(shortWait)).toMatchObject({ status: "running" });

		// The worker is held: a new call is refused at once, naming the job.
		const busy = await a.session.call("python", { code: "1" });
		expect(!busy.ok && busy.error.code).toBe("BACKEND_UNAVAILABLE");
		expect(!busy.ok && busy.error.message).toContain(`busy with background job ${jobId}`);
		// Another session is not involved, and cannot address the job.
		expect(textOf(await b.session.call("python", { code: "2" }))).toBe("2");
		const foreign = await b.session.call("python_jobs", { action: "wait", jobId });
		expect(!foreign.ok && foreign.error.code).toBe("NOT_FOUND");

		const ended = nextEvent(a, (e) => e.type === "end" && e.job.jobId === jobId);
		const waited = a.session.call("python_jobs", { action: "wait", jobId });
		await writeFile(join(a.dir, "go"), "");
		const w = await waited;
		expect(textOf(w)).toBe("finished\n\n[result]\n'done'");
		expect(details(w)).toMatchObject({ jobId, background: true, exitState: "ok" });
		const end = await ended;
		expect(end.type === "end" && end.outcome.background).toBe(true);
		expect(endsOf(a.events, jobId)).toHaveLength(1);
		expect(b.events.some((e) => e.job.jobId === jobId)).toBe(false);

		// The job kept its worker and its state; the session continues on it.
		expect(textOf(await a.session.call("python", { code: "'started' in os.listdir()" }))).toBe("True");
		expect(a.python.stats.spawns).toBe(1);
		// Finished background jobs stay addressable.
		const again = await a.session.call("python_jobs", { action: "status", jobId });
		expect(textOf(again)).toBe("finished\n\n[result]\n'done'");
	});

	it("cancel stops a background job once, the worker restarts, and the next call says state was lost", async () => {
		const py = await make(SHORT);
		await py.session.call("python", { code: "kept = 1" });
		const r = await py.session.call("python", { code: "import time\ntime.sleep(60)" });
		const jobId = details(r).jobId as string;
		const cancel = await py.session.call("python_jobs", { action: "cancel", jobId });
		expect(textOf(cancel)).toMatch(/was cancelled; the interpreter was restarted/);
		const status = await py.session.call("python_jobs", { action: "status", jobId });
		expect(!status.ok && status.error.code).toBe("ABORTED");
		const cancelAgain = await py.session.call("python_jobs", { action: "cancel", jobId });
		expect(textOf(cancelAgain)).toMatch(/had already finished \(cancelled\)/);
		expect(endsOf(py.events, jobId)).toHaveLength(1);
		const next = await py.session.call("python", { code: "'kept' in globals()" });
		expect(textOf(next)).toMatch(/restarted before this call[\s\S]*False$/);
		expect(details(next).stateReset).toBe(true);
	});

	it("a background job still obeys its timeout", async () => {
		const py = await make(SHORT);
		const r = await py.session.call("python", { code: "import time\ntime.sleep(60)", timeout: 0.8 });
		const jobId = details(r).jobId as string;
		const w = await py.session.call("python_jobs", { action: "wait", jobId, timeout: 10 });
		expect(!w.ok && w.error.code).toBe("TIMEOUT");
		expect(endsOf(py.events, jobId)).toHaveLength(1);
	});

	it("calls queue behind a foreground job and run in order; a call made while a job holds the worker in the background is refused", async () => {
		const py = await make();
		const [x, y, z] = await Promise.all([
			py.session.call("python", { code: "import time\ntime.sleep(0.2)\norder = ['x']" }),
			py.session.call("python", { code: "order.append('y')" }),
			py.session.call("python", { code: "order" }),
		]);
		expect([x, y].map((r) => (r.ok ? "ok" : r.error.message))).toEqual(["ok", "ok"]);
		expect(textOf(z)).toBe("['x', 'y']");

		const bg = await make(SHORT);
		const calls = [
			bg.session.call("python", { code: WAIT_FOR_GO }),
			bg.session.call("python", { code: "print('queued')" }),
		];
		const [first, second] = await Promise.all(calls);
		expect(details(first)).toMatchObject({ status: "running" });
		expect(!second.ok && second.error.code).toBe("BACKEND_UNAVAILABLE");
		// Calls reach the worker in call order: the second arrives once the first holds the worker in
		// the background, and is refused naming that job (no job is created for it).
		expect(!second.ok && second.error.details).toMatchObject({ busyJobId: details(first).jobId });
		await writeFile(join(bg.dir, "go"), "");
		await bg.python.wait(details(first).jobId as string);
		// Every job ended exactly once.
		const ends = bg.events.filter((e) => e.type === "end");
		expect(new Set(ends.map((e) => e.job.jobId)).size).toBe(ends.length);
		expect(ends).toHaveLength(1);
	});

	it("no global lock: another session reads and edits while a long Python job runs", async () => {
		const [a, b] = await Promise.all([make(), make()]);
		await writeFile(join(b.dir, "f.txt"), "alpha\nbeta\n");
		const order: string[] = [];
		const pyCall = a.session.call("python", { code: WAIT_FOR_GO }).then((r) => {
			order.push("python done");
			return r;
		});
		await nextEvent(a, (e) => e.type === "start");
		while (!(await exists(join(a.dir, "started")))) await new Promise((r) => setTimeout(r, 5));

		const read = await b.session.call("read", { path: "f.txt" });
		order.push("read done");
		const edit = await b.session.call("edit", {
			path: "f.txt",
			edits: [{ oldText: "beta", newText: "gamma" }],
		});
		order.push("edit done");
		// The same session is not blocked either: Python jobs take no mutation lock.
		await writeFile(join(a.dir, "g.txt"), "one\n");
		const ownRead = await a.session.call("read", { path: "g.txt" });
		order.push("own read done");
		expect(read.ok && edit.ok && ownRead.ok).toBe(true);
		expect(a.python.list()).toEqual([expect.objectContaining({ status: "running", lane: "foreground" })]);

		await writeFile(join(a.dir, "go"), "");
		const r = await pyCall;
		expect(textOf(r)).toBe("finished\n\n[result]\n'done'");
		expect(order).toEqual(["read done", "edit done", "own read done", "python done"]);
	});
});
