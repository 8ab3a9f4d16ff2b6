/**
 * The ssh backend's file helper (src/backend/ssh/remote-py.ts): one python3 on the host answering
 * stat, read and the whole small write in one request each, every directory of a path opened
 * without following links. Attacked as a process on the host would: a directory on the path
 * swapped for a link to an outside directory (once, and racing in a loop), a FIFO swapped in for
 * the file; a background child of one command writing after it ended (the job shells make the
 * next command's FIFOs ahead of time). And checked against the shell helper it replaces (a host without python3): the same
 * identities, so a change planned through one commits through the other.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSshBackend, type SshBackend } from "../../src/backend/ssh/index.js";
import type { KeelError } from "../../src/boundary/errors.js";
import { pythonMissing } from "../fixtures/ssh-backend.js";
import { type Sshd, sshdMissing, sshOptions, startSshd, usrBinWithout } from "../fixtures/sshd.js";

// The file helper needs python3 on the host (here: on sshd's default PATH).
const missing = sshdMissing() ?? pythonMissing();
if (missing) console.warn(`skipping the ssh file helper tests: ${missing}`);

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

let sshd: Sshd;
let fast: SshBackend;
let shellOnly: SshBackend;
let bin: string;
let dir: string;
let outside: string;

async function caught(p: Promise<unknown>): Promise<KeelError & { code: string }> {
	try {
		await p;
	} catch (e) {
		return e as KeelError & { code: string };
	}
	throw new Error("expected a failure");
}

beforeAll(async () => {
	if (missing) return;
	// A PATH with everything in /usr/bin but python: a host without python3.
	bin = await usrBinWithout((name) => name.startsWith("python"));
	sshd = await startSshd();
	fast = createSshBackend(sshOptions(sshd));
	shellOnly = createSshBackend({ ...sshOptions(sshd), remotePath: `${bin}:/usr/sbin` });
	await Promise.all([fast.connect(), shellOnly.connect()]);
}, 60_000);

afterAll(async () => {
	await fast?.close();
	await shellOnly?.close();
	await sshd?.stop();
	if (bin) await rm(bin, { recursive: true, force: true });
});

beforeEach(async () => {
	if (missing) return;
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-fast-"));
	outside = await mkdtemp(join(tmpdir(), "keel-ssh-outside-"));
	return async () => {
		await rm(dir, { recursive: true, force: true });
		await rm(outside, { recursive: true, force: true });
	};
});

const p = (rel: string) => join(dir, rel);

/** `d` (with f.txt) is renamed away and replaced by a link to the outside directory (with its own f.txt). */
async function swapDirForLink(): Promise<void> {
	await rename(p("d"), p("d.real"));
	await symlink(outside, p("d"));
}

describe.skipIf(missing)("ssh file helper", () => {
	it("gives the same identities as the shell helper, so a change planned on one commits on the other", async () => {
		await writeFile(p("f.txt"), "v1\n");
		const a = await fast.fs.stat(p("f.txt"));
		const b = await shellOnly.fs.stat(p("f.txt"));
		expect(a).toEqual(b);
		expect(await fast.fs.lstat(p("f.txt"))).toEqual(await shellOnly.fs.lstat(p("f.txt")));
		expect(await fast.fs.hashFile(p("f.txt"))).toBe(await shellOnly.fs.hashFile(p("f.txt")));
		const next = await shellOnly.fs.writeFile(p("f.txt"), Buffer.from("v2\n"), {
			expect: { stat: a, sha256: sha("v1\n") },
		});
		const last = await fast.fs.writeFile(p("f.txt"), Buffer.from("v3\n"), {
			expect: { stat: next, sha256: sha("v2\n") },
		});
		expect(await readFile(p("f.txt"), "utf8")).toBe("v3\n");
		expect(last).toEqual(await shellOnly.fs.lstat(p("f.txt")));
		// And the stale plan is refused by both.
		for (const backend of [fast, shellOnly]) {
			const e = await caught(
				backend.fs.writeFile(p("f.txt"), Buffer.from("x"), { expect: { stat: next, sha256: sha("v2\n") } }),
			);
			expect(e.code).toBe("CHANGED_ON_DISK");
		}
		expect(await readFile(p("f.txt"), "utf8")).toBe("v3\n");
	});

	it("a directory on the path swapped for a link after the check: no outside byte is read or written", async () => {
		await mkdir(p("d"));
		await writeFile(p("d/f.txt"), "inside\n");
		await writeFile(join(outside, "f.txt"), "SECRET\n");
		const st = await fast.fs.stat(p("d/f.txt"));
		await swapDirForLink();
		expect((await caught(fast.fs.readFile(p("d/f.txt"), st))).code).toBe("CHANGED_ON_DISK");
		expect((await caught(fast.fs.readFile(p("d/f.txt")))).code).toBe("CHANGED_ON_DISK");
		expect((await caught(fast.fs.stat(p("d/f.txt")))).code).toBe("CHANGED_ON_DISK");
		expect((await caught(fast.fs.hashFile(p("d/f.txt")))).code).toBe("CHANGED_ON_DISK");
		// Writes of every kind: an unconditional replace, a create, a compare-and-swap, a delete.
		const writes = [
			fast.fs.writeFile(p("d/f.txt"), Buffer.from("mine\n")),
			fast.fs.writeFile(p("d/new.txt"), Buffer.from("mine\n"), { expect: "absent" }),
			fast.fs.writeFile(p("d/f.txt"), Buffer.from("mine\n"), {
				expect: { stat: st, sha256: sha("inside\n") },
			}),
			fast.fs.unlink(p("d/f.txt")),
		];
		for (const w of writes) expect((await caught(w)).code).toBe("CHANGED_ON_DISK");
		expect(await readdir(outside)).toEqual(["f.txt"]); // nothing created, no temp file left
		expect(await readFile(join(outside, "f.txt"), "utf8")).toBe("SECRET\n");
		expect(await readFile(p("d.real/f.txt"), "utf8")).toBe("inside\n");
	});

	it("a racing swapper on the host never gets an outside byte read or an outside file written", async () => {
		await mkdir(p("d"));
		await writeFile(p("d/f.txt"), "inside\n");
		await writeFile(join(outside, "f.txt"), "SECRET\n");
		await symlink(outside, p("link"));
		// d and the link trade places as fast as the host can rename.
		const swapper = spawn(
			process.execPath,
			[
				"-e",
				`const fs=require("fs");const [d,l,t]=process.argv.slice(1);
				for(;;){try{fs.renameSync(d,t);fs.renameSync(l,d);fs.renameSync(d,l);fs.renameSync(t,d);}catch{}}`,
				p("d"),
				p("link"),
				p("d.tmp"),
			],
			{ stdio: "ignore" },
		);
		try {
			let reads = 0;
			let writes = 0;
			for (let i = 0; i < 150; i++) {
				const bytes = await fast.fs.readFile(p("d/f.txt")).catch(() => undefined);
				if (bytes) {
					reads++;
					expect(bytes.toString()).not.toContain("SECRET");
				}
				const wrote = await fast.fs
					.writeFile(p("d/f.txt"), Buffer.from("inside\n"))
					.then(() => true)
					.catch(() => false);
				if (wrote) writes++;
			}
			expect(reads + writes).toBeGreaterThan(0);
		} finally {
			swapper.kill("SIGKILL");
			await new Promise((r) => swapper.once("exit", r));
		}
		expect(await readdir(outside)).toEqual(["f.txt"]);
		expect(await readFile(join(outside, "f.txt"), "utf8")).toBe("SECRET\n");
	});

	it("a FIFO swapped in for the file is refused at once, never waited on", async () => {
		await writeFile(p("f.txt"), "text\n");
		const st = await fast.fs.stat(p("f.txt"));
		await rm(p("f.txt"));
		const mk = spawn("mkfifo", [p("f.txt")]);
		await new Promise((r) => mk.once("exit", r));
		expect((await stat(p("f.txt"))).isFIFO()).toBe(true);
		expect((await caught(fast.fs.readFile(p("f.txt"), st))).code).toBe("EIO");
		expect((await caught(fast.fs.hashFile(p("f.txt")))).code).toBe("EIO");
		// A compare-and-swap planned on the file: the FIFO is not it.
		const e = await caught(
			fast.fs.writeFile(p("f.txt"), Buffer.from("x"), { expect: { stat: st, sha256: sha("text\n") } }),
		);
		expect(e.code).toBe("CHANGED_ON_DISK");
		expect((await stat(p("f.txt"))).isFIFO()).toBe(true);
	});

	it("the one-request write keeps the old bytes and leaves no temp file when it cannot commit", async () => {
		await writeFile(p("f.txt"), "old\n", { mode: 0o640 });
		const st = await fast.fs.stat(p("f.txt"));
		await writeFile(p("f.txt"), "theirs\n");
		const e = await caught(
			fast.fs.writeFile(p("f.txt"), Buffer.from("mine\n"), { expect: { stat: st, sha256: sha("old\n") } }),
		);
		expect(e.code).toBe("CHANGED_ON_DISK");
		expect((await caught(fast.fs.writeFile(p("f.txt"), Buffer.from("x"), { expect: "absent" }))).code).toBe(
			"WRITE_COLLISION",
		);
		await mkdir(p("sub"));
		expect((await caught(fast.fs.writeFile(p("sub"), Buffer.from("x")))).code).toBe("EISDIR");
		expect(await readFile(p("f.txt"), "utf8")).toBe("theirs\n");
		expect((await readdir(dir)).filter((n) => n.startsWith(".keel-tmp-"))).toEqual([]);
		// A replace keeps the mode; the bytes arrive whole (every byte value).
		const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
		const now = await fast.fs.writeFile(p("f.txt"), all);
		expect(now.mode).toBe(0o640);
		expect((await readFile(p("f.txt"))).equals(all)).toBe(true);
		expect((await fast.fs.readFile(p("f.txt"), now)).equals(all)).toBe(true);
	});

	it.each([
		["the command runner", () => fast],
		["the job shells, on a host without python3 (FIFOs made ahead)", () => shellOnly],
	])(
		"a background child of one command never writes into the next command's output: %s",
		async (_, backend) => {
			const run = async (command: string) => {
				const out: Buffer[] = [];
				const r = await backend().exec.run({ command, cwd: dir, onData: (c) => out.push(Buffer.from(c)) });
				return { code: r.exitCode, out: Buffer.concat(out).toString() };
			};
			// The child keeps the first command's output open and writes after that command ended.
			const first = await run("(sleep 0.6; echo LEAK; sleep 0.6; echo LEAK) & echo first");
			expect(first.out).toBe("first\n");
			for (let i = 0; i < 3; i++) {
				const next = await run("sleep 0.3; echo next");
				expect(next).toEqual({ code: 0, out: "next\n" });
			}
		},
	);
});
