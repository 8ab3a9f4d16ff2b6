/**
 * Where an ssh `bash` call's time goes, stage by stage (bash ≤ 3 ms, read ≤ 1.5 ms).
 *
 * One loopback sshd (the test fixture's), one connection. Its command runner is the real one with
 * timestamps added at fixed places (the runner's source is patched here, not in keel); the runner
 * runs on this machine, so its `time.monotonic()` and node's `process.hrtime` read the same clock
 * and the client's and the host's instants can be subtracted. Contenders, interleaved (the order
 * rotating), N each:
 *
 *   session bash     Session.call("bash", {command}) on a backend over that connection
 *   exec.run         backend.exec.run: the same command without the tool and Session layers
 *   runner request   CommandRunner.start straight on the runner, until its `d` frame
 *   runner, no cwd   a request whose cwd does not exist: the runner's round trip without a process
 *   channel floor    one request to the shell helper that starts nothing (an exec-channel round trip)
 *   shell helper runs bash   the same request running `bash --norc --noprofile -c CMD` as a child
 *                    of the helper's bash (fork and exec on a channel already open)
 *   session read     Session.call("read") of a 2 KB file
 *   helper k_look    the read's one request to the file helper (resolve, stat, read), bare
 *   helper k_lstat   one file helper request that does one lstat (the read's floor)
 *
 * Then the medians of the stages of the `runner request` calls, from the timestamps. And bash's own
 * start: `bash --norc --noprofile -c CMD` started by a python3 loop with posix_spawn, as the
 * runner does (the runner's environment: LC_ALL=C).
 *
 *   npm run build && node bench/ssh-stages.mjs [--iterations=N] [--command='echo hello']
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { channelPipe, openChannel } from "../dist/backend/ssh/channel.js";
import { SshConnection } from "../dist/backend/ssh/connection.js";
import { createSshExec } from "../dist/backend/ssh/exec.js";
import { createSshFs } from "../dist/backend/ssh/fs.js";
import { runnerInit } from "../dist/backend/ssh/remote-run.js";
import { CommandRunner } from "../dist/backend/ssh/run-client.js";
import { createSshSearch } from "../dist/backend/ssh/search.js";
import { createSshProcess } from "../dist/backend/ssh/spawn.js";
import { createSession } from "../dist/index.js";
import { loadFixture } from "./cases-ssh.mjs";
import { assert, markdownTable, nowMs, smallText, summarize } from "./lib.mjs";

const argv = process.argv.slice(2);
const opt = (name, dflt) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const N = Number(opt("iterations", "300"));
const COMMAND = opt("command", "echo hello");
const load = () => readFileSync("/proc/loadavg", "utf8").trim();

/** The runner's source with timestamps added; each anchor must be found once. */
function tracedInit(traceFile) {
	let src = runnerInit();
	const patch = (anchor, replacement) => {
		const at = src.indexOf(anchor);
		assert(at >= 0 && src.indexOf(anchor, at + 1) < 0, `runner trace anchor not found once: ${anchor}`);
		src = src.slice(0, at) + replacement + src.slice(at + anchor.length);
	};
	// The source is a shell-quoted python program: patch the python text inside the quotes.
	const q = (py) => py.replaceAll("'", `'\\''`);
	patch(
		"pending_out = bytearray()",
		q(`pending_out = bytearray()
TR = {"sel": 0.0, "recv": 0.0, "turn": 0, "done": [], "f": open(${JSON.stringify(traceFile)}, "a")}`),
	);
	patch(
		q(`    view = memoryview(bytes(pending_out))`),
		q(`    fl0 = time.monotonic()
    view = memoryview(bytes(pending_out))`),
	);
	patch(
		q(`        except InterruptedError:
            pass
`),
		q(`        except InterruptedError:
            pass
    fl = time.monotonic()
    for t in TR["done"]:
        TR["f"].write("%d %r %r %r %r %r %r %r %r %r %r %r\\n" % (t["id"], t["recv"], t["run"], t["sp0"], t["sp1"], t.get("rd", 0.0), t.get("ex", 0.0), t.get("fin0", 0.0), t.get("fin", 0.0), fl0, fl, TR["turn"] - t["turn"]))
    TR["f"].flush()
    TR["done"] = []
`),
	);
	patch(
		q(`    r, w = os.pipe()
    try:
        pid, proc = spawn(`),
		q(`    r, w = os.pipe()
    j.t = {"id": jid, "recv": TR["recv"], "run": TR["run"], "sp0": time.monotonic(), "turn": TR["turn"]}
    try:
        pid, proc = spawn(`),
	);
	patch(
		q(`def run(jid, cwd, cmd, env, tag):\n`),
		q(`def run(jid, cwd, cmd, env, tag):\n    TR["run"] = time.monotonic()\n`),
	);
	patch(
		q(`    os.close(w)\n    # Pids`),
		q(`    os.close(w)\n    j.t["sp1"] = time.monotonic()\n    # Pids`),
	);
	patch(
		q(`            ready = select.select(fds, [], [], timeout)[0]`),
		q(`            ready = select.select(fds, [], [], timeout)[0]
            TR["sel"] = time.monotonic()
            TR["turn"] += 1`),
	);
	patch(
		q(`            if j.r is not None and j.r in ready:`),
		q(`            if j.r is not None and j.r in ready:
                j.t.setdefault("rd", TR["sel"])`),
	);
	patch(
		q(`                    j.status, j.exited = st, time.monotonic()`),
		q(`                    j.status, j.exited = st, time.monotonic()
                    j.t["ex"] = j.exited`),
	);
	patch(q(`    j = jobs.pop(jid)\n`), q(`    j = jobs.pop(jid)\n    j.t["fin0"] = time.monotonic()\n`));
	patch(
		q(`    send(b"d", jid)

def exited`),
		q(`    j.t["fin"] = time.monotonic()
    TR["done"].append(j.t)
    send(b"d", jid)

def exited`),
	);
	patch(
		q(`            b = os.read(0, 65536)`),
		q(`            b = os.read(0, 65536)\n            TR["recv"] = TR["sel"]`),
	);
	return src;
}

/** Client-side instants of the traced runner's jobs, by job id. */
const clientT = new Map();
const origStart = CommandRunner.prototype.start;
const origFrame = CommandRunner.prototype.frame;
const origOnStdout = CommandRunner.prototype.onStdout;
let chunkAt = 0;

function traceClient(runner) {
	runner.start = function (job) {
		const t0 = nowMs();
		const id = origStart.call(this, job);
		clientT.set(id, { start: t0, written: nowMs() });
		return id;
	};
	runner.onStdout = function (c) {
		chunkAt = nowMs();
		return origOnStdout.call(this, c);
	};
	runner.frame = function (kind, id, payload) {
		const t = clientT.get(id);
		if (t && kind === "d") {
			t.chunk = chunkAt;
			t.done = nowMs();
		}
		return origFrame.call(this, kind, id, payload);
	};
}

/** posix_spawn of bash by python3, as the runner starts a command: the medians over N. */
function bashAlone(command, n) {
	const py = `
import os, sys, time
n, cmd = int(sys.argv[1]), sys.argv[2]
env = dict(os.environ); env["LC_ALL"] = "C"
def one(argv):
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = os.posix_spawn(argv[0], argv, env, setsid=True, file_actions=[
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_DUP2, w, 2)])
    t1 = time.monotonic()
    os.close(w)
    while os.read(r, 65536):
        pass
    t2 = time.monotonic()
    os.waitpid(pid, 0)
    t3 = time.monotonic()
    os.close(r)
    return t1 - t0, t2 - t0, t3 - t0
kinds = {"bash": ["/bin/bash", "--norc", "--noprofile", "-c", cmd], "sh": ["/bin/sh", "-c", cmd], "true": ["/bin/true"]}
out = {k: [] for k in kinds}
for _ in range(n):
    for k, a in kinds.items():
        out[k].append(one(a))
for k, v in out.items():
    cols = [sorted(c) for c in zip(*v)]
    print(k, *["%.3f" % (c[len(c) // 2] * 1000) for c in cols])
`;
	const text = execFileSync("/usr/bin/python3", ["-c", py, String(n), command], { encoding: "utf8" });
	return text
		.trim()
		.split("\n")
		.map((l) => l.split(" "));
}

async function main() {
	const dir = mkdtempSync(join(tmpdir(), "keel-ssh-stages-"));
	const { startSshd, sshOptions } = await loadFixture(dir);
	const sshd = await startSshd();
	const root = join(dir, "remote");
	mkdirSync(root);
	writeFileSync(join(root, "small.txt"), smallText());
	const traceFile = join(dir, "trace.txt");
	const conn = new SshConnection(sshOptions(sshd));
	try {
		const live = await conn.get();
		const runner = new CommandRunner(channelPipe(await openChannel(live.client)), tracedInit(traceFile));
		await runner.ready;
		live.runner = { promise: Promise.resolve(runner), current: runner };
		traceClient(runner);
		const backend = {
			kind: "ssh",
			target: conn.label,
			fs: createSshFs(conn, {}),
			exec: createSshExec(conn),
			search: createSshSearch(conn, {}),
			process: createSshProcess(conn, undefined),
			close: () => conn.close(),
		};
		const session = await createSession({ root, backend });
		const runOnce = (cwd) =>
			new Promise((resolve, reject) => {
				let out = "";
				runner.start({
					cwd,
					command: COMMAND,
					env: {},
					tag: "0123456789abcdef0123456789abcdef",
					onData: (c) => {
						out += c;
					},
					onStarted: () => {},
					onExit: () => {},
					onDone: (i) => resolve({ out, ...i }),
					onLost: reject,
				});
			});
		const contenders = {
			"session bash": async () => {
				const r = await session.call("bash", { command: COMMAND });
				assert(r.ok, `bash failed: ${JSON.stringify(r.error)}`);
			},
			"exec.run": async () => {
				const r = await backend.exec.run({ command: COMMAND, cwd: root, onData: () => {} });
				assert(r.exitCode === 0, "exec.run failed");
			},
			"runner request": async () => {
				const r = await runOnce(root);
				assert(!r.noCwd && r.out.length > 0, "runner request failed");
			},
			"runner, no cwd": async () => {
				const r = await runOnce(join(root, "absent"));
				assert(r.noCwd, "the no-cwd request started something");
			},
			"channel floor": async () => {
				const r = await live.helper.request("true");
				assert(r.status === 0, "floor");
			},
			"shell helper runs bash (cases-ssh's bash-start row)": async () => {
				const r = await live.helper.request("bash", "--norc", "--noprofile", "-c", COMMAND);
				assert(r.status === 0, "helper bash failed");
			},
			"session read": async () => {
				const r = await session.call("read", { path: "small.txt" });
				assert(r.ok, "read failed");
			},
			"helper k_look (the read's one request)": async () => {
				const r = await live.py.request("k_look", join(root, "small.txt"), String(256 * 1024));
				assert(r.status === 0 && r.bytes.length > 1000, "helper k_look failed");
			},
			"helper k_lstat (read's floor)": async () => {
				const r = await live.py.request("k_lstat", join(root, "small.txt"));
				assert(r.status === 0, "helper request failed");
			},
		};
		const names = Object.keys(contenders);
		for (let i = 0; i < 20; i++) for (const n of names) await contenders[n]();
		writeFileSync(traceFile, "");
		clientT.clear();
		const loadBefore = load();
		const samples = Object.fromEntries(names.map((n) => [n, []]));
		/** Ids of the traced `runner request` calls (the other runner calls are left out). */
		const traced = new Set();
		for (let i = 0; i < N; i++) {
			for (let k = 0; k < names.length; k++) {
				const n = names[(i + k) % names.length];
				const before = runner.nextId;
				const t0 = nowMs();
				await contenders[n]();
				samples[n].push(nowMs() - t0);
				if (n === "runner request") traced.add(before);
			}
		}
		const loadAfter = load();
		const med = (a) => summarize(a).median;
		const fmt = (x) => x.toFixed(3);
		const rows = names.map((n) => {
			const s = summarize(samples[n]);
			return [n, fmt(s.median), fmt(s.p95)];
		});
		// The stages of the traced runner requests: host instants (seconds) to ms on node's clock.
		const stages = {
			"client: start() to request written": [],
			"request written → runner select wakes (sshd relay, client→host)": [],
			"runner: select wake → read, split, JSON → run()": [],
			"runner: run() → posix_spawn (env, mark, pipe)": [],
			"posix_spawn call (runner blocked)": [],
			"spawn returned → pipe readable (bash start, echo)": [],
			"pipe readable → exit seen": [],
			"exit seen → finish starts": [],
			"finish: drain, group kill, sweep, waitpid": [],
			"finish → frames written": [],
			"frames written → client has d (sshd relay, host→client)": [],
			"client: chunk parsed to d handled": [],
			"total: start() to d": [],
			"select turns per command": [],
		};
		for (const line of readFileSync(traceFile, "utf8").trim().split("\n")) {
			const [id, ...rest] = line.split(" ");
			if (!traced.has(Number(id))) continue;
			const [recv, run, sp0, sp1, rd, ex, fin0, fin, , fl, turns] = rest.map(Number);
			const c = clientT.get(Number(id));
			if (!c) continue;
			const ms = (s) => s * 1000;
			const push = (k, v) => stages[k].push(v);
			push("client: start() to request written", c.written - c.start);
			push("request written → runner select wakes (sshd relay, client→host)", ms(recv) - c.written);
			push("runner: select wake → read, split, JSON → run()", ms(run - recv));
			push("runner: run() → posix_spawn (env, mark, pipe)", ms(sp0 - run));
			push("posix_spawn call (runner blocked)", ms(sp1 - sp0));
			push("spawn returned → pipe readable (bash start, echo)", rd ? ms(rd - sp1) : Number.NaN);
			push("pipe readable → exit seen", rd ? ms(ex - rd) : Number.NaN);
			push("exit seen → finish starts", ms(fin0 - ex));
			push("finish: drain, group kill, sweep, waitpid", ms(fin - fin0));
			push("finish → frames written", ms(fl - fin));
			push("frames written → client has d (sshd relay, host→client)", c.chunk - ms(fl));
			push("client: chunk parsed to d handled", c.done - c.chunk);
			push("total: start() to d", c.done - c.start);
			push("select turns per command", turns);
		}
		const stageRows = Object.entries(stages).map(([k, v]) => [
			k,
			fmt(med(v.filter((x) => !Number.isNaN(x)))),
			String(v.length),
		]);
		const alone = bashAlone(COMMAND, N);
		process.stdout.write(
			`\`node bench/ssh-stages.mjs --iterations=${N}\`, command \`${COMMAND}\`, load ${loadBefore} before, ${loadAfter} after:\n\n` +
				`${markdownTable(["contender", "median (ms)", "p95 (ms)"], rows)}\n\n` +
				`Stages of the \`runner request\` calls (medians of each stage, so they need not add up):\n\n` +
				`${markdownTable(["stage", "median (ms)", "n"], stageRows)}\n\n` +
				`The command started by a python3 loop with posix_spawn, LC_ALL=C, N=${N} (load ${load()} after):\n\n` +
				`${markdownTable(
					["argv", "posix_spawn returns (ms)", "pipe EOF (ms)", "reaped (ms)"],
					alone.map(([k, ...v]) => [
						k === "bash" ? "bash --norc --noprofile -c" : k === "sh" ? "sh -c" : "/bin/true",
						...v,
					]),
				)}\n`,
		);
		await session.close();
	} finally {
		await conn.close();
		await sshd.stop();
		rmSync(dir, { recursive: true, force: true });
	}
}

await main();
