import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PythonCoordinatorOptions } from "../../src/python/coordinator.js";
import type { CallResult } from "../../src/session.js";
import { BACKENDS } from "../contract/backends.js";
import { makeScratch, type Scratch } from "../contract/harness.js";
import { processesWith, waitFor } from "../fixtures/processes.js";
import { endsOf, NO_PYTHON, nextEvent, type PySession, pySession, textOf } from "./helpers.js";

const NAMES = ["bwrap", "exec (bwrap transport)", "ssh", "podman", "k8s (fake kubectl → podman)"];
// The sandbox SDKs whose primitive keeps a process with stdin (Vercel Sandbox 3.5's has none).
NAMES.push("e2b (local stand-in)", "daytona (local stand-in)", "modal (local stand-in)");

function details(r: CallResult): Record<string, unknown> {
	return (r.ok ? r.details : r.error.details) as Record<string, unknown>;
}

const gone = (tag: string) => waitFor(() => processesWith(tag).length === 0, 3000);

for (const factory of BACKENDS.filter((f) => NAMES.includes(f.name))) {
	describe.skipIf(NO_PYTHON)(`python on ${factory.name}`, () => {
		let why: string | undefined;
		let scratch: Scratch | undefined;
		const open: PySession[] = [];
		const make = async (python: Partial<PythonCoordinatorOptions> = {}) => {
			if (!scratch) throw new Error("no scratch");
			const py = await pySession({
				session: { backend: scratch.made.backend, spillDir: join(scratch.scratch, "spill") },
				dir: scratch.root,
				python,
			});
			open.push(py);
			return py;
		};

		beforeAll(async () => {
			const available = await factory.available();
			if (available !== true) {
				why = available || "unavailable";
				return;
			}
			await factory.setup?.();
			scratch = await makeScratch(factory);
		}, 120_000);
		afterEach(async () => {
			for (const py of open.splice(0)) await py.python.close();
		});
		afterAll(async () => {
			await scratch?.dispose();
			await factory.teardown?.();
		});
		const test = (name: string, fn: () => Promise<void>) =>
			it(name, async (ctx) => {
				if (why) {
					console.warn(`python on ${factory.name} skipped: ${why}`);
					ctx.skip();
				}
				await fn();
			}, 120_000);

		test("state persists within a session, never across sessions; output and repr are split", async () => {
			const a = await make();
			const b = await make();
			const first = await a.session.call("python", {
				code: "import os, sys\nsecret = 41\nprint('out')\nprint('err', file=sys.stderr)\nos.getcwd()",
			});
			expect(first.ok, JSON.stringify(first)).toBe(true);
			expect(details(first)).toMatchObject({ stateReset: false });
			expect(textOf(first)).toContain("out");
			expect(textOf(first)).toContain("err");
			expect(textOf(first)).toContain(`'${scratch!.root}'`);
			expect(textOf(await a.session.call("python", { code: "secret + 1" }))).toBe("42");
			const other = await b.session.call("python", { code: "'secret' in globals()" });
			expect(textOf(other)).toBe("False");
			const pids = await Promise.all(
				[a, b].map(async (py) => textOf(await py.session.call("python", { code: "os.getpid()" }))),
			);
			expect(pids[0]).not.toBe(pids[1]);
			expect(a.python.stats.spawns).toBe(1);
		});

		test("large code in and large output out pass whole through the protocol", async () => {
			const py = await make();
			const big = "x".repeat(3_000_000);
			const r = await py.session.call("python", {
				code: `s = '${big}'\nimport sys\nsys.stdout.write('y' * 5_000_000)\nprint()\nlen(s)`,
			});
			expect(r.ok, JSON.stringify(r).slice(0, 500)).toBe(true);
			expect(textOf(r)).toMatch(/3000000$/);
			const d = details(r) as { stdout?: { totalBytes?: number }; fullOutputPath?: string };
			expect(JSON.stringify(d)).toMatch(/5000001/); // every byte of stdout was counted
			expect(textOf(await py.session.call("python", { code: "len(s)" }))).toBe("3000000");
		});

		test("a script runs like `python script.py` from its file on the backend, in the given cwd", async () => {
			const py = await make();
			await mkdir(join(scratch!.root, "pkg"), { recursive: true });
			await writeFile(join(scratch!.root, "pkg", "helper_mod.py"), "NAME = 'helper'\n");
			await writeFile(
				join(scratch!.root, "pkg", "main.py"),
				"import os, sys, helper_mod\nprint(helper_mod.NAME, os.path.basename(os.getcwd()), sys.argv[0].endswith('pkg/main.py'))\n",
			);
			const r = await py.session.call("python", { scriptPath: "pkg/main.py", cwd: "pkg" });
			expect(textOf(r)).toBe("helper pkg True");
			const bad = await py.session.call("python", { code: "1", cwd: "pkg/main.py" });
			expect(!bad.ok && bad.error.code).toBe("NOT_DIRECTORY");
		});

		test("an exception carries the user's traceback and the state survives", async () => {
			const py = await make();
			await py.session.call("python", { code: "kept = 'yes'" });
			const r = await py.session.call("python", { code: "def f():\n    raise KeyError('k')\nf()" });
			expect(!r.ok && r.error.code).toBe("COMMAND_FAILED");
			expect(!r.ok && r.error.message).toMatch(/File "<python-2>", line 2, in f[\s\S]*KeyError: 'k'/);
			expect(textOf(await py.session.call("python", { code: "kept" }))).toBe("'yes'");
		});

		test("timeout kills the worker's whole process group; the next call says state was lost", async () => {
			const py = await make();
			const tag = `keel-py-sleeper-${randomBytes(6).toString("hex")}`;
			await py.session.call("python", { code: "before = 1" });
			const pending = py.session.call("python", {
				code: `import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '${tag}'])\ntime.sleep(300)`,
				timeout: 4,
			});
			// The sleeper must exist before the timeout, or its absence afterwards proves nothing.
			expect(await waitFor(() => processesWith(tag).length > 0, 3000)).toBe(true);
			const r = await pending;
			expect(!r.ok && r.error.code).toBe("TIMEOUT");
			const jobId = details(r).jobId as string;
			expect(endsOf(py.events, jobId)).toHaveLength(1);
			expect(await gone(tag)).toBe(true);
			const next = await py.session.call("python", { code: "'before' in globals()" });
			expect(textOf(next)).toMatch(/restarted before this call[\s\S]*False$/);
			expect(details(next)).toMatchObject({ stateReset: true });
		});

		test("os._exit(3) is a crash with one terminal event; an abort stops the job; both reset", async () => {
			const py = await make();
			await py.session.call("python", { code: "x = 1" });
			const crash = await py.session.call("python", { code: "import os\nos._exit(3)" });
			expect(!crash.ok && crash.error.code).toBe("COMMAND_FAILED");
			expect(details(crash)).toMatchObject({ exitState: "crashed", exitCode: 3 });
			expect(endsOf(py.events, details(crash).jobId as string)).toHaveLength(1);
			expect(textOf(await py.session.call("python", { code: "'x' in globals()" }))).toMatch(/False$/);

			const controller = new AbortController();
			const started = nextEvent(py, (e) => e.type === "start" && e.job.label.startsWith("import time"));
			const pending = py.session.call(
				"python",
				{ code: "import time\ntime.sleep(300)" },
				{ signal: controller.signal },
			);
			await started;
			controller.abort();
			const aborted = await pending;
			expect(!aborted.ok && aborted.error.code).toBe("ABORTED");
			expect(textOf(await py.session.call("python", { code: "print('fresh')" }))).toMatch(/fresh$/);
		});

		test("a long job moves to the background lane; wait returns its result", async () => {
			const py = await make({ backgroundAfterMs: 300 });
			const r = await py.session.call("python", { code: "import time\ntime.sleep(1)\n'slept'" });
			expect(r.ok).toBe(true);
			const jobId = details(r).jobId as string;
			expect(details(r)).toMatchObject({ status: "running" });
			const waited = await py.session.call("python_jobs", { action: "wait", jobId, timeout: 30 });
			expect(textOf(waited)).toMatch(/'slept'$/);
		});

		test("closing the session's coordinator with a job running ends it once and leaves no process", async () => {
			const py = await make();
			const tag = `keel-py-close-${randomBytes(6).toString("hex")}`;
			const pending = py.session.call("python", {
				code: `import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '${tag}'])\ntime.sleep(300)`,
			});
			expect(await waitFor(() => processesWith(tag).length > 0, 3000)).toBe(true);
			await py.python.close();
			const r = await pending;
			expect(!r.ok && r.error.code).toBe("ABORTED");
			expect(py.events.filter((e) => e.type === "end")).toHaveLength(1);
			expect(await gone(tag)).toBe(true);
		});

		test("a missing interpreter is a clear BACKEND_UNAVAILABLE before any code runs", async () => {
			const py = await make({ interpreter: "/nonexistent/python3" });
			const r = await py.session.call("python", { code: "1" });
			expect(!r.ok && r.error.code).toBe("BACKEND_UNAVAILABLE");
			expect(!r.ok && r.error.message).toContain('"/nonexistent/python3" is not Python >= 3.8 there');
			expect(py.python.stats.spawns).toBe(0);
		});

		// bwrap's binds; the container's own boundary is tested in test/backends/container.test.ts.
		if (factory.name.startsWith("bwrap") || factory.name.startsWith("exec (bwrap")) {
			test("Python's own writes obey the sandbox: nothing outside the binds reaches the host", async () => {
				const py = await make();
				const escapes = [
					join(tmpdir(), `keel-escape-${randomBytes(6).toString("hex")}.txt`), // the sandbox's private /tmp
					"/usr/keel-escape.txt", // bound read-only
				];
				const r = await py.session.call("python", {
					code: `import os\nfor p in ${JSON.stringify(escapes)}:\n    try:\n        open(p, 'w').write('x')\n    except OSError as e:\n        print(type(e).__name__)`,
				});
				expect(r.ok, JSON.stringify(r)).toBe(true);
				expect(textOf(r)).toContain("OSError"); // EROFS on /usr
				for (const p of escapes) expect(existsSync(p)).toBe(false);
				const inside = await py.session.call("python", { code: "open('made.txt', 'w').write('ok')" });
				expect(inside.ok).toBe(true);
				expect(existsSync(join(scratch!.root, "made.txt"))).toBe(true);
			});
		}
	});
}
