/**
 * Preflight before any code is accepted: the backend, cwd, interpreter, argument shape
 * and script are checked before the coordinator sees the code; a refused call starts no worker.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { CallResult } from "../../src/session.js";
import { NO_PYTHON, type PySession, pySessions, textOf } from "./helpers.js";

const make = pySessions();

function codeOf(r: CallResult): string | undefined {
	return r.ok ? undefined : r.error.code;
}

function expectUntouched(py: PySession) {
	expect(py.python.stats).toEqual({ spawns: 0, jobsSent: 0 });
	expect(py.python.pid).toBeUndefined();
	expect(py.events).toEqual([]);
}

describe.skipIf(NO_PYTHON)("python preflight", () => {
	it("an invalid cwd fails before the code is looked at, and no worker is started or asked", async () => {
		const py = await make();
		await writeFile(join(py.dir, "file.txt"), "x");
		const missing = await py.session.call("python", { code: "print(1)", cwd: "nope" });
		expect(codeOf(missing)).toBe("NOT_FOUND");
		expect(!missing.ok && missing.error.message).toMatch(/cwd nope does not exist/);
		expect(codeOf(await py.session.call("python", { code: "print(1)", cwd: "file.txt" }))).toBe(
			"NOT_DIRECTORY",
		);
		expect(codeOf(await py.session.call("python", { code: "print(1)", cwd: "/" }))).toBe(
			"PATH_OUTSIDE_ROOTS",
		);
		expect(codeOf(await py.session.call("python", { code: "print(1)", cwd: "../.." }))).toBe(
			"PATH_OUTSIDE_ROOTS",
		);
		// Invalid cwd AND invalid code arguments: the cwd is reported, the code never considered.
		const both = await py.session.call("python", { code: "x", scriptPath: "y.py", cwd: "nope" });
		expect(codeOf(both)).toBe("NOT_FOUND");
		expectUntouched(py);
	});

	it("a cwd escaping through a symlink is refused", async () => {
		const py = await make();
		await symlink("/tmp", join(py.dir, "out"));
		expect(codeOf(await py.session.call("python", { code: "1", cwd: "out" }))).toBe("PATH_OUTSIDE_ROOTS");
		expectUntouched(py);
	});

	it("both or neither of code and scriptPath, or a bad timeout: INVALID_ARGS", async () => {
		const py = await make();
		await writeFile(join(py.dir, "s.py"), "print(1)\n");
		expect(codeOf(await py.session.call("python", {}))).toBe("INVALID_ARGS");
		expect(codeOf(await py.session.call("python", { code: "1", scriptPath: "s.py" }))).toBe("INVALID_ARGS");
		expect(codeOf(await py.session.call("python", { code: "1", timeout: 0 }))).toBe("INVALID_ARGS");
		expect(codeOf(await py.session.call("python", { code: "1", timeout: -3 }))).toBe("INVALID_ARGS");
		expect(codeOf(await py.session.call("python", { code: 5 }))).toBe("INVALID_ARGS");
		expect(codeOf(await py.session.call("python", { code: "1", extra: true }))).toBe("INVALID_ARGS");
		expectUntouched(py);
	});

	it("scriptPath outside the roots, missing, or a directory is refused before anything runs", async () => {
		const py = await make();
		await mkdir(join(py.dir, "d"));
		await symlink("/etc/hostname", join(py.dir, "link.py"));
		expect(codeOf(await py.session.call("python", { scriptPath: "/etc/passwd" }))).toBe("PATH_OUTSIDE_ROOTS");
		expect(codeOf(await py.session.call("python", { scriptPath: "../x.py" }))).toBe("PATH_OUTSIDE_ROOTS");
		expect(codeOf(await py.session.call("python", { scriptPath: "link.py" }))).toBe("PATH_OUTSIDE_ROOTS");
		expect(codeOf(await py.session.call("python", { scriptPath: "missing.py" }))).toBe("NOT_FOUND");
		expect(codeOf(await py.session.call("python", { scriptPath: "d" }))).toBe("IS_DIRECTORY");
		expectUntouched(py);
	});

	it("a script in a read-only root may run; the first good call starts the worker", async () => {
		const ro = await make();
		await writeFile(join(ro.dir, "ro.py"), "print('read-only root')\n");
		const py = await make({ session: { allowRead: [ro.dir] } });
		const r = await py.session.call("python", { scriptPath: join(ro.dir, "ro.py") });
		expect(textOf(r)).toBe("read-only root");
		expect(py.python.stats).toEqual({ spawns: 1, jobsSent: 1 });
	});

	it("no interpreter: BACKEND_UNAVAILABLE naming the fix, nothing started", async () => {
		const py = await make({ python: { interpreter: "/nonexistent/python3" } });
		const r = await py.session.call("python", { code: "1" });
		expect(codeOf(r)).toBe("BACKEND_UNAVAILABLE");
		expect(!r.ok && r.error.message).toMatch(/KEEL_PYTHON/);
		expectUntouched(py);
		const env = await make({
			python: { interpreter: undefined, env: { PATH: "/nonexistent", KEEL_PYTHON: "nope-python" } },
		});
		expect(codeOf(await env.session.call("python", { code: "1" }))).toBe("BACKEND_UNAVAILABLE");
		expectUntouched(env);
	});

	it("an interpreter that is not Python: the job ends once as spawn-failed, BACKEND_UNAVAILABLE", async () => {
		const py = await make({ python: { interpreter: "/bin/false" } });
		const r = await py.session.call("python", { code: "1" });
		expect(codeOf(r)).toBe("BACKEND_UNAVAILABLE");
		expect(!r.ok && r.error.message).toMatch(/exited with code 1 before it was ready/);
		const ends = py.events.filter((e) => e.type === "end");
		expect(ends).toHaveLength(1);
		expect(ends[0].type === "end" && ends[0].outcome).toMatchObject({
			kind: "error",
			exitState: "spawn-failed",
		});
		// Nothing ran, so nothing was lost: the next attempt does not claim a state reset.
		const again = await py.session.call("python", { code: "1" });
		expect(!again.ok && again.error.details?.stateReset).toBe(false);
	});

	it("on a backend that cannot keep a process running: BACKEND_UNAVAILABLE, not supported", async () => {
		// What it can do is said by its fields: neither spawning here nor a process to keep.
		const backend = { ...createLocalBackend(), kind: "custom", spawnsHere: undefined, process: undefined };
		const py = await make({ session: { backend } });
		const r = await py.session.call("python", { code: "1" });
		expect(codeOf(r)).toBe("BACKEND_UNAVAILABLE");
		expect(!r.ok && r.error.message).toMatch(
			/not supported on the custom backend \(it cannot keep a process running\)/,
		);
		expectUntouched(py);
	});
});
