/**
 * The ssh backend against a real sshd on 127.0.0.1 (test/fixtures/sshd.ts): every FileOps and
 * ExecOps operation, and the tools through Session.call on a remote temp dir. The server runs on
 * this machine, so the tests can check remote results with node:fs as well.
 */
import { createHash, randomBytes } from "node:crypto";
import {
	lstat,
	mkdir,
	mkdtemp,
	readdir,
	readFile,
	rm,
	stat,
	symlink,
	utimes,
	writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SshBackend } from "../../src/backend/ssh/index.js";
import type { FileStat } from "../../src/backend/types.js";
import { KeelError } from "../../src/boundary/errors.js";
import { type CallResult, Session } from "../../src/session.js";
import { useSshBackend } from "../fixtures/ssh-backend.js";
import { sshdMissing } from "../fixtures/sshd.js";

const missing = sshdMissing();
if (missing) console.warn(`skipping the ssh backend tests: ${missing}`);

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

let b: SshBackend;
let rcDir: string;
let dir: string;

const live = useSshBackend(missing, async () => {
	// An rc file every non-interactive bash of the ssh session sources (through sshd's SetEnv
	// BASH_ENV): it counts how often it ran.
	rcDir = await mkdtemp(join(tmpdir(), "keel-ssh-rc-"));
	await writeFile(join(rcDir, "rc.sh"), "export KEEL_RC_RUNS=$((KEEL_RC_RUNS+1))\n");
	return { setEnv: { BASH_ENV: join(rcDir, "rc.sh") } };
});

beforeAll(() => {
	if (!missing) b = live.backend;
});

afterAll(async () => {
	if (rcDir) await rm(rcDir, { recursive: true, force: true });
});

beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-"));
});
afterEach(async () => {
	await rm(dir, { recursive: true, force: true });
});

const p = (name: string) => join(dir, name);

async function run(command: string, opts: { cwd?: string; timeoutMs?: number; signal?: AbortSignal } = {}) {
	let out = "";
	const r = await b.exec.run({ command, cwd: opts.cwd ?? dir, onData: (c) => (out += c), ...opts });
	return { ...r, out };
}

async function caught(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
	try {
		await promise;
	} catch (e) {
		return e as { code?: string; message: string };
	}
	throw new Error("expected a failure");
}

/** The local view of a remote file's identity (the server is this machine). */
async function localStat(path: string): Promise<Omit<FileStat, "type">> {
	const s = await lstat(path, { bigint: true });
	return {
		size: Number(s.size),
		mode: Number(s.mode) & 0o7777,
		dev: s.dev,
		ino: s.ino,
		mtimeNs: s.mtimeNs,
		ctimeNs: s.ctimeNs,
	};
}

async function leftoverTemps(d = dir): Promise<string[]> {
	return (await readdir(d)).filter((n) => n.startsWith(".keel-tmp-"));
}

describe.skipIf(missing)("ssh backend: file operations", () => {
	it("stat and lstat give the remote identity (dev, inode, nanosecond times)", async () => {
		await writeFile(p("f.txt"), "hello\n");
		await symlink("f.txt", p("link"));
		const st = await b.fs.stat(p("link"));
		expect(st.type).toBe("file");
		expect(st).toMatchObject(await localStat(p("f.txt")));
		const lst = await b.fs.lstat(p("link"));
		expect(lst.type).toBe("symlink");
		expect(lst.ino).toBe((await lstat(p("link"), { bigint: true })).ino);
		expect((await b.fs.stat(dir)).type).toBe("dir");
		expect((await caught(b.fs.stat(p("nope")))).code).toBe("ENOENT");
		expect((await caught(b.fs.lstat(p("f.txt/x")))).code).toBe("ENOTDIR");
	});

	it("realpath resolves links on the remote side and fails like realpath(3)", async () => {
		await mkdir(p("real"));
		await symlink(p("real"), p("via"));
		await symlink("loop2", p("loop1"));
		await symlink("loop1", p("loop2"));
		await symlink("nowhere", p("dangling"));
		expect(await b.fs.realpath(p("via"))).toBe(p("real"));
		expect(await b.fs.realpath(`${p("via")}/../via/.`)).toBe(p("real"));
		expect((await caught(b.fs.realpath(p("missing")))).code).toBe("ENOENT");
		expect((await caught(b.fs.realpath(p("dangling")))).code).toBe("ENOENT");
		expect((await caught(b.fs.realpath(p("loop1")))).code).toBe("ELOOP");
		expect(await b.fs.readlink(p("dangling"))).toBe("nowhere");
	});

	it("creates exclusively with link(2): a second create is WRITE_COLLISION, nothing is left behind", async () => {
		const st = await b.fs.writeFile(p("new.txt"), Buffer.from("one\n"), { expect: "absent" });
		expect(await readFile(p("new.txt"), "utf8")).toBe("one\n");
		expect(st).toMatchObject(await localStat(p("new.txt")));
		expect(st.mode).toBe(0o644);
		const e = await caught(b.fs.writeFile(p("new.txt"), Buffer.from("two\n"), { expect: "absent" }));
		expect(e).toBeInstanceOf(KeelError);
		expect((e as KeelError).code).toBe("WRITE_COLLISION");
		expect(await readFile(p("new.txt"), "utf8")).toBe("one\n");
		expect(await leftoverTemps()).toEqual([]);
	});

	it("creates missing parent directories, and a new file's mode", async () => {
		await b.fs.writeFile(p("a/b/c.txt"), Buffer.from("x"), { expect: "absent", mkdirs: true, mode: 0o600 });
		expect(await readFile(p("a/b/c.txt"), "utf8")).toBe("x");
		expect((await stat(p("a/b/c.txt"))).mode & 0o777).toBe(0o600);
	});

	it("compare-and-swap: replaces when unchanged, refuses (and keeps the other bytes) when changed", async () => {
		await writeFile(p("f.txt"), "v1\n", { mode: 0o640 });
		const st = await b.fs.stat(p("f.txt"));
		const next = await b.fs.writeFile(p("f.txt"), Buffer.from("v2\n"), {
			expect: { stat: st, sha256: sha("v1\n") },
		});
		expect(await readFile(p("f.txt"), "utf8")).toBe("v2\n");
		expect(next.mode).toBe(0o640); // an overwrite keeps the mode
		expect(next.ino).not.toBe(st.ino); // renamed into place
		// Another writer: same size, mtime put back: only the bytes and ctime tell.
		const before = await stat(p("f.txt"));
		await writeFile(p("f.txt"), "v3\n");
		await utimes(p("f.txt"), before.atime, before.mtime);
		const e = await caught(
			b.fs.writeFile(p("f.txt"), Buffer.from("mine\n"), { expect: { stat: next, sha256: sha("v2\n") } }),
		);
		expect((e as KeelError).code).toBe("CHANGED_ON_DISK");
		expect(await readFile(p("f.txt"), "utf8")).toBe("v3\n");
		// Same bytes, new identity (a rename over it): still refused.
		const cur = await b.fs.stat(p("f.txt"));
		await writeFile(p("other"), "v3\n");
		await rm(p("f.txt"));
		await writeFile(p("f.txt"), "v3\n");
		const e2 = await caught(
			b.fs.writeFile(p("f.txt"), Buffer.from("mine\n"), { expect: { stat: cur, sha256: sha("v3\n") } }),
		);
		expect((e2 as KeelError).code).toBe("CHANGED_ON_DISK");
		expect(await leftoverTemps()).toEqual([]);
	});

	it("an unconditional replace, and a write over a directory is EISDIR", async () => {
		await writeFile(p("f.txt"), "old");
		await b.fs.writeFile(p("f.txt"), Buffer.from("new"));
		expect(await readFile(p("f.txt"), "utf8")).toBe("new");
		await mkdir(p("d"));
		expect((await caught(b.fs.writeFile(p("d"), Buffer.from("x")))).code).toBe("EISDIR");
		expect((await caught(b.fs.writeFile(p("f.txt/x"), Buffer.from("x")))).code).toBe("ENOTDIR");
		expect((await caught(b.fs.writeFile(p("none/x"), Buffer.from("x")))).code).toBe("ENOENT");
	});

	it("binary and large files are byte-exact both ways (5 MB)", async () => {
		const big = randomBytes(5 * 1024 * 1024 + 123);
		const st = await b.fs.writeFile(p("big.bin"), big, { expect: "absent" });
		expect(sha(await readFile(p("big.bin")))).toBe(sha(big));
		const back = await b.fs.readFile(p("big.bin"), st);
		expect(back.length).toBe(big.length);
		expect(back.equals(big)).toBe(true);
		const bin = Buffer.from([0, 1, 2, 255, 0x1f, 10, 13, 0]);
		await writeFile(p("small.bin"), bin);
		expect((await b.fs.readFile(p("small.bin"))).equals(bin)).toBe(true);
		await writeFile(p("empty"), "");
		expect((await b.fs.readFile(p("empty"))).length).toBe(0);
		expect(await b.fs.hashFile(p("big.bin"))).toBe(sha(big));
	});

	it("readFile refuses a link at the last component and an object other than the expected one", async () => {
		await writeFile(p("a.txt"), "A");
		await writeFile(p("b.txt"), "B");
		await symlink("a.txt", p("l"));
		expect((await caught(b.fs.readFile(p("l")))).code).toBe("ELOOP");
		const stA = await b.fs.stat(p("a.txt"));
		const e = await caught(b.fs.readFile(p("b.txt"), stA));
		expect((e as KeelError).code).toBe("CHANGED_ON_DISK");
		expect((await caught(b.fs.readFile(p("none")))).code).toBe("ENOENT");
	});

	it("readdir lists entries with their own types; with expect it must be that directory", async () => {
		await mkdir(p("sub"));
		await writeFile(p("f"), "");
		await symlink("f", p("ln"));
		const entries = await b.fs.readdir(dir, await b.fs.stat(dir));
		expect(entries.sort((x, y) => x.name.localeCompare(y.name))).toEqual([
			{ name: "f", type: "file" },
			{ name: "ln", type: "symlink" },
			{ name: "sub", type: "dir" },
		]);
		const e = await caught(b.fs.readdir(p("sub"), await b.fs.stat(dir)));
		expect((e as KeelError).code).toBe("CHANGED_ON_DISK");
	});

	it("mkdirp, copyFile (verified), hashFile", async () => {
		await b.fs.mkdirp(p("x/y/z"));
		expect((await stat(p("x/y/z"))).isDirectory()).toBe(true);
		await writeFile(p("src.bin"), randomBytes(100_000));
		const data = await readFile(p("src.bin"));
		const srcStat = await b.fs.lstat(p("src.bin"));
		await b.fs.copyFile(p("src.bin"), p("x/copy.bin"), {
			expect: "absent",
			sourceStat: srcStat,
			sha256: sha(data),
		});
		expect((await readFile(p("x/copy.bin"))).equals(data)).toBe(true);
		// The source changed since: refused, nothing written.
		await writeFile(p("src.bin"), "changed");
		const e = await caught(
			b.fs.copyFile(p("src.bin"), p("x/copy2.bin"), {
				expect: "absent",
				sourceStat: srcStat,
				sha256: sha(data),
			}),
		);
		expect((e as KeelError).code).toBe("CHANGED_ON_DISK");
		// A wrong hash (the content differs from what was promised): refused, no temp left.
		const now = await b.fs.lstat(p("src.bin"));
		const e2 = await caught(
			b.fs.copyFile(p("src.bin"), p("x/copy3.bin"), { expect: "absent", sourceStat: now, sha256: sha(data) }),
		);
		expect((e2 as KeelError).code).toBe("CHANGED_ON_DISK");
		expect(await readdir(p("x"))).toEqual(["copy.bin", "y"]);
		expect(await b.fs.hashFile(p("src.bin"))).toBe(sha("changed"));
	});

	it("unlink with expect removes only the expected object; never a directory", async () => {
		await writeFile(p("f"), "1");
		const st = await b.fs.lstat(p("f"));
		await writeFile(p("f"), "2");
		expect(((await caught(b.fs.unlink(p("f"), st))) as KeelError).code).toBe("CHANGED_ON_DISK");
		await b.fs.unlink(p("f"), await b.fs.lstat(p("f")));
		await expect(lstat(p("f"))).rejects.toThrow();
		await mkdir(p("d"));
		expect((await caught(b.fs.unlink(p("d")))).code).toBe("EISDIR");
		await symlink("d", p("ld"));
		await b.fs.unlink(p("ld"));
		expect((await stat(p("d"))).isDirectory()).toBe(true);
	});

	it("sweepTemps removes keel temp files by age (a pid means nothing on another host)", async () => {
		await writeFile(p(".keel-tmp-1-abcdef-old.txt"), "x");
		await writeFile(p(".keel-tmp-2-abcdef-fresh.txt"), "x");
		const old = new Date(Date.now() - 3 * 3600_000);
		await utimes(p(".keel-tmp-1-abcdef-old.txt"), old, old);
		expect(await b.fs.sweepTemps(dir)).toBe(1);
		expect(await leftoverTemps()).toEqual([".keel-tmp-2-abcdef-fresh.txt"]);
		expect(await b.fs.sweepTemps(p("missing"))).toBe(0);
	});
});

describe.skipIf(missing)("ssh backend: commands", () => {
	it("runs in the cwd with stdout and stderr interleaved, reports the exit code, adds env", async () => {
		const r = await run("echo out; echo err >&2; pwd; echo $KEEL_X; exit 3", {});
		expect(r.exitCode).toBe(3);
		expect(r.out).toBe(`out\nerr\n${dir}\n\n`);
		let out = "";
		await b.exec.run({
			command: "echo $KEEL_X",
			cwd: dir,
			env: { KEEL_X: "set" },
			onData: (c) => (out += c),
		});
		expect(out).toBe("set\n");
		expect((await caught(run("true", { cwd: p("nope") }))).code).toBe("ENOENT");
	});

	it("never pays the rc files: no per-command rc run, no interactive or login shell", async () => {
		const first = await run('echo "$KEEL_RC_RUNS"');
		const times: number[] = [];
		for (let i = 0; i < 5; i++) {
			const t = performance.now();
			const r = await run('echo "$KEEL_RC_RUNS:$-:$(shopt -q login_shell && echo login)"');
			times.push(performance.now() - t);
			// The count stays what the long-lived shell saw when it started; no command sourced it again.
			expect(r.out.trim()).toBe(`${first.out.trim()}:hBc:`);
		}
		times.sort((x, y) => x - y);
		// Far below one login (an ssh exec channel sourcing ~/.bashrc: ~450 ms with pyenv here).
		expect(times[2]).toBeLessThan(250);
	});

	it("streams output as it arrives", async () => {
		const seen: number[] = [];
		const t = performance.now();
		let out = "";
		await b.exec.run({
			command: "echo first; sleep 1; echo second",
			cwd: dir,
			onData: (c) => {
				out += c;
				seen.push(performance.now() - t);
			},
		});
		expect(out).toBe("first\nsecond\n");
		expect(seen[0]).toBeLessThan(700);
		expect(seen[seen.length - 1]).toBeGreaterThan(900);
	});

	it("abort kills the remote process group, forked children included", async () => {
		const tag = `${1000 + Math.floor(Math.random() * 1000)}.${Math.floor(Math.random() * 9999) + 1}`;
		const ac = new AbortController();
		let out = "";
		const t = performance.now();
		const pending = b.exec.run({
			command: `sleep ${tag} & sleep ${tag} & (sleep ${tag}; echo never) & echo started; wait`,
			cwd: dir,
			signal: ac.signal,
			onData: (c) => {
				out += c;
				if (out.includes("started")) ac.abort();
			},
		});
		const r = await pending;
		expect(r.aborted).toBe(true);
		expect(r.exitCode).toBeNull();
		expect(performance.now() - t).toBeLessThan(5000);
		const check = await run(`pgrep -f "[s]leep ${tag}" || echo none`);
		expect(check.out.trim()).toBe("none");
	});

	it("a command that never ends times out, and its processes are gone", async () => {
		const tag = `${2000 + Math.floor(Math.random() * 1000)}.5`;
		const t = performance.now();
		const r = await run(`sleep ${tag}; echo never`, { timeoutMs: 500 });
		expect(r.timedOut).toBe(true);
		expect(r.out).toBe("");
		expect(performance.now() - t).toBeLessThan(3000);
		expect((await run(`pgrep -f "[s]leep ${tag}" || echo none`)).out.trim()).toBe("none");
	});

	it("a background child that keeps the output open does not hold the call", async () => {
		const t = performance.now();
		const r = await run("sleep 30 & echo $!; echo done");
		expect(r.exitCode).toBe(0);
		const [pid, done] = r.out.trim().split("\n");
		expect(done).toBe("done");
		expect(performance.now() - t).toBeLessThan(3000);
		// The child does not outlive its call (as locally): it is gone, or a zombie about to be reaped.
		const state = await run(
			`sleep 0.3; sed 's/.*) \\(.\\).*/\\1/' /proc/${Number(pid)}/stat 2>/dev/null || echo gone`,
		);
		expect(["gone", "Z"]).toContain(state.out.trim());
		// The shell is usable afterwards and nothing from the old command leaks into the next one.
		expect((await run("echo next")).out).toBe("next\n");
	});

	it("huge output streams through whole (20 MB counted) without being buffered", async () => {
		let bytes = 0;
		const h = createHash("sha256");
		const r = await b.exec.run({
			command: "yes keel-output-line | head -c 20000000",
			cwd: dir,
			onData: (c) => {
				bytes += c.length;
				h.update(c);
			},
		});
		expect(r.exitCode).toBe(0);
		expect(bytes).toBe(20_000_000);
		expect(h.digest("hex")).toBe(
			sha(Buffer.from("keel-output-line\n".repeat(Math.ceil(20_000_000 / 17))).subarray(0, 20_000_000)),
		);
	});

	it("binary output with bytes that look like framing passes through untouched", async () => {
		const chunks: Buffer[] = [];
		await b.exec.run({
			command: "printf '\\037abc\\000\\037\\n'; head -c 3 /dev/zero",
			cwd: dir,
			onData: (c) => chunks.push(Buffer.from(c)),
		});
		expect(Buffer.concat(chunks)).toEqual(Buffer.from([0x1f, 0x61, 0x62, 0x63, 0, 0x1f, 0x0a, 0, 0, 0]));
	});

	it("concurrent commands run side by side, and a long command does not hold up file operations", async () => {
		await Promise.all([run("true"), run("true"), run("true")]); // open the shells first
		const t = performance.now();
		const long = run("sleep 1.5; echo slow");
		const [a, c] = await Promise.all([run("sleep 1; echo a"), run("sleep 1; echo c")]);
		expect(a.out + c.out).toBe("a\nc\n");
		expect(performance.now() - t).toBeLessThan(1450);
		await writeFile(p("f"), "x");
		const t2 = performance.now();
		await b.fs.stat(p("f"));
		expect(performance.now() - t2).toBeLessThan(300);
		expect((await long).out).toBe("slow\n");
	});
});

describe.skipIf(missing)("ssh backend: tools through Session.call", () => {
	let session: Session;
	beforeEach(async () => {
		session = await Session.create({ root: dir, backend: b });
	});
	afterEach(async () => {
		// The session closes its backend; this one is shared, so only drop the session's own state.
		await session.payloads.close();
	});

	const ok = (r: CallResult) => {
		if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.error)}`);
		return r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
	};
	const err = (r: CallResult) => {
		if (r.ok) throw new Error(`expected failure, got ${JSON.stringify(r.content)}`);
		return r.error;
	};

	it("write, read, edit, ls, grep, find, bash on the remote dir", async () => {
		ok(await session.call("write", { path: "src/a.ts", content: "export const value = 41;\n" }));
		expect(await readFile(p("src/a.ts"), "utf8")).toBe("export const value = 41;\n");
		expect(ok(await session.call("read", { path: "src/a.ts" }))).toContain("value = 41");
		ok(await session.call("edit", { path: "src/a.ts", edits: [{ oldText: "41", newText: "42" }] }));
		expect(await readFile(p("src/a.ts"), "utf8")).toBe("export const value = 42;\n");
		// The session's own edit is not mistaken for a stale read: a second edit goes through.
		ok(await session.call("edit", { path: "src/a.ts", edits: [{ oldText: "42", newText: "43" }] }));
		expect(ok(await session.call("ls", { path: "." }))).toContain("src/");
		expect(ok(await session.call("grep", { pattern: "value = 4\\d" }))).toContain("src/a.ts:1:");
		expect(ok(await session.call("find", { pattern: "*.ts" }))).toContain("src/a.ts");
		expect(ok(await session.call("bash", { command: "cat src/a.ts; hostname >/dev/null" }))).toContain("43");
		expect(err(await session.call("bash", { command: "exit 7" })).code).toBe("COMMAND_FAILED");
		expect(err(await session.call("bash", { command: "sleep 20", timeout: 0.5 })).code).toBe("TIMEOUT");
	});

	it("overwrite needs a fresh read; a change by another writer is caught", async () => {
		await writeFile(p("f.txt"), "one\n");
		expect(err(await session.call("write", { path: "f.txt", content: "x" })).code).toBe("NOT_READ");
		ok(await session.call("read", { path: "f.txt" }));
		await writeFile(p("f.txt"), "two\n");
		expect(err(await session.call("write", { path: "f.txt", content: "x" })).code).toBe("STALE_READ");
		expect(await readFile(p("f.txt"), "utf8")).toBe("two\n");
	});

	it("the path guard canonicalizes on the remote side: a remote link out of the root is refused", async () => {
		const outside = await mkdtemp(join(tmpdir(), "keel-ssh-outside-"));
		try {
			await writeFile(join(outside, "secret.txt"), "TOPSECRET\n");
			// Made on the backend's side.
			await run(
				`ln -s ${outside} escape && ln -s ${outside}/secret.txt file-link && ln -s ${outside}/new.txt dangling`,
			);
			for (const path of ["escape/secret.txt", "file-link"]) {
				const e = err(await session.call("read", { path }));
				expect(e.code).toBe("PATH_OUTSIDE_ROOTS");
				expect(e.message).not.toContain("TOPSECRET");
			}
			expect(err(await session.call("write", { path: "dangling", content: "x" })).code).toBe(
				"PATH_OUTSIDE_ROOTS",
			);
			expect(err(await session.call("write", { path: "escape/new.txt", content: "x" })).code).toBe(
				"PATH_OUTSIDE_ROOTS",
			);
			expect(await readdir(outside)).toEqual(["secret.txt"]);
		} finally {
			await rm(outside, { recursive: true, force: true });
		}
	});

	it("huge bash output is bounded in the result", async () => {
		const r = await session.call("bash", { command: "yes 0123456789 | head -c 30000000" });
		const text = ok(r);
		expect(text.length).toBeLessThan(100_000);
		expect(text).toContain("Full output:");
	});
});
