/** One interpreter per session: persistence, isolation, results, scripts and output. */
import { existsSync } from "node:fs";
import { mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NO_PYTHON, pySession, pySessions, textOf } from "./helpers.js";

const make = pySessions();

describe.skipIf(NO_PYTHON)("python: one interpreter per session", () => {
	it("two sessions have distinct workers; a variable set in one is absent in the other", async () => {
		const [a, b] = await Promise.all([make(), make()]);
		const [ra, rb] = await Promise.all([
			a.session.call("python", { code: "import os\nsecret = 'a'\nos.getpid()" }),
			b.session.call("python", { code: "import os\nos.getpid()" }),
		]);
		expect(ra.ok && rb.ok).toBe(true);
		expect(textOf(ra)).toBe(String(a.python.pid));
		expect(textOf(rb)).toBe(String(b.python.pid));
		expect(a.python.pid).not.toBe(b.python.pid);
		const inB = await b.session.call("python", { code: "'secret' in globals()" });
		expect(textOf(inB)).toBe("False");
		const inA = await a.session.call("python", { code: "secret" });
		expect(textOf(inA)).toBe("'a'");
	});

	it("keeps variables, imports and functions across calls, on one worker", async () => {
		const py = await make();
		await py.session.call("python", { code: "import json\nn = 40\ndef inc(x):\n    return x + 1" });
		const pid = py.python.pid;
		const r = await py.session.call("python", { code: "json.dumps({'v': inc(n) + 1})" });
		expect(textOf(r)).toBe(`'{"v": 42}'`);
		expect(py.python.pid).toBe(pid);
		expect(py.python.stats.spawns).toBe(1);
		expect((r as { details: { stateReset: boolean } }).details.stateReset).toBe(false);
	});

	it("shows stdout, stderr and the repr of a trailing expression; None is not shown", async () => {
		const py = await make();
		const r = await py.session.call("python", {
			code: "import sys\nprint('out')\nprint('err', file=sys.stderr)\n[1, 2]",
		});
		expect(textOf(r)).toBe("out\n\n[stderr]\nerr\n\n[result]\n[1, 2]");
		expect(textOf(await py.session.call("python", { code: "None" }))).toBe("(no output)");
		expect(textOf(await py.session.call("python", { code: "x = 1" }))).toBe("(no output)");
	});

	it("bounds a huge repr and reports it", async () => {
		const py = await make();
		const r = await py.session.call("python", { code: "'x' * 1_000_000" });
		expect(r.ok).toBe(true);
		expect(textOf(r).length).toBeLessThan(25_000);
		expect(textOf(r)).toMatch(/more characters\]$/);
		expect((r as { details: { reprTruncated?: boolean } }).details.reprTruncated).toBe(true);
	});

	it("an exception fails the call with a bounded traceback of the user's code only; state survives", async () => {
		const py = await make();
		await py.session.call("python", { code: "kept = 1" });
		const r = await py.session.call("python", {
			code: "def f():\n    raise ValueError('bad ' * 10000)\nf()",
		});
		expect(r.ok).toBe(false);
		if (r.ok) return;
		expect(r.error.code).toBe("COMMAND_FAILED");
		expect(r.error.message).toContain('File "<python-2>", line 2, in f');
		expect(r.error.message).not.toContain("worker.py");
		expect(r.error.message.length).toBeLessThan(10_000);
		expect(r.error.details?.exception).toMatchObject({ type: "ValueError" });
		expect((r.error.details!.exception as { message: string }).message.length).toBeLessThan(2_100);
		const after = await py.session.call("python", { code: "kept" });
		expect(textOf(after)).toBe("1");
	});

	it("SystemExit and a syntax error are ordinary exceptions; input() sees EOF", async () => {
		const py = await make();
		await py.session.call("python", { code: "kept = 2" });
		const exit = await py.session.call("python", { code: "import sys\nsys.exit(4)" });
		expect(!exit.ok && exit.error.details?.exception).toMatchObject({ type: "SystemExit", message: "4" });
		const syntax = await py.session.call("python", { code: "def (" });
		expect(!syntax.ok && syntax.error.details?.exception).toMatchObject({ type: "SyntaxError" });
		const eof = await py.session.call("python", { code: "input()" });
		expect(!eof.ok && eof.error.details?.exception).toMatchObject({ type: "EOFError" });
		expect(textOf(await py.session.call("python", { code: "kept" }))).toBe("2");
		expect(py.python.stats.spawns).toBe(1);
	});

	it("runs in the given cwd (default: the workspace root) and imports modules from it", async () => {
		const py = await make();
		await mkdir(join(py.dir, "sub"));
		await writeFile(join(py.dir, "sub", "helper_mod.py"), "VALUE = 'from helper'\n");
		const root = await realpath(py.dir);
		expect(textOf(await py.session.call("python", { code: "import os\nos.getcwd()" }))).toBe(`'${root}'`);
		const r = await py.session.call("python", {
			code: "import os, helper_mod\n(os.getcwd(), helper_mod.VALUE)",
			cwd: "sub",
		});
		expect(textOf(r)).toBe(`('${join(root, "sub")}', 'from helper')`);
	});

	it("runs a script like `python script.py`, leaving the persistent namespace alone", async () => {
		const py = await make();
		await mkdir(join(py.dir, "pkg"));
		await writeFile(join(py.dir, "pkg", "sibling.py"), "NAME = 'sibling'\n");
		await writeFile(
			join(py.dir, "pkg", "main.py"),
			"import sys, sibling\nscript_var = 1\nprint(__name__, sys.argv[0].endswith('pkg/main.py'), sibling.NAME, __file__.endswith('main.py'))\n'ignored expression'\n",
		);
		await py.session.call("python", { code: "mine = 'kept'" });
		const r = await py.session.call("python", { scriptPath: "pkg/main.py" });
		expect(textOf(r)).toBe("__main__ True sibling True");
		const ns = await py.session.call("python", { code: "('script_var' in globals(), mine, __name__)" });
		expect(textOf(ns)).toBe("(False, 'kept', '__main__')");
		await writeFile(join(py.dir, "pkg", "bad.py"), "x = 1\nraise KeyError('k')\n");
		const bad = await py.session.call("python", { scriptPath: "pkg/bad.py" });
		expect(!bad.ok && bad.error.message).toMatch(/bad\.py", line 2, in <module>[\s\S]*KeyError: 'k'/);
	});

	it("user output never reaches the protocol: prints, raw fd writes, fake frames, subprocesses", async () => {
		const py = await make();
		const r = await py.session.call("python", {
			code: [
				"import os, sys, subprocess, json",
				"print('\\x00\\x00\\x00\\x10' + json.dumps({'id': 1, 'ok': True}))",
				"sys.stdout.buffer.write(b'\\xff\\xfe raw bytes\\n')",
				"sys.stdout.flush()",
				"os.write(1, b'fd1\\n')",
				"os.write(2, b'fd2\\n')",
				"subprocess.run(['echo', 'from child'])",
				"print('unicode: \\u00e9\\u4e2d \\U0001F600')",
				"print('\\udc80 lone surrogate')",
			].join("\n"),
		});
		expect(r.ok).toBe(true);
		const out = textOf(r);
		expect(out).toContain('{"id": 1, "ok": true}');
		expect(out).toContain("raw bytes");
		expect(out).toContain("fd1\n");
		expect(out).toContain("from child");
		expect(out).toContain("unicode: é中 😀");
		expect(out).toContain("\\udc80 lone surrogate");
		expect(out).toContain("[stderr]\nfd2");
		const next = await py.session.call("python", { code: "print('next'); 7" });
		expect(textOf(next)).toBe("next\n\n[result]\n7");
		expect(py.python.stats.spawns).toBe(1);
	});

	it("output arriving between jobs (a thread still printing) goes to the next job, not the protocol", async () => {
		const py = await make();
		await py.session.call("python", {
			code: "import threading\ndef late():\n    print('late', flush=True)\n    open('printed', 'w').close()\nthreading.Timer(0.05, late).start()",
		});
		// Wait until the thread has printed (between jobs: no job is running now).
		while (!existsSync(join(py.dir, "printed"))) await new Promise((r) => setTimeout(r, 10));
		await new Promise((r) => setTimeout(r, 50)); // let the bytes reach the coordinator
		const r = await py.session.call("python", { code: "'now'" });
		expect(textOf(r)).toBe("late\n\n[result]\n'now'");
	});

	it("a huge print is bounded (tail kept) and the full text spilled to a file the result names", async () => {
		const py = await make();
		const r = await py.session.call("python", { code: "for i in range(200_000):\n    print(f'line {i}')" });
		expect(r.ok).toBe(true);
		if (!r.ok) return;
		const text = textOf(r);
		expect(text).toContain("line 199999");
		expect(text).not.toContain("line 0\n");
		expect(Buffer.byteLength(text)).toBeLessThan(60 * 1024);
		const details = r.details as { stdout: { fullOutputPath: string; truncation: { totalLines: number } } };
		expect(details.stdout.truncation.totalLines).toBe(200_000);
		expect(text).toContain(`Full output: ${details.stdout.fullOutputPath}`);
		const full = await readFile(details.stdout.fullOutputPath, "utf8");
		expect(full.split("\n").length).toBe(200_001);
		expect(full.startsWith("line 0\nline 1\n")).toBe(true);
		const next = await py.session.call("python", { code: "print('small')" });
		expect(textOf(next)).toBe("small");
	});

	it("pickles classes defined in the session (they live in __main__)", async () => {
		const py = await make();
		await py.session.call("python", { code: "import pickle\nclass P:\n    def __init__(self): self.v = 3" });
		const r = await py.session.call("python", { code: "pickle.loads(pickle.dumps(P())).v" });
		expect(textOf(r)).toBe("3");
	});
});

describe.skipIf(NO_PYTHON)("python: conveniences", () => {
	it("top-level await runs on a fresh event loop, also in a trailing expression", async () => {
		const py = await pySession();
		try {
			const r = await py.session.call("python", {
				code: "import asyncio\nasync def twice(x):\n    await asyncio.sleep(0)\n    return 2 * x\nv = await twice(20)\nawait twice(v) + 2",
			});
			expect(textOf(r)).toBe("82");
			expect(textOf(await py.session.call("python", { code: "v" }))).toBe("40");
		} finally {
			await py.dispose();
		}
	});

	it("tracebacks show the source lines of earlier cells", async () => {
		const py = await pySession();
		try {
			await py.session.call("python", { code: "def boom():\n    return 1 / 0" });
			const r = await py.session.call("python", { code: "boom()" });
			expect(!r.ok && r.error.message).toMatch(/File "<python-1>", line 2, in boom\n\s+return 1 \/ 0/);
		} finally {
			await py.dispose();
		}
	});
});
