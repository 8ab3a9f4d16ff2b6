/**
 * grep's lookahead (src/backend/search/lookahead.ts, rg-parallel.ts): while rg starts, keel reads
 * the first files in path order and, when more than the limit lie there, stops the parallel run
 * for the ordered one. It is a guess read from files an attacker may plant: it must follow no
 * link, wait on no FIFO, read no more than a file's head, honour the ignore rules and the glob,
 * and never hold the grep up; a wrong guess may cost time, never change the answer.
 */
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localThroughout } from "../../src/backend/mount-table.js";
import { createJsSearch, createLocalSearch } from "../../src/backend/search/index.js";
import {
	createLookahead,
	type Lookahead,
	type LookaheadScan,
	type Verdict,
} from "../../src/backend/search/lookahead.js";
import { type ArgvRunner, createNativeSearch } from "../../src/backend/search/native.js";
import { loadRe2 } from "../../src/backend/search/patterns.js";
import { fakeTools, HAS_RG, hits, matchLine, RG, req, sorted, until } from "./rg-script.js";

let base: string;
beforeEach(async () => {
	base = await realpath(await mkdtemp(join(tmpdir(), "keel-lookahead-")));
});
afterEach(async () => {
	await rm(base, { recursive: true, force: true });
});

/** The scan read to its verdict: whether it guessed dense (no scan: no guess). */
function decided(scan: LookaheadScan | undefined): boolean {
	for (;;) {
		const verdict = scan?.step(performance.now() + 1000) ?? "sparse";
		if (verdict !== "more") return verdict === "dense";
	}
}

/** `n` files under `dir`, each with one line holding "needle" (or `text`). */
async function files(dir: string, n: number, text = "x\nneedle.here\ny\n"): Promise<void> {
	await mkdir(dir, { recursive: true });
	for (let i = 0; i < n; i++) await writeFile(join(dir, `f${String(i).padStart(3, "0")}.txt`), text);
}

describe("the lookahead's guess, on real files", () => {
	const look = createLookahead(loadRe2());
	const guess = (path: string, more: Parameters<typeof req>[1] = {}) =>
		decided(look(req(path, { limit: 10, ...more })));

	it("more than the limit first in path order: dense; fewer, or only later: not", async () => {
		await files(join(base, "a"), 11);
		expect(await guess(base)).toBe(true);
		expect(await guess(base, { limit: 11 })).toBe(false);
		// A literal spelled in regex syntax is one too; regex syntax beyond that gets no guess.
		expect(await guess(base, { pattern: "needle\\.here" })).toBe(true);
		expect(await guess(base, { pattern: "needle.here" })).toBe(false);
		expect(await guess(base, { pattern: "needl\\w" })).toBe(false);
		expect(await guess(base, { pattern: "needle", ignoreCase: true })).toBe(false);
	});

	it("files the ignore rules or the glob leave out count for nothing", async () => {
		await mkdir(join(base, ".git"));
		await files(join(base, "build"), 20);
		await writeFile(join(base, ".gitignore"), "build/\n");
		expect(await guess(base)).toBe(false);
		await writeFile(join(base, ".gitignore"), "");
		expect(await guess(base)).toBe(true);
		expect(await guess(base, { glob: "*.md" })).toBe(false);
		await writeFile(join(base, ".rgignore"), "*.txt\n");
		expect(await guess(base)).toBe(false);
	});

	it("links are never followed: a link to a dense directory or file outside counts for nothing", async () => {
		const outside = join(base, "outside");
		await files(outside, 20);
		const root = join(base, "root");
		await mkdir(root);
		await symlink(outside, join(root, "a-dir-link"));
		for (let i = 0; i < 20; i++) await symlink(join(outside, "f000.txt"), join(root, `b${i}.txt`));
		expect(await guess(root)).toBe(false);
	});

	it("a FIFO, as a file and as an ignore file, is never waited on", async () => {
		const root = join(base, "root");
		await mkdir(root);
		execFileSync("mkfifo", [join(root, "0-pipe.txt")]);
		execFileSync("mkfifo", [join(root, ".ignore")]);
		await files(join(root, "d"), 11);
		expect(await guess(root)).toBe(true);
	});

	it("ignore files above the path count; a FIFO planted as one is never waited on", async () => {
		const root = join(base, "root");
		await files(join(root, "d"), 11);
		await writeFile(join(base, ".ignore"), "*.txt\n");
		expect(await guess(root)).toBe(false);
		await rm(join(base, ".ignore"));
		for (const name of [".ignore", ".gitignore", ".rgignore"]) execFileSync("mkfifo", [join(base, name)]);
		await mkdir(join(base, ".git")); // .gitignore counts in a repository only
		expect(await guess(root)).toBe(true);
	});

	it("an ignore file too large to parse here (over 256 KB), above, at or below the path: no guess, nothing left open", async () => {
		const root = join(base, "root");
		await files(join(root, "a"), 11);
		const big = `# ${"x".repeat(300 * 1024)}\n`; // a comment: it ignores nothing
		const fds = () => readdirSync("/proc/self/fd").length;
		expect(await guess(root)).toBe(true);
		for (const at of [join(base, ".ignore"), join(root, ".ignore"), join(root, "a", ".ignore")]) {
			await writeFile(at, big);
			const open = fds();
			expect(await guess(root), at).toBe(false);
			expect(fds(), at).toBe(open);
			await rm(at);
		}
		await writeFile(join(root, "a", ".ignore"), `# ${"x".repeat(200 * 1024)}\n`);
		expect(await guess(root)).toBe(true); // under the bound: read and parsed
	});

	it("a 2 GB file first in path order is read no further than its head", async () => {
		const root = join(base, "root");
		await mkdir(root);
		const big = join(root, "0-big.txt");
		await writeFile(big, "no match in the head\n");
		await truncate(big, 2 ** 31); // a hole: 2 GB, no disk
		await files(join(root, "d"), 11);
		const rss = process.memoryUsage().rss;
		expect(await guess(root)).toBe(true);
		expect(process.memoryUsage().rss - rss).toBeLessThan(256 * 1024 * 1024);
	});

	it("a filesystem mounted inside the tree (one a stalled server could hold): no guess", async (ctx) => {
		await files(join(base, "a"), 20);
		const inner = join(base, "b-mount");
		await mkdir(inner);
		try {
			execFileSync("mount", ["-t", "tmpfs", "keel-test", inner], { stdio: "ignore" });
		} catch {
			ctx.skip("skipped: mounting a tmpfs needs root (CI runs as root)");
		}
		try {
			expect(await guess(base)).toBe(false);
		} finally {
			execFileSync("umount", [inner]);
		}
		expect(await guess(base)).toBe(true);
	});

	it("a remote filesystem at or above the path, or mounted below it: no guess", () => {
		const table = (entries: [string, string][]) => new Map(entries);
		const local = table([
			["/", "ext4"],
			["/proc", "proc"],
			["/work", "xfs"],
		]);
		expect(localThroughout("/work/repo", local)).toBe(true);
		// The repository on a local disk, mounted under an NFS directory whose ignore files count.
		expect(
			localThroughout("/net/home/repo", table([...local, ["/net", "nfs4"], ["/net/home/repo", "ext4"]])),
		).toBe(false);
		expect(localThroughout("/work/repo", table([...local, ["/work/repo/vendor", "fuse.sshfs"]]))).toBe(false);
		expect(localThroughout("/work/repo", table([["/", "fuse.fuse-overlayfs"]]))).toBe(false);
		expect(localThroughout("/work/repo", table([]))).toBe(false);
	});

	it("binary files (a NUL in the head) count for nothing", async () => {
		await files(join(base, "a"), 20, "needle\0\n");
		expect(await guess(base)).toBe(false);
	});

	it("a fresh lookahead's first call goes without a guess (re2js is loaded a second later)", async () => {
		await files(join(base, "a"), 20);
		const fresh = createLookahead();
		expect(fresh(req(base, { limit: 10 }))).toBeUndefined();
		// Loaded a second later: then it guesses. A guess also gives up past 50 ms, which a loaded
		// machine (CI runs two test files at once) can cost one call: ask until one answers.
		let guessed = false;
		for (const until = Date.now() + 20_000; !guessed && Date.now() < until; ) {
			await new Promise((r) => setTimeout(r, 250));
			guessed = decided(fresh(req(base, { limit: 10 })));
		}
		expect(guessed).toBe(true);
	});

	it("a step ends at its deadline, and the next goes on from there", async () => {
		await files(join(base, "a"), 20);
		const scan = look(req(base, { limit: 10 }));
		expect(scan?.step(performance.now() - 1)).toBe("more");
		expect(scan?.step(performance.now() - 1)).toBe("more");
		expect(decided(scan)).toBe(true);
		expect(scan?.step(performance.now() - 1)).toBe("dense"); // a verdict, once reached, stays
	});
});

describe("the plan around the lookahead, over a scripted transport", () => {
	/** A lookahead whose steps give `verdicts` in turn (the last one from then on). */
	const scripted =
		(...verdicts: Verdict[]): Lookahead =>
		() => ({
			step: () => (verdicts.length > 1 ? verdicts.shift()! : verdicts[0]),
			close: () => undefined,
		});
	/** The runs started (true: ordered), and whether the parallel one was stopped. */
	const recording = () => {
		const runs: boolean[] = [];
		const seen = { parallelStopped: false };
		const runner: ArgvRunner = async (argv, opts) => {
			runs.push(sorted(argv));
			if (!sorted(argv)) {
				await until(opts.signal);
				seen.parallelStopped = true;
				return { exitCode: null };
			}
			for (let i = 0; i < 5 && !opts.signal?.aborted; i++) opts.onStdout(matchLine(`/r/f${i}`, 1));
			return { exitCode: opts.signal?.aborted ? null : 0 };
		};
		return { runs, seen, runner };
	};

	it("dense in its first step: only the ordered run starts, and answers", async () => {
		const { runs, seen, runner } = recording();
		const r = await createNativeSearch(runner, fakeTools, { lookahead: scripted("dense") }).grep(
			req("/r", { limit: 2 }),
		);
		expect(hits(r)).toEqual(["/r/f0:1", "/r/f1:1"]);
		expect(r.limitReached).toBe(true);
		expect(runs).toEqual([true]);
		expect(seen.parallelStopped).toBe(false);
	});

	it("dense later: the parallel run is stopped in its start-up and the ordered run answers alone", async () => {
		const { runs, seen, runner } = recording();
		const r = await createNativeSearch(runner, fakeTools, {
			lookahead: scripted("more", "more", "dense"),
		}).grep(req("/r", { limit: 2 }));
		expect(hits(r)).toEqual(["/r/f0:1", "/r/f1:1"]);
		expect(r.limitReached).toBe(true);
		expect(runs).toEqual([false, true]);
		expect(seen.parallelStopped).toBe(true);
	});

	it("a lookahead that never answers holds nothing up: rg's walk beginning ends the wait", async () => {
		const hangs = scripted("more");
		const runner: ArgvRunner = async (_argv, opts) => {
			opts.onStderr?.(Buffer.from("/dev/null/keel-rg-walk-starts: Not a directory (os error 20)\n"));
			opts.onStdout(matchLine("/r/b", 1));
			opts.onStdout(matchLine("/r/a", 1));
			return { exitCode: 2 }; // the mark's error
		};
		const r = await createNativeSearch(runner, fakeTools, { lookahead: hangs }).grep(req("/r"));
		expect(hits(r)).toEqual(["/r/a:1", "/r/b:1"]);
	});

	it("a lookahead that fails, or a parallel run that fails first, changes nothing", async () => {
		const fails: Lookahead = () => ({
			step: () => {
				throw new Error("lookahead broke");
			},
			close: () => undefined,
		});
		const ok: ArgvRunner = async (_argv, opts) => {
			opts.onStdout(matchLine("/r/a", 1));
			return { exitCode: 0 };
		};
		expect(hits(await createNativeSearch(ok, fakeTools, { lookahead: fails }).grep(req("/r")))).toEqual([
			"/r/a:1",
		]);
		const badPattern: ArgvRunner = async (_argv, opts) => {
			opts.onStderr?.(Buffer.from("regex parse error:\n    (\n    ^\nerror: unclosed group\n"));
			return { exitCode: 2 };
		};
		const hangs = scripted("more");
		await expect(
			createNativeSearch(badPattern, fakeTools, { lookahead: hangs }).grep(req("/r", { pattern: "(" })),
		).rejects.toMatchObject({ code: "INVALID_PATTERN" });
	});
});

describe("with real rg", () => {
	it.skipIf(!HAS_RG)(
		`a dense tree and a sparse one: the JS engine's first N, lookahead or not${RG}`,
		async () => {
			await files(join(base, "dense", "a"), 150);
			await files(join(base, "sparse", "a"), 3);
			await files(join(base, "sparse", "b"), 300, "nothing\n");
			await files(join(base, "sparse", "c"), 3);
			const js = createJsSearch();
			for (const tree of ["dense", "sparse"]) {
				const want = await js.grep(req(join(base, tree), { limit: 100 }));
				for (const lookahead of [createLookahead(loadRe2()), false]) {
					const r = await createLocalSearch({ engine: "native", lookahead }).grep(
						req(join(base, tree), { limit: 100 }),
					);
					expect(hits(r), `${tree} lookahead ${lookahead !== false}`).toEqual(hits(want));
					expect(r.limitReached).toBe(want.limitReached);
				}
			}
		},
	);

	it.skipIf(!HAS_RG)(
		`a FIFO as .ignore: find (JS engine) answers; grep answers at its budget${RG}`,
		async () => {
			await files(join(base, "d"), 3);
			execFileSync("mkfifo", [join(base, ".ignore")]);
			const found = await createLocalSearch({ engine: "js" }).find({
				pattern: "*.txt",
				path: base,
				limit: 10,
			});
			expect(found.paths.length).toBe(3);
			// rg itself waits on the FIFO: the budget stops it, and the lookahead holds nothing past it.
			const r = await createLocalSearch({ engine: "native", budgetMs: 1500 }).grep(req(base));
			expect(r.timedOut).toBe(true);
		},
	);
});
