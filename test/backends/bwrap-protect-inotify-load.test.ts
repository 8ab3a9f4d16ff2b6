/**
 * When the kept protected-set scan (bwrap/protect-cache.ts) loads its inotify binding: only once a
 * scan reaches the watch threshold (64 listed directories). A small workspace is checked by stat'ing
 * and never asks for it (koffi's `require` costs 13-19 ms once per process); a large one stops at
 * the threshold, starts over watched and is kept watched. Each case is checked against a fresh scan.
 * The binding is counted through the `inotify` option, and a child process running the built dist/
 * with the defaults shows koffi itself is not loaded for the small workspace and is for the large.
 * Host-side: no bwrap needed.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LazyInotify, lazyInotify } from "../../src/backend/bwrap/inotify.js";
import { type ProtectOptions, scanProtected } from "../../src/backend/bwrap/protect.js";
import { ProtectedScanCache } from "../../src/backend/bwrap/protect-cache.js";
import { REPO } from "../fixtures/keel-cli.js";

let scratch: string;
// Each test that plants something, or needs a tree older than the racy window, has its own.
let small: ProtectOptions;
let large: ProtectOptions;
let bare: ProtectOptions;
let childSmall: ProtectOptions;
let childLarge: ProtectOptions;

/** Older than the racy window, so a scan of it is kept (a wait, not a timing assertion). */
const settle = () => new Promise((r) => setTimeout(r, 2_200));

/** A binding that counts how often it is asked for, in front of `inner`. */
function counting(inner: LazyInotify): { binding: LazyInotify; asks: () => number } {
	let n = 0;
	return {
		binding: () => {
			n++;
			return inner();
		},
		asks: () => n,
	};
}

/** `dirs` x `dirs` directories under a repository's top, and an empty home. */
async function workspace(name: string, dirs: number): Promise<ProtectOptions> {
	const root = join(scratch, name, "root");
	for (let a = 0; a < dirs; a++) {
		await Promise.all(
			Array.from({ length: dirs }, (_, b) => mkdir(join(root, `d${a}`, `e${b}`), { recursive: true })),
		);
	}
	await mkdir(join(scratch, name, "home"));
	execFileSync("git", ["init", "-q", root]);
	return { roots: [root], home: join(scratch, name, "home") };
}

async function expectSameAsFresh(cache: ProtectedScanCache, opts: ProtectOptions) {
	const kept = await cache.scan(opts);
	// The same sets (the order of what one level's concurrent reads find varies).
	const sorted = (s: object) => Object.values(s).map((v) => (Array.isArray(v) ? [...v].sort() : v));
	expect(sorted(kept)).toEqual(sorted(await scanProtected(opts)));
	return kept;
}

beforeAll(async () => {
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-load-")));
	small = await workspace("small", 4); // 21 directories listed, and the git dir's two
	large = await workspace("large", 10); // 111
	bare = await workspace("bare", 10);
	childSmall = await workspace("child-small", 4);
	childLarge = await workspace("child-large", 10);
	await settle();
}, 60_000);
afterAll(async () => {
	await rm(scratch, { recursive: true, force: true });
});

const libc = lazyInotify()();

describe("the inotify binding is loaded only once a scan reaches the watch threshold", () => {
	it("a small workspace never asks for it, and a planted .envrc and repository are still found", async () => {
		const { binding, asks } = counting(lazyInotify());
		const cache = new ProtectedScanCache({ inotify: binding });
		await expectSameAsFresh(cache, small);
		await expectSameAsFresh(cache, small);
		expect(cache.counts).toMatchObject({ full: 1, kept: 1, rescanned: 0 });
		expect(cache.mode).toBe("stat");
		await writeFile(join(small.roots[0], "d2", ".envrc"), "echo hi\n");
		expect((await expectSameAsFresh(cache, small)).existing).toContain(join(small.roots[0], "d2", ".envrc"));
		execFileSync("git", ["init", "-q", join(small.roots[0], "d3", "e1")]);
		expect((await expectSameAsFresh(cache, small)).gitDirs).toContain(
			join(small.roots[0], "d3", "e1", ".git"),
		);
		expect(cache.counts.full).toBe(3);
		expect(asks()).toBe(0);
		cache.close();
	});

	it.skipIf(!libc)(
		"a large one loads it at the threshold, starts over watched and is kept watched",
		async () => {
			const { binding, asks } = counting(lazyInotify());
			const cache = new ProtectedScanCache({ inotify: binding });
			await expectSameAsFresh(cache, large);
			expect(asks()).toBeGreaterThanOrEqual(1);
			expect(cache.counts).toMatchObject({ full: 1, rescanned: 1 });
			expect(cache.mode).toBe("watched");
			await expectSameAsFresh(cache, large);
			await expectSameAsFresh(cache, large);
			expect(cache.counts).toMatchObject({ full: 1, kept: 2, watched: 2 });
			const planted = join(large.roots[0], "d7", "e3");
			execFileSync("git", ["init", "-q", planted]);
			expect((await expectSameAsFresh(cache, large)).gitDirs).toContain(join(planted, ".git"));
			// Watched from its first directory this time: not begun twice.
			expect(cache.counts).toMatchObject({ full: 2, rescanned: 1 });
			cache.close();
		},
	);

	it("without a binding (koffi missing) a large one asks once per scan and is not begun again", async () => {
		const { binding, asks } = counting(() => null);
		const cache = new ProtectedScanCache({ inotify: binding });
		await expectSameAsFresh(cache, bare);
		expect(asks()).toBe(1);
		expect(cache.counts).toMatchObject({ full: 1, rescanned: 0 });
		expect(cache.mode).toBe("stat");
		await expectSameAsFresh(cache, bare);
		expect(cache.counts).toMatchObject({ full: 1, kept: 1 });
		cache.close();
	});
});

const dist = (f: string) => join(REPO, "dist/backend/bwrap", f);
const noDist = !existsSync(dist("protect-cache.js"));

describe.skipIf(noDist || !libc)(
	`koffi itself, with the defaults${noDist ? " (skipped: no dist/, npm run build)" : !libc ? " (skipped: koffi does not load here)" : ""}`,
	() => {
		it("is not loaded by a small workspace's scans, and is by a large one's", async () => {
			const script = join(scratch, "load.mjs");
			await writeFile(
				script,
				`import { createRequire } from "node:module";
import { ProtectedScanCache } from ${JSON.stringify(dist("protect-cache.js"))};
const koffiLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => /[\\\\/]node_modules[\\\\/]koffi[\\\\/]/.test(k));
const cache = new ProtectedScanCache();
const out = { atStart: koffiLoaded() };
await cache.scan(${JSON.stringify(childSmall)});
await cache.scan(${JSON.stringify(childSmall)});
out.small = { loaded: koffiLoaded(), mode: cache.mode };
cache.close();
const big = new ProtectedScanCache();
await big.scan(${JSON.stringify(childLarge)});
out.large = { loaded: koffiLoaded(), mode: big.mode };
big.close();
process.stdout.write(JSON.stringify(out));
`,
			);
			const out = JSON.parse(execFileSync(process.execPath, [script], { encoding: "utf8" }));
			expect(out).toEqual({
				atStart: false,
				small: { loaded: false, mode: "stat" },
				large: { loaded: true, mode: "watched" },
			});
		});
	},
);
