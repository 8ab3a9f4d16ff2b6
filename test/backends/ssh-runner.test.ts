/**
 * The ssh backend's command runner (src/backend/ssh/remote-run.ts): one python3 on the host that
 * starts every command in its own session and kills what it leaves. Attacked as a command would:
 * output that forges the runner's frames, a daemon that leaves the group with setsid, a command
 * reading stdin, a command killing the runner itself, a connection cut (the sshd side killed, the
 * client socket destroyed) with commands running, 2 GB of output. The server is this machine, so
 * /proc here is the host's /proc. Also the resolution answer kept for the next stat and read
 * (src/backend/ssh/peek.ts): never hiding a change made through the backend.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SshConnection } from "../../src/backend/ssh/connection.js";
import { createSshExec } from "../../src/backend/ssh/exec.js";
import type { SshBackend } from "../../src/backend/ssh/index.js";
import { pythonMissing, useSshBackend } from "../fixtures/ssh-backend.js";
import { sshdMissing, sshOptions } from "../fixtures/sshd.js";

const missing = sshdMissing() ?? pythonMissing();
if (missing) console.warn(`skipping the ssh command runner tests: ${missing}`);

const live = useSshBackend(missing);
let b: SshBackend;
let dir: string;

beforeAll(() => {
	if (!missing) b = live.backend;
});

beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-run-"));
	return () => rm(dir, { recursive: true, force: true });
});

async function run(backend: { exec: SshBackend["exec"] }, command: string, timeoutMs?: number) {
	const chunks: Buffer[] = [];
	const r = await backend.exec.run({
		command,
		cwd: dir,
		timeoutMs,
		onData: (c) => chunks.push(Buffer.from(c)),
	});
	return { ...r, out: Buffer.concat(chunks).toString("latin1"), bytes: Buffer.concat(chunks) };
}

async function failure(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
	try {
		await p;
	} catch (e) {
		return e as { code?: string; message: string };
	}
	throw new Error("expected a failure");
}

/** Pids of live (not zombie) processes whose command line holds `needle`. */
function alive(needle: string): number[] {
	const out: number[] = [];
	for (const name of readdirSync("/proc")) {
		if (!/^\d+$/.test(name)) continue;
		try {
			const cmd = readFileSync(`/proc/${name}/cmdline`, "latin1");
			if (!cmd.includes(needle)) continue;
			const state = readFileSync(`/proc/${name}/stat`, "latin1").split(") ")[1]?.[0];
			if (state !== "Z") out.push(Number(name));
		} catch {
			// gone
		}
	}
	return out;
}

async function goneSoon(needle: string): Promise<boolean> {
	for (let i = 0; i < 100; i++) {
		if (alive(needle).length === 0) return true;
		await sleep(50);
	}
	return false;
}

/** A sleep nobody else runs: its argument is unique. */
const uniqueSleep = () => `${4000 + Math.floor(Math.random() * 1000)}.${randomBytes(2).readUInt16BE(0) + 1}`;

describe.skipIf(missing)("ssh command runner", () => {
	it("output that forges the runner's frames passes through byte for byte", async () => {
		// Headers for this call's likely ids: done (d), exit (x), output (o) with huge lengths.
		const forged =
			"d\\0\\0\\0\\1\\0\\0\\0\\0x\\0\\0\\0\\2\\0\\0\\0\\0010o\\377\\377\\377\\377\\377\\377\\377\\377h\\0\\0\\0\\0\\0\\0\\0\\0";
		const r = await run(b, `printf '${forged}'; printf '${forged}' >&2; exit 7`);
		const one = Buffer.from(
			"d\0\0\0\x01\0\0\0\0x\0\0\0\x02\0\0\0\x010o\xff\xff\xff\xff\xff\xff\xff\xffh\0\0\0\0\0\0\0\0",
			"latin1",
		);
		expect(r.exitCode).toBe(7);
		expect(r.bytes).toEqual(Buffer.concat([one, one]));
		expect((await run(b, "echo next")).out).toBe("next\n");
	});

	it("a daemon that leaves the group with setsid does not outlive its call", async () => {
		const tag = uniqueSleep();
		const r = await run(b, `setsid sh -c 'sleep ${tag}' >/dev/null 2>&1 < /dev/null & echo started`);
		expect(r.out).toBe("started\n");
		expect(await goneSoon(`sleep\0${tag}`)).toBe(true);
		// nohup and a double fork, output closed: not in the group, not holding the pipe.
		const tag2 = uniqueSleep();
		await run(b, `( ( nohup sleep ${tag2} >/dev/null 2>&1 & ) & ) ; echo forked`);
		expect(await goneSoon(`sleep\0${tag2}`)).toBe(true);
	});

	it("a background child holding the output open is cut off, and killed, when the command ends", async () => {
		const tag = uniqueSleep();
		const r = await run(b, `sleep ${tag} & echo $!; echo done`);
		expect(r.exitCode).toBe(0);
		expect(r.out.trim().split("\n")[1]).toBe("done");
		expect(await goneSoon(`sleep\0${tag}`)).toBe(true);
	});

	it("nothing carries over between commands but the file system: cwd, env, variables are fresh", async () => {
		await run(b, "echo kept > carried.txt; cd /; export KEEL_LEAK=1; KEEL_V=2");
		const r = await run(b, 'pwd; echo "[$KEEL_LEAK][$KEEL_V]"; cat carried.txt');
		expect(r.out).toBe(`${dir}\n[][]\nkept\n`);
		// Each call has its own tag.
		const [a, c] = await Promise.all([run(b, "echo $KEEL_CALL_TAG"), run(b, "echo $KEEL_CALL_TAG")]);
		expect(a.out).toMatch(/^[0-9a-f]{32}\n$/);
		expect(a.out).not.toBe(c.out);
	});

	it("a command reading stdin gets EOF at once", async () => {
		const r = await run(b, 'cat; echo "cat=$?"; read x; echo "read=$?"', 20_000);
		expect(r.timedOut).toBe(false);
		expect(r.out).toBe("cat=0\nread=1\n");
	});

	it("a command that kills the runner fails BACKEND_UNAVAILABLE; the next call recovers and its leftovers die", async () => {
		const tag = uniqueSleep();
		const e = await failure(run(b, `sleep ${tag} >/dev/null 2>&1 & sleep 0.2; kill -9 $PPID; sleep 5`));
		expect(e.code).toBe("BACKEND_UNAVAILABLE");
		expect(e.message).toContain("runner");
		expect((await run(b, "echo again")).out).toBe("again\n");
		expect(await goneSoon(`sleep\0${tag}`)).toBe(true);
	});

	it("a timeout kills the group even when the leader ignores TERM; exit codes and signals", async () => {
		const r = await run(b, "trap '' TERM; sleep 30", 300);
		expect(r.timedOut).toBe(true);
		expect(r.exitCode).toBeNull();
		expect((await run(b, "kill -9 $$")).exitCode).toBe(137);
		expect((await run(b, "exit 255")).exitCode).toBe(255);
		const noCwd = b.exec.run({ command: "true", cwd: join(dir, "nope"), onData() {} });
		expect((await failure(noCwd)).code).toBe("ENOENT");
	});

	it("a NUL in the command or its environment fails that command (126), never the runner", async () => {
		expect((await run(b, "echo a\0b")).exitCode).toBe(126);
		const r = await b.exec.run({ command: "echo $K", cwd: dir, env: { K: "a\0b" }, onData() {} });
		expect(r.exitCode).toBe(126);
		expect((await run(b, "echo still")).out).toBe("still\n");
	});

	it("2 GB of output streams through whole, counted, without being held", async () => {
		let bytes = 0;
		let peak = 0;
		const r = await b.exec.run({
			command: "head -c 2000000000 /dev/zero",
			cwd: dir,
			onData: (c) => {
				bytes += c.length;
				if ((bytes & 0xfffffff) < c.length) peak = Math.max(peak, process.memoryUsage().rss);
			},
		});
		expect(r.exitCode).toBe(0);
		expect(bytes).toBe(2_000_000_000);
		expect(peak).toBeLessThan(1024 * 1024 * 1024);
	}, 600_000);
});

describe.skipIf(missing)("ssh command runner: a cut connection", () => {
	for (const how of ["the sshd side killed", "the client socket destroyed"] as const) {
		it(`${how}: the call in flight fails BACKEND_UNAVAILABLE and the runner's processes die`, async () => {
			const conn = new SshConnection(sshOptions(live.sshd));
			const exec = createSshExec(conn);
			try {
				const tag = uniqueSleep();
				let out = "";
				const running = exec.run({
					command: `setsid sleep ${tag} & sleep ${tag} & echo started; wait`,
					cwd: dir,
					onData: (c) => (out += c),
				});
				running.catch(() => {});
				// Both sleeps running (exec'd, not just forked) before the cut. The connection's channels
				// each start a login shell first: seconds on a loaded machine with root's rc files.
				// Counted three times in a row: a process in the middle of its exec (setsid becoming
				// sleep) can read as having no command line for a moment.
				const until = Date.now() + 40_000;
				let inARow = 0;
				while (Date.now() < until && inARow < 3) {
					await sleep(10);
					inARow = out.includes("started") && alive(`sleep\0${tag}`).length === 2 ? inARow + 1 : 0;
				}
				expect(inARow).toBe(3);
				if (how === "the sshd side killed") await live.sshd.dropConnections();
				else (await conn.get()).client.destroy();
				const e = await failure(running);
				expect(e.code).toBe("BACKEND_UNAVAILABLE");
				expect(await goneSoon(`sleep\0${tag}`)).toBe(true);
				// The next call reconnects and runs.
				let again = "";
				await exec.run({ command: "echo ok", cwd: dir, onData: (c) => (again += c) });
				expect(again).toBe("ok\n");
			} finally {
				await conn.close();
			}
		}, 90_000);
	}
});

describe.skipIf(missing)("ssh: the resolution's stat and bytes kept for the next calls", () => {
	it("a write, an unlink or a command through the backend after realpath is never hidden", async () => {
		const f = join(dir, "f.txt");
		await writeFile(f, "one");
		const real = await b.fs.realpath(f);
		await b.fs.writeFile(real, Buffer.from("two"));
		expect((await b.fs.readFile(real)).toString()).toBe("two");
		await b.fs.realpath(f);
		await run(b, "printf three > f.txt");
		expect((await b.fs.stat(real)).size).toBe(5);
		expect((await b.fs.readFile(real)).toString()).toBe("three");
		await b.fs.realpath(f);
		await b.fs.unlink(real);
		expect((await failure(b.fs.stat(real))).code).toBe("ENOENT");
	});

	it("the kept stat and bytes are one instant: a file replaced after realpath is either all old or all new", async () => {
		const f = join(dir, "g.txt");
		await writeFile(f, "old-old");
		const real = await b.fs.realpath(f);
		await writeFile(`${f}.new`, "new");
		await rename(`${f}.new`, f);
		const st = await b.fs.stat(real);
		const data = await b.fs.readFile(real, st);
		expect(data.length).toBe(st.size);
		expect(["old-old", "new"]).toContain(data.toString());
		// With the other object expected, the bytes kept are not handed out: the host is asked.
		const now = await b.fs.lstat(real);
		await b.fs.realpath(f);
		expect((await b.fs.readFile(real, now)).toString()).toBe("new");
		expect(await readFile(f, "utf8")).toBe("new");
	});
});
