/**
 * keel processes on one machine never lose each other's edits: the
 * compare-and-swap's check and rename run under flock(2) on the directory (local/dir-lock.ts), so
 * a rival keel process cannot rename its replacement in between. Four CLI processes edit their
 * own lines of one file at once: every edit reported done must be in the file.
 *
 * A hostile process can hold that lock forever. keel then neither stalls nor goes on without it:
 * after the hold limit the edit fails with a retryable FILE_BUSY and changes nothing. Three
 * keel processes editing under such a holder, on a file whose thousands of extended attributes
 * make every read of them slow, lose no edit they reported done.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, runKeel } from "../fixtures/keel-cli.js";

const PY = "/usr/bin/python3";
const PROCESSES = 4;
const EDITS = 100;
/** Attributes on the contended file: their names fill most of the kernel's 64 KiB list. */
const ATTRS = 4000;

/** A directory whose file system takes ATTRS user.* attributes on one file (tmpfs does; ext4 not). */
const XATTR_DIR = [tmpdir(), "/dev/shm"].find((d) => {
	if (!existsSync(PY) || !existsSync(d)) return false;
	const probe = mkdtempSync(join(d, "keel-xattr-probe-"));
	try {
		writeFileSync(join(probe, "f"), "");
		execFileSync(
			PY,
			[
				"-c",
				"import os,sys\nfor i in range(int(sys.argv[2])): os.setxattr(sys.argv[1], b'user.k%05d' % i, b'v' * 8)",
				join(probe, "f"),
				String(ATTRS),
			],
			{ stdio: "ignore" },
		);
		return true;
	} catch {
		return false;
	} finally {
		rmSync(probe, { recursive: true, force: true });
	}
});

/**
 * `keel batch` in `cwd`, once it has answered a read of `path` (node, modules and the first read
 * behind it): `finish` sends the rest and resolves with the answers after the read's.
 */
async function warmBatch(cwd: string, path: string): Promise<{ finish: (input: string) => Promise<string> }> {
	const child = spawn(process.execPath, [BIN, "batch"], { cwd, stdio: ["pipe", "pipe", "inherit"] });
	let out = "";
	child.stdout.setEncoding("utf8").on("data", (d: string) => {
		out += d;
	});
	const closed = new Promise<void>((resolve, reject) => {
		child.once("error", reject);
		child.once("close", () => resolve());
	});
	child.stdin.write(`${JSON.stringify({ tool: "read", args: { path } })}\n`);
	while (!out.includes("\n")) {
		if (child.exitCode !== null) throw new Error("keel batch exited before answering");
		await new Promise((resolve) => setTimeout(resolve, 10));
	}
	return {
		finish: async (input) => {
			child.stdin.end(input);
			await closed;
			return out.slice(out.indexOf("\n") + 1);
		},
	};
}

/** A process that takes keel's lock on `dirPath` (flock on the directory) and keeps it. */
async function holdLock(dirPath: string): Promise<ChildProcess> {
	const holder = spawn(PY, [
		"-c",
		"import fcntl,os,sys,time\nfd=os.open(sys.argv[1], os.O_RDONLY)\nfcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(120)",
		dirPath,
	]);
	await new Promise<void>((resolve, reject) => {
		holder.stdout?.once("data", () => resolve());
		holder.once("error", reject);
		holder.once("exit", () => reject(new Error("the lock holder exited")));
	});
	return holder;
}

let dir: string;
beforeEach(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-xproc-")));
});
afterEach(async () => {
	await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!existsSync(BIN))(
	`edits from several keel processes${existsSync(BIN) ? "" : " (skipped: no build)"}`,
	() => {
		it("no edit a process was told landed is lost to a concurrent keel process", async () => {
			// One line per edit, so every edit is independent of the others' success.
			const line = (p: number, i: number, v: string) => `p${p} e${i} ${v}`;
			const lines = Array.from({ length: PROCESSES }, (_, p) =>
				Array.from({ length: EDITS }, (_, i) => line(p, i, "old")),
			).flat();
			await writeFile(join(dir, "shared.txt"), `${lines.join("\n")}\n`);
			const batch = (p: number) =>
				Array.from({ length: EDITS }, (_, i) =>
					JSON.stringify({
						tool: "edit",
						args: { path: "shared.txt", edits: [{ oldText: line(p, i, "old"), newText: line(p, i, "new") }] },
					}),
				).join("\n");
			const runs = await Promise.all(
				Array.from({ length: PROCESSES }, (_, p) => runKeel(dir, ["batch"], { input: `${batch(p)}\n` })),
			);
			const final = new Set((await readFile(join(dir, "shared.txt"), "utf8")).split("\n"));
			expect(final.size).toBe(PROCESSES * EDITS + 1); // every line still there, once ("" at the end)
			let landed = 0;
			runs.forEach((run, p) => {
				const results = run.stdout
					.trim()
					.split("\n")
					.map((l) => JSON.parse(l));
				expect(results).toHaveLength(EDITS);
				results.forEach((r, i) => {
					// Under this much contention an edit may give up (CHANGED_ON_DISK, after its re-plans);
					// then it must not be in the file. One that reported success must be.
					if (r.ok) landed++;
					else expect(r.error.code).toBe("CHANGED_ON_DISK");
					expect(final.has(line(p, i, r.ok ? "new" : "old"))).toBe(true);
				});
			});
			expect(landed).toBeGreaterThan(0);
		}, 120_000);

		it.skipIf(!existsSync(PY))(
			"a process holding the directory's lock forever gets a retryable refusal, not a stall; the edit lands once it lets go",
			async () => {
				await writeFile(join(dir, "f.txt"), "value = 41\n");
				const holder = await holdLock(dir);
				const edit = JSON.stringify({ path: "f.txt", edits: [{ oldText: "41", newText: "42" }] });
				try {
					const refused = JSON.parse((await runKeel(dir, ["call", "edit", edit])).stdout);
					expect(refused.ok).toBe(false);
					expect(refused.error.code).toBe("FILE_BUSY");
					expect(refused.error.retry).toBe("retry");
					expect(refused.error.message).toContain("f.txt");
					// The holder is named, as /proc/locks shows it.
					expect(refused.error.message).toContain(`pid ${holder.pid} (python3)`);
					expect(await readFile(join(dir, "f.txt"), "utf8")).toBe("value = 41\n");
				} finally {
					holder.kill("SIGKILL");
				}
				await new Promise((resolve) => holder.once("exit", resolve));
				const run = await runKeel(dir, ["call", "edit", edit]);
				expect(JSON.parse(run.stdout).ok).toBe(true);
				expect(await readFile(join(dir, "f.txt"), "utf8")).toBe("value = 42\n");
			},
			60_000,
		);

		it.skipIf(!existsSync(PY) || XATTR_DIR === undefined)(
			`four keel processes under a hostile lock holder, on a file with thousands of attributes, lose no acknowledged edit${XATTR_DIR === undefined ? " (skipped: no file system here takes thousands of user.* attributes)" : ""}`,
			async () => {
				// The attributes make every read of them slow: work an attacker scales, which must not sit
				// between a commit's last check and its rename.
				const shm = await realpath(await mkdtemp(join(XATTR_DIR as string, "keel-xproc-")));
				try {
					const target = join(shm, "shared.txt");
					const line = (p: number, i: number, v: string) => `p${p} e${i} ${v}`;
					const PROCS = 4;
					const EACH = 3;
					const lines = Array.from({ length: PROCS }, (_, p) =>
						Array.from({ length: EACH }, (_, i) => line(p, i, "old")),
					).flat();
					await writeFile(target, `${lines.join("\n")}\n`);
					execFileSync(PY, [
						"-c",
						"import os,sys\nfor i in range(int(sys.argv[2])): os.setxattr(sys.argv[1], b'user.k%05d' % i, b'v' * 8)",
						target,
						String(ATTRS),
					]);
					const holder = await holdLock(shm);
					let outputs: string[];
					try {
						// Started and warmed up first (one read each), then given their edits at one moment:
						// their commits meet at the lock together, as a busy workspace's would.
						const keels = await Promise.all(
							Array.from({ length: PROCS }, () => warmBatch(shm, "shared.txt")),
						);
						const edits = (p: number) =>
							Array.from({ length: EACH }, (_, i) =>
								JSON.stringify({
									tool: "edit",
									args: {
										path: "shared.txt",
										edits: [{ oldText: line(p, i, "old"), newText: line(p, i, "new") }],
									},
								}),
							).join("\n");
						outputs = await Promise.all(keels.map((k, p) => k.finish(`${edits(p)}\n`)));
					} finally {
						holder.kill("SIGKILL");
					}
					const final = new Set((await readFile(target, "utf8")).split("\n"));
					const lost: string[] = [];
					outputs.forEach((out, p) => {
						const results = out
							.trim()
							.split("\n")
							.map((l) => JSON.parse(l));
						expect(results).toHaveLength(EACH);
						results.forEach((r, i) => {
							if (r.ok && !final.has(line(p, i, "new"))) lost.push(line(p, i, "new"));
							if (!r.ok) {
								expect(r.error.code).toBe("FILE_BUSY");
								expect(final.has(line(p, i, "old"))).toBe(true);
							}
						});
					});
					expect(lost).toEqual([]);
				} finally {
					await rm(shm, { recursive: true, force: true });
				}
			},
			120_000,
		);
	},
);
