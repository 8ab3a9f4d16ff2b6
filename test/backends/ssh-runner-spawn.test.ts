/**
 * How the ssh backend's command runner starts a command (src/backend/remote/host/runner_procs.py:
 * posix_spawn, else subprocess.Popen), attacked from the login side: the shell sshd starts the
 * runner's channel through sources an rc file (sshd's SetEnv BASH_ENV) that leaves descriptors
 * open, one of them writable. A command must get none of them, sit in its own session, and have
 * SIGPIPE and SIGXFSZ at their defaults (Python ignores both). The server is this machine, so
 * /proc here is the host's /proc.
 */

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SshBackend } from "../../src/backend/ssh/index.js";
import { pythonMissing, useSshBackend } from "../fixtures/ssh-backend.js";
import { sshdMissing } from "../fixtures/sshd.js";

const missing = sshdMissing() ?? pythonMissing();
if (missing) console.warn(`skipping the ssh runner spawn tests: ${missing}`);

let b: SshBackend;
let dir: string;

const live = useSshBackend(missing, async () => {
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-spawn-"));
	// Every non-interactive bash of the session runs this, the one that execs the runner included.
	await writeFile(
		join(dir, "rc.sh"),
		`exec 7</etc/hostname 8>>${join(dir, "leak.txt")} 9<>${join(dir, "rw.txt")}\n`,
	);
	return { setEnv: { BASH_ENV: join(dir, "rc.sh") } };
});

beforeAll(() => {
	if (!missing) b = live.backend;
});

afterAll(async () => {
	if (dir) await rm(dir, { recursive: true, force: true });
});

async function run(command: string): Promise<{ exitCode: number | null; out: string }> {
	let out = "";
	const r = await b.exec.run({ command, cwd: dir, onData: (c) => (out += Buffer.from(c).toString("utf8")) });
	return { exitCode: r.exitCode, out };
}

describe.skipIf(missing)("ssh command runner: how a command starts", () => {
	it("the descriptors the login shell left open never reach a command", async () => {
		// The runner itself inherited them (the attack is in place)...
		const runner = await run("ls /proc/$PPID/fd; true");
		expect(runner.exitCode).toBe(0);
		const runnerFds = runner.out.trim().split("\n").map(Number);
		expect(runnerFds).toEqual(expect.arrayContaining([0, 1, 2, 7, 8, 9]));
		// ...and the command has only its own three. `; true` keeps bash from exec'ing ls.
		const r = await run("ls /proc/$$/fd; true");
		expect(r.exitCode).toBe(0);
		expect(r.out.trim().split("\n").map(Number).sort()).toEqual([0, 1, 2]);
		// Nor can it write through one: fd 8 and 9 are not open in the command.
		const w = await run("echo leaked >&8; echo leaked >&9; echo done");
		expect(w.out).toContain("done");
		expect(await readFile(join(dir, "leak.txt"), "utf8")).toBe("");
		expect(await readFile(join(dir, "rw.txt"), "utf8")).toBe("");
	});

	it("each command leads its own session and process group, stdin /dev/null, SIGPIPE and SIGXFSZ at their defaults", async () => {
		const r = await run(
			"read -r pid comm state ppid pgrp sid rest < /proc/$$/stat; echo $$ $pgrp $sid; grep SigIgn /proc/$$/status; readlink /proc/$$/fd/0; true",
		);
		const [ids, ign, stdin] = r.out.trim().split("\n");
		const [pid, pgrp, sid] = ids.split(" ").map(Number);
		expect(pgrp).toBe(pid);
		expect(sid).toBe(pid);
		const ignored = BigInt(`0x${ign.split(/\s+/)[1]}`);
		expect(ignored & (1n << 12n)).toBe(0n); // SIGPIPE (13)
		expect(ignored & (1n << 24n)).toBe(0n); // SIGXFSZ (25)
		expect(stdin).toBe("/dev/null");
		// A writer into a closed pipe dies of SIGPIPE, as in a terminal.
		const pipe = await run("yes | head -c 1 >/dev/null; echo $PIPESTATUS");
		expect(pipe.out.trim()).toBe("141");
	});

	it("commands in different directories each start in their own; a missing one fails, the next works", async () => {
		const a = await b.exec.run({ command: "pwd", cwd: "/", onData() {} });
		expect(a.exitCode).toBe(0);
		expect((await run("pwd")).out).toBe(`${dir}\n`);
		const gone = b.exec.run({ command: "pwd", cwd: join(dir, "missing"), onData() {} });
		await expect(gone).rejects.toMatchObject({ code: "ENOENT" });
		expect((await run("pwd")).out).toBe(`${dir}\n`);
	});
});
