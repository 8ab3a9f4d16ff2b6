/**
 * The file helper's k_look (src/backend/ssh/remote-py.ts): the guard's realpath, the stat and a
 * small file's bytes in one request, resolved through one kernel handle (O_PATH, named through
 * /proc/self/fd) and read through that handle. Checked against the kernel's own realpath (the host
 * is this machine): links on the way, a link to a file, a dangling link, a loop, a directory, a
 * FIFO, a name ending in " (deleted)", a file over the limit. Attacked as a process on the host
 * would: a link flipping between an inside and an outside file (the name given and the bytes kept
 * with it must be one object), a file unlinked and made again in a loop (never a "(deleted)"
 * name).
 */
import { execFileSync, spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SshConnection } from "../../src/backend/ssh/connection.js";
import { createSshFs } from "../../src/backend/ssh/fs.js";
import { pyHelperSource } from "../../src/backend/ssh/remote-py.js";
import type { FileOps } from "../../src/backend/types.js";
import { pythonMissing, useSshBackend } from "../fixtures/ssh-backend.js";
import { sshdMissing, sshOptions } from "../fixtures/sshd.js";

const missing = sshdMissing() ?? pythonMissing();
if (missing) console.warn(`skipping the ssh k_look tests: ${missing}`);

const live = useSshBackend(missing);
let conn: SshConnection;
let fs: FileOps;
let dir: string;

beforeAll(() => {
	if (missing) return;
	conn = new SshConnection(sshOptions(live.sshd));
	fs = createSshFs(conn);
});

afterAll(async () => {
	await conn?.close();
});

beforeEach(async () => {
	if (missing) return;
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-look-"));
	return () => rm(dir, { recursive: true, force: true });
});

const p = (rel: string) => join(dir, rel);

/** k_look's answer, straight from the helper: the name, and the bytes it came with (if any). */
async function look(path: string): Promise<{ real: string; kept: string | undefined }> {
	const helper = (await conn.get()).py;
	if (!helper) throw new Error("no file helper on the host");
	const r = await helper.request("k_look", path, String(256 * 1024));
	if (r.status !== 0) throw new Error(r.out);
	const nl = r.bytes.indexOf(0x0a);
	const [real, , length] = JSON.parse(r.bytes.subarray(0, nl).toString("utf8")) as [string, string, number];
	return { real, kept: length >= 0 ? r.bytes.subarray(nl + 1).toString("latin1") : undefined };
}

async function code(promise: Promise<unknown>): Promise<string | undefined> {
	try {
		await promise;
	} catch (e) {
		return (e as { code?: string }).code;
	}
	throw new Error("expected a failure");
}

/** A node process on the host running `body` in a loop with these arguments until killed. */
function racer(body: string, ...args: string[]) {
	const child = spawn(
		process.execPath,
		["-e", `const fs=require("fs");const a=process.argv.slice(1);for(;;){try{${body}}catch{}}`, ...args],
		{ stdio: "ignore" },
	);
	return async () => {
		child.kill("SIGKILL");
		await new Promise((r) => child.once("exit", r));
	};
}

describe.skipIf(missing)("ssh file helper: k_look", () => {
	it("resolves through one handle where the host has O_PATH and /proc", () => {
		// The helper's own program, run on this host with no requests, then asked which way it looks.
		const py = `${pyHelperSource()}\nh = look_handle(sys.argv[1])\nprint("handle" if h else "walk")\n`;
		const f = join(tmpdir(), "keel-ssh-look-probe.txt");
		execFileSync("sh", ["-c", `printf x > '${f}'`]);
		try {
			expect(execFileSync("python3", ["-I", "-S", "-c", py, f], { encoding: "utf8", input: "" }).trim()).toBe(
				"handle",
			);
			expect(
				execFileSync("python3", ["-I", "-S", "-c", py, `${f}.absent`], {
					encoding: "utf8",
					input: "",
				}).trim(),
			).toBe("walk");
		} finally {
			execFileSync("rm", ["-f", f]);
		}
	});

	it("answers as the kernel's realpath, and keeps bytes only of small regular files", async () => {
		await mkdir(p("r/sub"), { recursive: true });
		await writeFile(p("r/sub/f.txt"), "hello\n");
		await writeFile(p("x (deleted)"), "named so\n");
		await writeFile(p("big.bin"), Buffer.alloc(256 * 1024 + 1, 97));
		await symlink(p("r"), p("dirlink"));
		await symlink("r/sub/f.txt", p("filelink"));
		await symlink("nowhere", p("dangling"));
		await symlink("loop2", p("loop1"));
		await symlink("loop1", p("loop2"));
		execFileSync("mkfifo", [p("pipe")]);
		const cases: [string, string | undefined][] = [
			["dirlink/sub/f.txt", "hello\n"],
			["dirlink/sub/../sub/f.txt", "hello\n"],
			["filelink", "hello\n"],
			["x (deleted)", "named so\n"],
			["r/sub", undefined],
			["dirlink/", undefined],
			["pipe", undefined],
			["big.bin", undefined],
		];
		for (const [rel, bytes] of cases) {
			const got = await look(p(rel));
			expect(got.real, rel).toBe(realpathSync(p(rel)));
			expect(got.kept, rel).toBe(bytes);
		}
		// The kept stat is the object's: the same as a stat through the backend afterwards.
		const real = await fs.realpath(p("filelink"));
		const kept = await fs.stat(real);
		expect(kept).toEqual(await fs.stat(realpathSync(p("r/sub/f.txt"))));
		expect(await code(fs.realpath(p("dangling")))).toBe("ENOENT");
		expect(await code(fs.realpath(p("r/absent.txt")))).toBe("ENOENT");
		expect(await code(fs.realpath(p("loop1")))).toBe("ELOOP");
	});

	it("a link flipping between an inside and an outside file: the name given and the bytes kept are one object", async () => {
		await mkdir(p("in"));
		await mkdir(p("out"));
		await writeFile(p("in/a.txt"), "inside\n");
		await writeFile(p("out/secret.txt"), "SECRET\n");
		await symlink(p("in/a.txt"), p("link"));
		await symlink(p("out/secret.txt"), p("link.other"));
		// link and link.other trade targets as fast as the host can rename.
		const stop = racer(
			"fs.renameSync(a[0],a[2]);fs.renameSync(a[1],a[0]);fs.renameSync(a[2],a[1]);",
			p("link"),
			p("link.other"),
			p("link.tmp"),
		);
		let inside = 0;
		let outside = 0;
		try {
			for (let i = 0; i < 300; i++) {
				const got = await look(p("link")).catch(() => undefined);
				if (!got) continue;
				if (got.real === realpathSync(p("in/a.txt"))) {
					inside++;
					expect(got.kept).toBe("inside\n");
				} else if (got.real === realpathSync(p("out/secret.txt"))) {
					outside++;
					expect(got.kept).toBe("SECRET\n");
				} else {
					// The link was away mid-rename when the handle was opened; the walk's realpath then
					// names the link itself (a link: never opened), and no bytes come with it.
					expect(got.real).toBe(join(realpathSync(dir), "link"));
					expect(got.kept).toBeUndefined();
				}
			}
		} finally {
			await stop();
		}
		expect(inside + outside).toBeGreaterThan(0);
	});

	it("a file unlinked and made again in a loop: never a '(deleted)' name, bytes only with its own name", async () => {
		await writeFile(p("f.src"), "v\n");
		await writeFile(p("f.txt"), "v\n");
		// Unlinked, then made again whole (a new link to the same bytes): never a partial file.
		const stop = racer("fs.unlinkSync(a[0]);fs.linkSync(a[1],a[0]);", p("f.txt"), p("f.src"));
		let answered = 0;
		try {
			for (let i = 0; i < 300; i++) {
				const got = await look(p("f.txt")).catch(() => undefined);
				if (!got) continue;
				answered++;
				expect(got.real).toBe(join(realpathSync(dir), "f.txt"));
				if (got.kept !== undefined) expect(got.kept).toBe("v\n");
			}
		} finally {
			await stop();
		}
		expect(answered).toBeGreaterThan(0);
	});
});
