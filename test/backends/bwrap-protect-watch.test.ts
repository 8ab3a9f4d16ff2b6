/**
 * The kept protected-set scan checked by inotify (bwrap/dir-watches.ts) on a 5,000-directory
 * workspace, attacked as the brief says: hostile code in the sandbox plants a repository deep in
 * the tree, renames or atomically exchanges a directory holding one over another, swaps a
 * directory for a symlink; a process outside does the same while commands run; the watch limit
 * runs out (injected here; the kernel's own ENOSPC is in bwrap-protect-watch-limit.test.ts); the
 * queue overflows; a tmpfs is mounted over a watched directory.
 * Each time the next command must find the new git directory read-only. Real bwrap, real git.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, readlink, realpath, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DirWatches } from "../../src/backend/bwrap/dir-watches.js";
import { lazyInotify } from "../../src/backend/bwrap/inotify.js";
import { entryRole } from "../../src/backend/bwrap/protect.js";
import {
	createSandboxRunner,
	type SandboxRunner,
	type SandboxRunnerOptions,
} from "../../src/backend/bwrap/runner.js";
import { bwrapAvailable } from "../contract/backends.js";

const available = await bwrapAvailable();
const title = (t: string) => `${t}${available === true ? "" : ` (skipped: ${available})`}`;

let scratch: string;
let root: string;
let home: string;
const open: SandboxRunner[] = [];

/** Older than the racy window of what is still stat'ed (a wait, not a timing assertion). */
const settle = () => new Promise((r) => setTimeout(r, 2_200));

beforeAll(async () => {
	if (available !== true) return;
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-watch-")));
	root = join(scratch, "root");
	home = join(root, "h");
	for (let a = 0; a < 50; a++) {
		await Promise.all(
			Array.from({ length: 100 }, (_, b) => mkdir(join(root, `d${a}`, `e${b}`), { recursive: true })),
		);
	}
	await mkdir(join(home, ".config"), { recursive: true });
	await mkdir(join(root, "node_modules", "stash"), { recursive: true });
	execFileSync("git", ["init", "-q", root]);
	await settle();
}, 60_000);
afterEach(() => {
	for (const r of open.splice(0)) r.close();
});
afterAll(async () => {
	if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function runner(opts: Partial<SandboxRunnerOptions> = {}): Promise<SandboxRunner> {
	const r = createSandboxRunner({ roots: [root], home, ...opts });
	open.push(r);
	await r.ready();
	return r;
}

async function sh(r: SandboxRunner, command: string): Promise<{ out: string; code: number | null }> {
	let out = "";
	const res = await r.run(["/bin/sh", "-c", command], {
		cwd: root,
		onData: (c) => (out += c.toString("utf8")),
	});
	return { out, code: res.exitCode };
}

/** Tries, inside the sandbox, to plant a pre-commit hook in the repository at `dir`; true if it landed. */
async function hookPlanted(r: SandboxRunner, dir: string): Promise<boolean> {
	const hook = join(root, dir, ".git", "hooks", "pre-commit");
	const res = await sh(r, `mkdir -p ${dir}/.git/hooks; printf 'evil' > ${dir}/.git/hooks/pre-commit`);
	const landed = await readFile(hook, "utf8").then(
		(t) => t === "evil",
		() => false,
	);
	if (!landed) expect(res.out).toMatch(/Read-only file system/);
	return landed;
}

describe.skipIf(available !== true)(
	title("bwrap: the kept scan of a large workspace is checked by inotify"),
	() => {
		it("is checked by its watches, and what the scan ignores costs no rescan", async () => {
			const r = await runner();
			for (let i = 0; i < 3; i++) expect((await sh(r, "true")).code).toBe(0);
			expect(r.scans.mode).toBe("watched");
			expect(r.scans.counts).toMatchObject({ full: 1, kept: 6, watched: 6 });
			// Regular files anywhere and a node_modules tree: no name the scan uses.
			await sh(
				r,
				"for i in $(seq 200); do echo x > d3/e$((i % 100))/f$i.o; done; mkdir -p node_modules/pkg/.git",
			);
			await sh(r, "true");
			expect(r.scans.counts.full).toBe(1);
			// The control: a repository the sandbox can write to when it is not protected (node_modules).
			expect(await hookPlanted(r, "node_modules/pkg")).toBe(true);
		});

		it("hostile code plants a repository deep in the tree: the next command finds it read-only", async () => {
			const r = await runner();
			await sh(r, "true");
			expect((await sh(r, "git init -q d17/e42/x && echo ok > d17/e42/x/file")).code).toBe(0);
			expect(await hookPlanted(r, "d17/e42/x")).toBe(false);
			// Kept by its watches again once the new repository's files are older than the racy window.
			await settle();
			await sh(r, "true");
			expect(r.scans.mode).toBe("watched");
		});

		it("hostile code renames a directory holding a repository over another, and exchanges two atomically", async () => {
			const r = await runner();
			// Staged where the scan does not look: no rescan, so only the rename can reveal them.
			await sh(r, "git init -q node_modules/stash/r1 && git init -q node_modules/stash/r2");
			const full = r.scans.counts.full;
			await sh(r, "true");
			expect(r.scans.counts.full).toBe(full);
			expect((await sh(r, "mv -T node_modules/stash/r1 d20/e5")).code).toBe(0);
			expect(await hookPlanted(r, "d20/e5")).toBe(false);
			const exchange = `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, b"node_modules/stash/r2", -100, b"d21", 2) != 0:
    raise OSError(ctypes.get_errno(), "renameat2")'`;
			expect((await sh(r, exchange)).code).toBe(0);
			expect(existsSync(join(root, "d21", ".git"))).toBe(true);
			expect(await hookPlanted(r, "d21")).toBe(false);
		});

		it("hostile code swaps a directory for a symlink: what appears through it is protected", async () => {
			const r = await runner();
			await sh(r, "mkdir -p node_modules/stash/cfg/git && echo '[core]' > node_modules/stash/cfg/git/config");
			const swapped = await sh(r, "rm -r h/.config && ln -s ../node_modules/stash/cfg h/.config");
			expect(swapped.out).toMatch(
				/node_modules\/stash\/cfg\/git is protected and was created by the command; it was moved/,
			);
			expect(existsSync(join(root, "node_modules/stash/cfg/git"))).toBe(false);
			const again = await sh(r, "mkdir h/.config/git && echo evil > h/.config/git/config");
			expect(again.out).toMatch(/is protected and was created by the command/);
			expect(existsSync(join(root, "node_modules/stash/cfg/git"))).toBe(false);
		});

		it("a process outside plants and moves repositories while commands run: none is writable after", async () => {
			const r = await runner();
			await sh(r, "true");
			// During a command: the host plants once the command has started.
			const during = sh(r, "touch marker && sleep 0.5");
			while (!existsSync(join(root, "marker"))) await new Promise((res) => setTimeout(res, 10));
			execFileSync("git", ["init", "-q", join(root, "d33/e7/y")]);
			await during;
			expect(await hookPlanted(r, "d33/e7/y")).toBe(false);
			// Between commands: a repository staged outside the scan's view renamed in.
			execFileSync("git", ["init", "-q", join(root, "node_modules/stash/h1")]);
			await sh(r, "true");
			await rename(join(root, "node_modules/stash/h1"), join(root, "d34/e1"));
			expect(await hookPlanted(r, "d34/e1")).toBe(false);
			// A racer creating, renaming and removing git directories while commands run.
			const racer = spawn(
				"/usr/bin/python3",
				[
					"-c",
					`import os, shutil
for i in range(300):
    d = "d40/e%d" % (i % 100)
    os.makedirs(d + "/.git/hooks", exist_ok=True)
    if i % 3 == 1: os.rename(d, "d41/e%d" % (i % 100) if not os.path.exists("d41/e%d/.git" % (i % 100)) else d)
    if i % 7 == 2: shutil.rmtree("d40/e%d" % ((i + 50) % 100), ignore_errors=True)`,
				],
				{ cwd: root, stdio: "ignore" },
			);
			const done = new Promise((res) => racer.on("exit", res));
			let raced = true;
			void done.then(() => (raced = false));
			while (raced) await sh(r, "true");
			const left: string[] = [];
			for (const d of ["d40", "d41"]) {
				for (const e of await readdir(join(root, d)))
					if (existsSync(join(root, d, e, ".git"))) left.push(`${d}/${e}`);
			}
			expect(left.length).toBeGreaterThan(10);
			const tries = left.map((p) => `printf evil > ${p}/.git/hooks/pre-commit 2>/dev/null`).join("; ");
			await sh(r, tries);
			const landed = left.filter((p) => existsSync(join(root, p, ".git/hooks/pre-commit")));
			expect(landed).toEqual([]);
		}, 90_000); // a rival planting repositories while commands run: 13 s under CI's load

		it("a mount on the host over a watched directory (no inotify event at all) is seen; one elsewhere costs nothing", async (ctx) => {
			const probe = join(scratch, "elsewhere", "mount-probe");
			await mkdir(probe, { recursive: true });
			if (process.getuid?.() !== 0 || spawnSync("mount", ["-t", "tmpfs", "keel-test", probe]).status !== 0) {
				ctx.skip(); // mounting needs root
			}
			spawnSync("umount", [probe]);
			const point = join(root, "d45", "e3");
			try {
				const r = await runner();
				await sh(r, "true");
				expect(r.scans.mode).toBe("watched");
				// A mount nowhere near what the scan read (a container starting elsewhere): no rescan.
				const full = r.scans.counts.full;
				execFileSync("mount", ["-t", "tmpfs", "keel-test", probe]);
				await sh(r, "true");
				expect(r.scans.counts.full).toBe(full);
				// Over a watched directory: its inode, and its parent's names, do not change.
				execFileSync("mount", ["-t", "tmpfs", "keel-test", point]);
				execFileSync("git", ["init", "-q", join(point, "m")]);
				expect(await hookPlanted(r, "d45/e3/m")).toBe(false);
			} finally {
				spawnSync("umount", ["-l", point]);
				spawnSync("umount", ["-l", probe]);
			}
		});

		it("the queue overflows (events lost): falls back to the stat check and still finds the new repository", async () => {
			await settle(); // what earlier tests changed is older than the stat check's racy window
			const max = Number(await readFile("/proc/sys/fs/inotify/max_queued_events", "utf8"));
			const r = await runner();
			await sh(r, "true");
			// Enough events about ignored names to fill the queue, then the repository: its event is lost.
			const burst = `python3 -c '
for i in range(${max + 2000}): open("d47/e0/f%d" % i, "w").close()' && git init -q d47/e1/z`;
			expect((await sh(r, burst)).code).toBe(0);
			expect(r.scans.counts.fellBack).toBeGreaterThanOrEqual(1);
			expect(await hookPlanted(r, "d47/e1/z")).toBe(false);
		}, 60_000);

		it("the watch limit runs out: falls back to stat'ing every path and stays correct", async () => {
			const r = await runner({ scanCache: { watches: { maxWatches: 100 } } });
			await sh(r, "true");
			expect(r.scans.mode).not.toBe("watched");
			expect((await sh(r, "git init -q d48/e9/w")).code).toBe(0);
			expect(await hookPlanted(r, "d48/e9/w")).toBe(false);
			expect(r.scans.counts.watched).toBe(0);
		});

		it("changes made inside the sandbox (through its bind mounts) reach a watch on the host", async () => {
			const libc = lazyInotify()();
			expect(libc).not.toBeNull();
			const w = DirWatches.open(libc!)!;
			const dir = join(root, "d49");
			expect(w.watch(dir)).toBe("watched");
			w.listed(dir, (name, isDir) => entryRole(dir, name, isDir) !== undefined);
			const r = await runner();
			await sh(r, "echo x > d49/plain.txt");
			expect(w.settle()).toBe("quiet"); // a regular file: not a name the scan uses
			await sh(r, "mkdir d49/sub");
			expect(w.settle()).toBe("changed");
			w.close();
		});

		it("the instance is not handed to sandboxed programs, and closing the runner closes it", async () => {
			const count = async () => {
				let n = 0;
				for (const fd of await readdir("/proc/self/fd")) {
					if ((await readlink(`/proc/self/fd/${fd}`).catch(() => "")) === "anon_inode:inotify") n++;
				}
				return n;
			};
			const before = await count();
			const r = await runner();
			await sh(r, "true");
			expect(r.scans.mode).toBe("watched");
			expect(await count()).toBe(before + 1);
			const inside = await sh(r, "for f in /proc/[0-9]*/fd/*; do readlink $f; done 2>/dev/null; echo end");
			expect(inside.out).toContain("end");
			expect(inside.out).not.toContain("inotify");
			r.close();
			await new Promise((res) => setTimeout(res, 200)); // the close runs on the thread pool
			expect(await count()).toBe(before);
		});
	},
);
