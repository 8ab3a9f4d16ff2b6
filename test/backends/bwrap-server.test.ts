/**
 * The long-lived sandbox and its command server (bwrap/server*.ts), tried as hostile code inside it
 * would: nothing but the file system is carried from one command to the next; the server cannot be
 * killed, stopped, traced, written to or starved of limits from inside; what a command changes of
 * what later commands would inherit retires the sandbox; killed from the host, the call in flight
 * fails clearly and the next call gets a new sandbox. Real bwrap, real processes.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandboxRunner } from "../../src/backend/bwrap/runner.js";
import { SERVER_PYTHON } from "../../src/backend/bwrap/server.js";
import { serverCode } from "../../src/backend/bwrap/server-code.js";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import type { Backend, ExecResult } from "../../src/backend/types.js";
import { Session } from "../../src/session.js";
import { bwrapAvailable } from "../contract/backends.js";
import { processesWith, waitFor } from "../fixtures/processes.js";

const available = (await bwrapAvailable()) && existsSync(SERVER_PYTHON);
if (!available) console.log("bwrap-server.test: skipped (bwrap cannot run here, or no /usr/bin/python3)");

let root: string;
let backend: Backend;
beforeEach(async () => {
	root = await realpath(await mkdtemp(join(tmpdir(), "keel-bwrap-srv-")));
	backend = createBwrapBackend({ roots: [root] });
});
afterEach(async () => {
	await backend.close();
	await rm(root, { recursive: true, force: true });
});

async function run(command: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}) {
	let out = "";
	const result: ExecResult = await backend.exec.run({
		command,
		cwd: root,
		onData: (c) => (out += c.toString("utf8")),
		...opts,
	});
	return { result, out: out.trim() };
}

/** The sandbox's identity: its init's start time (field 22 of /proc/1/stat). */
const SANDBOX_ID = "cut -d' ' -f22 /proc/1/stat";
/** The host pid of this test's sandbox (bwrap's, whose argv names the root). */
const sandboxPids = () =>
	processesWith(`as-pid-1 --chdir / -- ${SERVER_PYTHON}`).filter((l) => l.includes(root));

describe.skipIf(!available)("one sandbox serves many commands, and carries nothing but files", () => {
	it("commands run in the same sandbox, each in its own process group and session", async () => {
		const a = await run(`${SANDBOX_ID}; ps -o pid=,pgid=,sid= -p $$`);
		const b = await run(`${SANDBOX_ID}; ps -o pid=,pgid=,sid= -p $$`);
		const [idA, groupA] = a.out.split("\n");
		const [idB] = b.out.split("\n");
		expect(idA).toBe(idB);
		const [pid, pgid, sid] = groupA.trim().split(/\s+/);
		expect(pgid).toBe(pid);
		expect(sid).toBe(pid);
	});

	it("no environment, directory, shell state, process or /tmp file reaches the next command", async () => {
		const first = await run(
			`export PLANTED=1; cd /tmp; alias ls=false; umask 077; touch /tmp/planted /dev/shm/planted 2>/dev/null; mkdir -p /tmp/d && chmod 000 /tmp/d; (setsid sleep 1000 &) ; nohup sleep 1000 >/dev/null 2>&1 & echo ok`,
		);
		expect(first.out).toBe("ok");
		const next = await run(
			`echo "\${PLANTED-unset}"; pwd; umask; ls -A /tmp /dev/shm 2>/dev/null | grep -c planted; ps -e -o comm= | grep -c sleep`,
		);
		expect(next.out.split("\n")).toEqual(["unset", root, "0022", "0", "0"]);
	});

	it("the reply goes before /tmp is emptied, yet the very next command finds no file and no daemon", async () => {
		// Thousands of files take the server a while to remove after it has replied, and a daemon
		// keeps planting more: a next command that started before the cleanup ended would see them.
		const plant = [
			"mkdir -p /tmp/t/{1..40}/x && touch /tmp/t/{1..40}/x/f{1..60} /dev/shm/planted",
			"(setsid sh -c 'while :; do : > /tmp/again.$$; done' >/dev/null 2>&1 &)",
			"nohup sleep 1000 >/dev/null 2>&1 &",
			"exec >/dev/null 2>&1", // the leader's exit, not a pipe's end, is all the server sees
		].join("\n");
		const look = `${SANDBOX_ID}; find /tmp /dev/shm -mindepth 1 -maxdepth 1 ! -name ${basename(root)} | wc -l; ps -e -o comm= | grep -c -e sleep -e '^sh$'`;
		const id = (await run(SANDBOX_ID)).out;
		for (let round = 0; round < 5; round++) {
			expect((await run(plant)).result.exitCode).toBe(0);
			const next = await run(look); // issued the moment the reply arrived
			expect(next.out.split("\n")).toEqual([id, "0", "0"]); // the same sandbox, emptied in place
		}
	});

	it("an abort sent while the server still cleans up after the last command is not lost", async () => {
		// The run request and the kill arrive together while /tmp is being emptied: the kill must
		// reach the command (a lost one leaves it to the host, which kills the whole sandbox).
		const id = (await run(SANDBOX_ID)).out;
		await run("mkdir -p /tmp/t/{1..100} && touch /tmp/t/{1..100}/f{1..200}");
		const ac = new AbortController();
		const p = run(`sleep 1000`, { signal: ac.signal });
		setTimeout(() => ac.abort(), 15); // the request is written by then; the cleanup of 20,000 files goes on
		expect((await p).result.aborted).toBe(true);
		expect((await run(SANDBOX_ID)).out).toBe(id);
	});

	it("a command gets no descriptor but its three, its program looked up on its own PATH", async () => {
		// What a program the command starts inherits (the shell's own listing would race its pipes),
		// listed once it runs: the shell's forked child holds the shell's descriptors until its exec,
		// and the program's loader holds a library open for a moment after it. An inherited
		// descriptor stays for sleep's whole life, so the listing is taken again until it is three
		// (or two seconds pass and the last one is what fails).
		const listing = await run(
			[
				"sleep 9 & p=$!",
				'until [ "$(cat /proc/$p/comm)" = sleep ]; do :; done',
				"for i in $(seq 200); do l=$(ls /proc/$p/fd | tr '\\n' ' '); [ \"$l\" = '0 1 2 ' ] && break; sleep 0.01; done",
				"echo $l; kill $p",
			].join("\n"),
		);
		expect(listing.out).toBe("0 1 2");
		await mkdir(join(root, "bin"));
		await writeFile(join(root, "bin", "keel-probe-cmd"), '#!/bin/sh\necho probe-ran "$PWD"\n');
		await chmod(join(root, "bin", "keel-probe-cmd"), 0o755);
		const runner = createSandboxRunner({ roots: [root] });
		try {
			const call = async (argv: string[], cwd: string, env?: NodeJS.ProcessEnv) => {
				let out = "";
				const r = await runner.run(argv, { cwd, env, onData: (c) => (out += c.toString("utf8")) });
				return { code: r.exitCode, out: out.trim() };
			};
			const path = `/nonexistent:${join(root, "bin")}:/usr/bin:/bin`;
			expect(await call(["keel-probe-cmd"], join(root, "bin"), { PATH: path })).toEqual({
				code: 0,
				out: `probe-ran ${join(root, "bin")}`,
			});
			const missing = await call(["keel-probe-cmd"], root, { PATH: "/usr/bin:/bin" });
			expect(missing.code).toBe(127);
			expect(missing.out).toContain("keel: cannot run keel-probe-cmd");
			const gone = await call(["true"], join(root, "gone"));
			expect(gone.code).toBe(1);
			expect(gone.out).toContain(`keel: cannot enter ${join(root, "gone")}`);
			expect((await call(["pwd"], root)).out).toBe(root); // and the server is usable afterwards
			expect(runner.servers.started).toBe(1);
		} finally {
			runner.close();
		}
	});

	it("concurrent commands get sandboxes of their own: one's end does not kill the other's processes", async () => {
		const slow = run("sleep 0.6; echo slow-done");
		const quick = run("sleep 0.1; echo quick-done");
		const [s, q] = await Promise.all([slow, quick]);
		expect(q.out).toBe("quick-done");
		expect(s.out).toBe("slow-done");
		expect(s.result.exitCode).toBe(0);
	});
});

describe.skipIf(!available)("hostile code inside cannot take over the server", () => {
	it("signals to the server (KILL, STOP, TERM, INT, HUP) from inside are dropped", async () => {
		const id = (await run(SANDBOX_ID)).out;
		const r = await run("for s in KILL STOP TERM INT HUP USR1 SEGV; do kill -$s 1; done; echo sent");
		expect(r.out).toBe("sent");
		const after = await run(`${SANDBOX_ID}; echo fine`);
		expect(after.out).toBe(`${id}\nfine`);
	});

	it("its control pipes, memory and environment cannot be opened, and it cannot be traced", async () => {
		const r = await run(
			[
				'echo \'{"run":99,"argv":["/bin/touch","/tmp/x"],"cwd":"/","env":{}}\' > /proc/1/fd/0 2>/dev/null && echo wrote-ctl',
				"for f in 1 2 3 4 5 6 7 8; do : > /proc/1/fd/$f 2>/dev/null && echo wrote-fd-$f; done",
				"cat /proc/1/environ >/dev/null 2>&1 && echo read-env",
				"cat /proc/1/mem >/dev/null 2>&1 && echo read-mem",
				`python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print("ptrace", l.ptrace(16, 1, 0, 0), ctypes.get_errno())'`,
				"echo done",
			].join("; "),
		);
		expect(r.out).not.toMatch(/wrote|read-env|read-mem/);
		expect(r.out).toContain("ptrace -1 1"); // EPERM
		expect(r.out).toContain("done");
	});

	it("limits, nice value and CPU affinity forced onto the server do not reach later commands", async () => {
		const id = (await run(SANDBOX_ID)).out;
		const cpus = (await run("nproc --all")).out;
		const niceBefore = (await run("nice")).out; // keel's own (a test run under `nice` starts above 0)
		await run("prlimit --pid 1 --fsize=0:0 --nofile=8:8 2>&1; renice -n 19 -p 1 >/dev/null 2>&1; true");
		const after = await run(`${SANDBOX_ID}; ulimit -f; nice; echo data > f.txt && cat f.txt`);
		const [newId, fsize, niceness, data] = after.out.split("\n");
		expect(newId).not.toBe(id); // the tampered sandbox was retired
		expect(fsize).toBe("unlimited");
		expect(niceness).toBe(niceBefore);
		expect(data).toBe("data");
		if (Number(cpus) > 1) {
			await run("taskset -p 1 1 >/dev/null 2>&1; true");
			expect((await run("taskset -p $$ | sed 's/.*: //'")).out).not.toBe("1");
		}
	});
});

describe.skipIf(!available)("the sandbox is restarted when it dies", () => {
	it("killed from the host between calls: the next call works in a new sandbox", async () => {
		const id = (await run(SANDBOX_ID)).out;
		const pids = sandboxPids();
		expect(pids.length).toBeGreaterThan(0);
		for (const line of pids) process.kill(Number(line.split(" ")[0]), "SIGKILL");
		// At once: the host may not have seen the death yet; the command must still run (once).
		const after = await run(`${SANDBOX_ID}; echo works`);
		expect(after.out.split("\n")[1]).toBe("works");
		expect(after.out.split("\n")[0]).not.toBe(id);
	});

	it("killed from the host during a call: that call fails clearly, its processes are gone, the next works", async () => {
		const s = await Session.create({ root, backend });
		const marker = `keelsrv${Date.now()}`;
		const call = s.call("bash", { command: `sh -c 'sleep 1000; : ${marker}'` });
		expect(await waitFor(() => processesWith(marker).length > 0, 10_000)).toBe(true);
		for (const line of sandboxPids()) process.kill(Number(line.split(" ")[0]), "SIGKILL");
		const r = await call;
		expect(r.ok).toBe(false);
		if (!r.ok) {
			expect(r.error.code).toBe("BACKEND_UNAVAILABLE");
			expect(r.error.message).toContain("The sandbox ended while the command ran");
		}
		expect(await waitFor(() => processesWith(marker).length === 0, 5000)).toBe(true);
		const next = await s.call("bash", { command: "echo again" });
		expect(next.ok && next.content.map((c) => (c.type === "text" ? c.text : "")).join("")).toContain("again");
		await s.close();
	});

	it("abort and timeout kill the command's whole tree and the sandbox stays usable", async () => {
		const marker = `keelsrvab${Date.now()}`;
		const ac = new AbortController();
		const p = run(`setsid sh -c 'sleep 1000; : ${marker}' & sleep 1000`, { signal: ac.signal });
		expect(await waitFor(() => processesWith(marker).length > 0, 10_000)).toBe(true);
		ac.abort();
		expect((await p).result.aborted).toBe(true);
		expect(processesWith(marker)).toEqual([]);
		const t = await run(`sh -c 'sleep 1000; : ${marker}t' & sleep 1000`, { timeoutMs: 500 });
		expect(t.result.timedOut).toBe(true);
		expect(processesWith(`${marker}t`)).toEqual([]);
		expect((await run("echo still")).out).toBe("still");
	});
});

describe.skipIf(!available)("the sandbox follows the protected set", () => {
	it("a repository created by one command is mounted read-only for the next (a new sandbox)", async () => {
		const id = (await run(SANDBOX_ID)).out;
		execFileSync("git", ["init", "-q", join(root, "sub")]);
		const r = await run(
			`${SANDBOX_ID}; { echo x >> sub/.git/config; } 2>/dev/null && echo wrote || echo refused`,
		);
		const [newId, verdict] = r.out.split("\n");
		expect(verdict).toBe("refused");
		expect(newId).not.toBe(id);
	});
});

describe.skipIf(!existsSync(SERVER_PYTHON))("the command server outside its sandbox", () => {
	// Its sweep kills every process it can see but itself: started anywhere but as the init of its
	// own PID namespace with that namespace's /proc, it must refuse before it kills anything.
	const serve = (argv: string[]) => {
		try {
			return {
				out: execFileSync(argv[0], [...argv.slice(1)], { encoding: "utf8", input: "", timeout: 10_000 }),
				code: 0,
			};
		} catch (e) {
			const err = e as { stdout?: string; status?: number };
			return { out: err.stdout ?? "", code: err.status };
		}
	};

	it("refuses on the host (not PID 1)", () => {
		const r = serve([SERVER_PYTHON, "-I", "-S", "-c", serverCode()]);
		expect(r.out).toContain('"fatal":"not pid 1"');
		expect(r.code).toBe(2);
	});

	it.skipIf(process.getuid?.() !== 0)(
		"refuses as PID 1 of a namespace that sees the host's /proc",
		async () => {
			const sentinel = `keel-sentinel-${process.pid}-${Date.now()}`;
			const bystander = spawn("bash", ["-c", `exec -a ${sentinel} sleep 60`], { stdio: "ignore" });
			try {
				expect(await waitFor(() => processesWith(sentinel).length === 1, 5000)).toBe(true);
				// unshare --pid --fork without --mount-proc: PID 1 of a new namespace, the host's /proc mounted.
				const r = serve(["unshare", "--pid", "--fork", SERVER_PYTHON, "-I", "-S", "-c", serverCode()]);
				expect(r.out).toContain('"fatal":"not its own /proc"');
				expect(r.code).toBe(2);
				expect(processesWith(sentinel)).toHaveLength(1);
			} finally {
				bystander.kill("SIGKILL");
			}
		},
	);
});
