/**
 * The kept protected-set scan (bwrap/protect-cache.ts): answered from its record only while
 * nothing it read has changed, and found again in full as soon as anything did, however the change
 * was made: a .git planted deep in the tree, an .envrc planted at the top, a git config rewritten
 * to the same size with its mtime put back, an ancestor directory swapped, a change in the same
 * clock tick as the scan. The oracle is a fresh scan of the same tree. Host-side: no bwrap needed.
 * Each case runs twice: checked by stat'ing every path, and checked by inotify (dir-watches.ts; the
 * larger trees and the sandbox's own changes are in bwrap-protect-watch.test.ts).
 */
import { execFileSync } from "node:child_process";
import {
	mkdir,
	mkdtemp,
	readFile,
	realpath,
	rename,
	rm,
	stat,
	symlink,
	utimes,
	writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DirWatches } from "../../src/backend/bwrap/dir-watches.js";
import { lazyInotify } from "../../src/backend/bwrap/inotify.js";
import { type ProtectOptions, scanProtected } from "../../src/backend/bwrap/protect.js";
import { ProtectedScanCache, type ProtectedScanCacheOptions } from "../../src/backend/bwrap/protect-cache.js";

let scratch: string;
let opts: ProtectOptions;

/** Older than the racy window, so a scan of it is kept (a wait, not a timing assertion). */
const settle = () => new Promise((r) => setTimeout(r, 2_200));

async function expectSameAsFresh(cache: ProtectedScanCache) {
	const kept = await cache.scan(opts);
	expect(kept).toEqual(await scanProtected(opts));
	return kept;
}

const modes: [string, "stat" | "watched", ProtectedScanCacheOptions][] = [
	["stat'ed", "stat", { inotify: () => null }],
	["watched", "watched", { watchFrom: 0 }],
];

describe.each(modes)(
	"the protected-set scan is kept only while what it read is unchanged (%s)",
	(_, mode, cacheOpts) => {
		const newCache = () => new ProtectedScanCache(cacheOpts);
		beforeAll(async () => {
			scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-cache-")));
			const root = join(scratch, "root");
			await mkdir(join(root, "src", "deep", "er"), { recursive: true });
			await mkdir(join(scratch, "home"));
			execFileSync("git", ["init", "-q", root]);
			await writeFile(join(root, "src", "a.txt"), "a\n");
			opts = { roots: [root], home: join(scratch, "home") };
		});
		afterAll(async () => {
			await rm(scratch, { recursive: true, force: true });
		});

		it("is kept across calls when nothing changed", async () => {
			await settle();
			const cache = newCache();
			await expectSameAsFresh(cache);
			await expectSameAsFresh(cache);
			await expectSameAsFresh(cache);
			expect(cache.counts).toMatchObject({ full: 1, kept: 2, watched: mode === "watched" ? 2 : 0 });
			expect(cache.mode).toBe(mode);
			cache.close();
		});

		it("a .git planted three levels down is caught on the next call", async () => {
			const cache = newCache();
			await settle();
			await cache.scan(opts);
			await cache.scan(opts);
			expect(cache.counts.kept).toBe(1);
			const planted = join(opts.roots[0], "src", "deep", "er");
			execFileSync("git", ["init", "-q", planted]);
			const after = await expectSameAsFresh(cache);
			expect(after.gitDirs).toContain(join(planted, ".git"));
			expect(after.existing.some((p) => p.startsWith(join(planted, ".git")))).toBe(true);
		});

		it("an .envrc planted at the top is caught, and one planted in the same tick as the scan too", async () => {
			const cache = newCache();
			await settle();
			await cache.scan(opts);
			await writeFile(join(opts.roots[0], ".envrc"), "echo hi\n");
			expect((await expectSameAsFresh(cache)).existing).toContain(join(opts.roots[0], ".envrc"));
			// Same tick: plant right after a full scan; the scan saw a change that recent and was not kept.
			await cache.scan(opts);
			await writeFile(join(opts.roots[0], "src", ".envrc"), "echo hi\n");
			expect((await expectSameAsFresh(cache)).existing).toContain(join(opts.roots[0], "src", ".envrc"));
		});

		it("a git config rewritten to the same size with its mtime put back is caught (ctime)", async () => {
			const config = join(opts.roots[0], ".git", "config");
			await mkdir(join(opts.roots[0], "hk"));
			const text = await readFile(config, "utf8");
			const cache = newCache();
			await settle();
			await cache.scan(opts);
			await cache.scan(opts);
			expect(cache.counts.kept).toBe(1);
			expect((await cache.scan(opts)).existing).not.toContain(join(opts.roots[0], "hk"));
			const before = await stat(config);
			const line = "[core]\n\thooksPath = hk\n";
			await writeFile(config, line + text.slice(line.length)); // the same length
			await utimes(config, before.atime, before.mtime);
			expect((await stat(config)).size).toBe(before.size);
			expect((await expectSameAsFresh(cache)).existing).toContain(join(opts.roots[0], "hk"));
			await writeFile(config, text);
		});

		it("an ancestor directory swapped for one holding a repository is caught", async () => {
			const cache = newCache();
			const src = join(opts.roots[0], "src");
			await settle();
			await cache.scan(opts);
			await rename(src, join(opts.roots[0], "src.old"));
			await mkdir(join(src, "deep"), { recursive: true });
			execFileSync("git", ["init", "-q", join(src, "deep")]);
			const after = await expectSameAsFresh(cache);
			expect(after.gitDirs).toContain(join(src, "deep", ".git"));
			expect(cache.counts.full).toBe(2);
		});
	},
);

describe("what the watches do not speak for is stat'ed", () => {
	const libc = lazyInotify()();
	it.skipIf(!libc)(
		"a directory on a file system whose changes can come without events (NFS) is not watched",
		async () => {
			const base = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-fs-")));
			await mkdir(join(base, "nfs", "a"), { recursive: true });
			await mkdir(join(base, "local", "a"), { recursive: true });
			await symlink(join(base, "local"), join(base, "link"));
			const real = await readFile("/proc/self/mountinfo", "utf8");
			const point = join(base, "nfs").replace(/ /g, "\\040");
			const w = DirWatches.open(libc!, {
				mountinfo: `${real}999 1 0:99 / ${point} rw,relatime shared:1 - nfs4 server:/export rw\n`,
			})!;
			expect(w.watch(join(base, "local", "a"))).toBe("watched");
			expect(w.watch(join(base, "nfs", "a"))).toBe("uncovered");
			expect(w.watch(join(base, "nfs"))).toBe("uncovered");
			expect(w.watch(join(base, "link", "a"))).toBe("uncovered"); // through a symlink
			expect(w.watch(join(base, "missing", "a"))).toBe("absent");
			w.close();
			await rm(base, { recursive: true, force: true });
		},
	);
});
