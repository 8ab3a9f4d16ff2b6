/**
 * The fault matrix: timeout, abort, a malformed frame, os._exit, a MemoryError under a memory
 * limit, and disposal with a job running. Each gives exactly one terminal event, the worker's
 * process group is gone, and the next call succeeds on a fresh worker and says state was lost.
 */
import { describe, expect, it } from "vitest";
import type { CallResult } from "../../src/session.js";
import {
	alive,
	endsOf,
	NO_PYTHON,
	nextEvent,
	type PySession,
	pySession,
	pySessions,
	textOf,
} from "./helpers.js";

const make = pySessions();

const settle = () => new Promise((r) => setTimeout(r, 250));

async function waitDead(pid: number): Promise<boolean> {
	for (let i = 0; i < 100; i++) {
		if (!alive(pid)) return true;
		await new Promise((r) => setTimeout(r, 20));
	}
	return false;
}

function details(r: CallResult): Record<string, unknown> {
	return (r.ok ? r.details : r.error.details) as Record<string, unknown>;
}

/** Set state, run the faulty call, then check the single terminal event and the recovery. */
async function faultCase(py: PySession, faulty: () => Promise<CallResult>) {
	await py.session.call("python", { code: "state = 'before'" });
	const oldPid = py.python.pid!;
	const r = await faulty();
	expect(r.ok).toBe(false);
	const jobId = details(r).jobId as string;
	await settle(); // anything late (the killed worker's exit, pipes closing) has had its chance
	const ends = endsOf(py.events, jobId);
	expect(ends).toHaveLength(1);
	expect(await waitDead(oldPid)).toBe(true);
	const next = await py.session.call("python", { code: "print('alive'); 'state' in globals()" });
	expect(next.ok).toBe(true);
	expect(textOf(next)).toMatch(
		/^\[The Python worker was restarted before this call \(.+\); variables and imports from earlier calls are gone\.\]\n\nalive\n\n\[result\]\nFalse$/,
	);
	expect(details(next)).toMatchObject({ stateReset: true });
	expect(py.python.pid).not.toBe(oldPid);
	// Told once: the call after that is a plain one.
	const again = await py.session.call("python", { code: "1" });
	expect(details(again).stateReset).toBe(false);
	return { r, end: ends[0] };
}

describe.skipIf(NO_PYTHON)("python fault matrix", () => {
	it("timeout: TIMEOUT, the whole process group killed, one terminal event", async () => {
		const py = await make();
		let childPid = 0;
		const { r, end } = await faultCase(py, async () => {
			const res = await py.session.call("python", {
				code: "import subprocess, time\np = subprocess.Popen(['sleep', '30'])\nprint(p.pid, flush=True)\ntime.sleep(30)",
				timeout: 0.5,
			});
			childPid = Number(/^(\d+)\n/.exec(textOf(res))?.[1]);
			return res;
		});
		expect(!r.ok && r.error.code).toBe("TIMEOUT");
		expect(!r.ok && r.error.message).toMatch(/timed out after 0.5 s/);
		expect(end.type === "end" && end.outcome.kind).toBe("timeout");
		expect(childPid).toBeGreaterThan(0);
		expect(await waitDead(childPid)).toBe(true);
	});

	it("abort (AbortSignal): ABORTED, one terminal event", async () => {
		const py = await make();
		const { r, end } = await faultCase(py, async () => {
			const ac = new AbortController();
			const call = py.session.call("python", { code: "import time\ntime.sleep(30)" }, { signal: ac.signal });
			await nextEvent(py, (e) => e.type === "start" && e.job.label.startsWith("import time"));
			ac.abort();
			return call;
		});
		expect(!r.ok && r.error.code).toBe("ABORTED");
		expect(end.type === "end" && end.outcome).toMatchObject({ kind: "abort", exitState: "aborted" });
	});

	it("a malformed frame (garbage on the protocol fd): COMMAND_FAILED, protocol-error", async () => {
		const py = await make();
		const { r, end } = await faultCase(py, () =>
			py.session.call("python", {
				code: "import os, time\nos.write(4, b'\\x00\\x00\\x00\\x05hello')\ntime.sleep(30)",
			}),
		);
		expect(!r.ok && r.error.code).toBe("COMMAND_FAILED");
		expect(!r.ok && r.error.message).toMatch(
			/protocol stream was corrupted \(frame of 5 bytes is not JSON\)/,
		);
		expect(end.type === "end" && end.outcome).toMatchObject({ kind: "error", exitState: "protocol-error" });
	});

	it("an oversized frame length is corruption too", async () => {
		const py = await make();
		const { end } = await faultCase(py, () =>
			py.session.call("python", {
				code: "import os, time\nos.write(4, b'\\xff\\xff\\xff\\xff')\ntime.sleep(30)",
			}),
		);
		expect(end.type === "end" && end.outcome.exitState).toBe("protocol-error");
	});

	it("os._exit(3): COMMAND_FAILED naming the exit code, one terminal event", async () => {
		const py = await make();
		const { r, end } = await faultCase(py, () =>
			py.session.call("python", { code: "import os\nprint('bye', flush=True)\nos._exit(3)" }),
		);
		expect(!r.ok && r.error.code).toBe("COMMAND_FAILED");
		expect(!r.ok && r.error.message).toMatch(/^bye\n\nThe Python worker exited with code 3/);
		expect(end.type === "end" && end.outcome).toMatchObject({
			kind: "error",
			exitState: "crashed",
			exitCode: 3,
		});
	});

	it("a MemoryError from an allocation bomb under the memory limit resets the worker", async () => {
		const py = await make({ python: { memoryLimitBytes: 512 * 1024 * 1024 } });
		const { r, end } = await faultCase(py, () =>
			py.session.call("python", { code: "bomb = bytearray(8 * 1024 ** 3)" }),
		);
		expect(!r.ok && r.error.code).toBe("COMMAND_FAILED");
		expect(!r.ok && r.error.message).toMatch(/MemoryError[\s\S]*ran out of memory/);
		expect(end.type === "end" && end.outcome).toMatchObject({ kind: "error", exitState: "memory" });
		expect(details(r).exception).toMatchObject({ type: "MemoryError" });
	});

	it("a signal killing the worker (SIGKILL from outside) is a crash", async () => {
		const py = await make();
		const { end } = await faultCase(py, () =>
			py.session.call("python", { code: "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)" }),
		);
		expect(end.type === "end" && end.outcome).toMatchObject({ exitState: "crashed", signal: "SIGKILL" });
	});

	it("closing the protocol fd from user code: the worker dies, the job ends once", async () => {
		const py = await make();
		const { end } = await faultCase(py, () => py.session.call("python", { code: "import os\nos.close(4)" }));
		expect(end.type === "end" && end.outcome).toMatchObject({ exitState: "crashed", exitCode: 70 });
	});

	it("disposal with a job running: the job is aborted once, the worker killed, a new session works", async () => {
		const py = await pySession();
		await py.session.call("python", { code: "x = 1" });
		const pid = py.python.pid!;
		const call = py.session.call("python", { code: "import time\ntime.sleep(30)" });
		const started = await nextEvent(py, (e) => e.type === "start" && e.job.label.startsWith("import time"));
		await py.dispose();
		const r = await call;
		expect(!r.ok && r.error.code).toBe("ABORTED");
		await settle();
		const ends = endsOf(py.events, started.job.jobId);
		expect(ends).toHaveLength(1);
		expect(ends[0].type === "end" && ends[0].outcome).toMatchObject({ kind: "abort", exitState: "closed" });
		expect(alive(pid)).toBe(false);
		const after = await py.session.call("python", { code: "1" });
		expect(!after.ok && after.error.code).toBe("BACKEND_UNAVAILABLE");
		const fresh = await make();
		expect(textOf(await fresh.session.call("python", { code: "1 + 1" }))).toBe("2");
	});

	it("close() is idempotent and a closed coordinator refuses work without starting a worker", async () => {
		const py = await make();
		await py.python.close();
		await py.python.close();
		const r = await py.session.call("python", { code: "1" });
		expect(!r.ok && r.error.code).toBe("BACKEND_UNAVAILABLE");
		expect(py.python.stats.spawns).toBe(0);
	});
});
