/**
 * Search engines on real temporary trees. Every scenario runs on the JS engine and, when rg and
 * fd are installed, on the native engine too, which must then give exactly the JS result.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalSearch } from "../../src/backend/search/index.js";
import { createLocalTools, findOnPath, localRunner } from "../../src/backend/search/local-runner.js";
import { type ArgvRunner, createNativeSearch } from "../../src/backend/search/native.js";
import type { FindOutcome, GrepOutcome, SearchOps } from "../../src/backend/types.js";
import { isKeelError } from "../../src/boundary/errors.js";

const tools = await createLocalTools().detect();
const HAS_NATIVE = tools.rg !== undefined && tools.fd !== undefined;
const NATIVE = HAS_NATIVE ? "[native]" : "[native] (skipped: rg and/or fd not found on PATH)";
const js = createLocalSearch({ engine: "js" });
const native = createLocalSearch({ engine: "native" });

let base = "";
/** The fixture repository (has a .git directory). */
let repo = "";

const TREE: Record<string, string | Buffer> = {
	"repo/.git/HEAD": "ref: refs/heads/main\nneedle in git\n",
	"repo/.git/info/exclude": "excluded.txt\n",
	"repo/.gitignore": "build/\n*.log\n!keep.log\n",
	"repo/.ignore": "secret*\n",
	"repo/.hidden": "needle hidden\n",
	"repo/.config/settings.json": '{ "needle": true }\n',
	"repo/a.txt": "needle a\n",
	"repo/a/b.txt": "needle a/b\n",
	"repo/B.txt": "needle B\n",
	"repo/build/out.ts": "needle build\n",
	"repo/debug.log": "needle debug\n",
	"repo/keep.log": "needle keep\n",
	"repo/secret.txt": "needle secret\n",
	"repo/excluded.txt": "needle excluded\n",
	"repo/package.json": '{ "name": "needle" }\n',
	"repo/bin.dat": Buffer.from("needle\0binary\n"),
	"repo/src/.gitignore": "generated.ts\n",
	"repo/src/generated.ts": "needle generated\n",
	"repo/src/index.ts":
		"line1 alpha\nline2 needle one\nline3 beta\nline4 needle two\nline5 gamma\nline6 delta\nline7\n",
	"repo/src/util.spec.ts": "needle spec\n",
	"repo/src/deep/x.spec.ts": "needle deep spec\n",
	"repo/src/deep/data.json": '{ "needle": 1 }\n',
	"repo/src/deep/.ignore": "!secret-ok.txt\n",
	"repo/src/deep/secret-ok.txt": "needle secret ok\n",
	"repo/docs/ünïcödé 文件.md": "needle unicode\n",
	"repo/docs/with space.txt": "needle space\n",
	"repo/docs/crlf.txt": "first\r\nneedle crlf\r\nlast\r\n",
	"repo/vendor/lib/.git/HEAD": "needle nested git\n",
	"repo/vendor/lib/x.log": "needle nested repo\n",
	"repo/special/regex.txt": "call a.b(1)\naxb(2)\n",
	"repo/special/case.txt": "Needle Upper\nNEEDLE\nother\n",
	"repo/many/m.txt": Array.from({ length: 10 }, (_, i) => `hit ${i + 1}\n`).join(""),
	"repo/many/n.txt": "hit 11\nhit 12\n",
	"plain/.gitignore": "*.log\n",
	"plain/.ignore": "skip.txt\n",
	"plain/a.log": "needle plain log\n",
	"plain/skip.txt": "needle skip\n",
	"plain/ok.txt": "needle ok\n",
	"plain/sub/.gitignore": "*.txt\n!keep.txt\n",
	"plain/sub/x.txt": "sub x\n",
	"plain/sub/keep.txt": "sub keep\n",
	"plain/sub/y.md": "sub y\n",
	"we!rd [x] {y}/src/a.ts": "needle weird\n",
	"we!rd [x] {y}/src/sub/b.ts": "needle weird deep\n",
};

beforeAll(async () => {
	base = await realpath(await mkdtemp(join(tmpdir(), "keel-search-")));
	repo = join(base, "repo");
	for (const [rel, content] of Object.entries(TREE)) {
		const file = join(base, rel);
		await mkdir(dirname(file), { recursive: true });
		await writeFile(file, content);
	}
	await symlink("src/index.ts", join(repo, "link.ts"));
	await symlink("src", join(repo, "linkdir"));
});

afterAll(async () => {
	if (base) await rm(base, { recursive: true, force: true });
});

type Result = GrepOutcome | FindOutcome | { error: string };

/** Run, turning a KeelError into `{ error: code }` so failures can be compared too. */
async function attempt(fn: () => Promise<GrepOutcome | FindOutcome>): Promise<Result> {
	try {
		return await fn();
	} catch (e) {
		if (isKeelError(e)) return { error: e.code };
		throw e;
	}
}

function withoutEngine(r: Result): unknown {
	return "engine" in r ? { ...r, engine: "-" } : r;
}

/** One scenario, checked on both engines; the native result must equal the JS one. */
function scenario(name: string, run: (ops: SearchOps) => Promise<Result>, check: (r: Result) => void): void {
	it(`${name} [js]`, async () => {
		check(await run(js));
	});
	it.skipIf(!HAS_NATIVE)(`${name} ${NATIVE}`, async () => {
		const expected = await run(js);
		const actual = await run(native);
		check(actual);
		expect(withoutEngine(actual)).toEqual(withoutEngine(expected));
	});
}

const grep = (ops: SearchOps, rel: string, pattern: string, more: Record<string, unknown> = {}) =>
	attempt(() => ops.grep({ pattern, path: join(base, rel), context: 0, limit: 1000, ...more }));
const find = (ops: SearchOps, rel: string, pattern: string, limit = 1000, signal?: AbortSignal) =>
	attempt(() => ops.find({ pattern, path: join(base, rel), limit, signal }));

/** "path:line" of every match, the path relative to `rel`. */
function hits(r: Result, rel = "repo"): string[] {
	if (!("matches" in r)) throw new Error(`expected matches, got ${JSON.stringify(r)}`);
	const prefix = `${join(base, rel)}/`;
	return r.matches.map(
		(m) => `${m.path.startsWith(prefix) ? m.path.slice(prefix.length) : m.path}:${m.line}`,
	);
}

function paths(r: Result): string[] {
	if (!("paths" in r)) throw new Error(`expected paths, got ${JSON.stringify(r)}`);
	return r.paths;
}

describe("grep", () => {
	scenario(
		"ignore rules, hidden files, .git, binary files, symlinks, nested repo, sort order",
		(ops) => grep(ops, "repo", "needle"),
		(r) =>
			expect(hits(r)).toEqual([
				".config/settings.json:1",
				".hidden:1",
				"B.txt:1",
				"a/b.txt:1",
				"a.txt:1",
				"docs/crlf.txt:2",
				"docs/with space.txt:1",
				"docs/ünïcödé 文件.md:1",
				"keep.log:1", // re-included by "!keep.log"
				"package.json:1",
				"src/deep/data.json:1",
				"src/deep/secret-ok.txt:1", // a deeper .ignore wins over the top one
				"src/deep/x.spec.ts:1",
				"src/index.ts:2",
				"src/index.ts:4",
				"src/util.spec.ts:1",
				"vendor/lib/x.log:1", // its own repository: the outer .gitignore stops at vendor/lib
			]),
	);

	scenario(
		".gitignore does not apply outside a repository, .ignore does",
		(ops) => grep(ops, "plain", "needle"),
		(r) => expect(hits(r, "plain")).toEqual(["a.log:1", "ok.txt:1"]),
	);

	scenario(
		"a search directory inside an ignored directory is searched",
		(ops) => grep(ops, "repo/build", "needle"),
		(r) => expect(hits(r, "repo/build")).toEqual(["out.ts:1"]),
	);

	scenario(
		"glob *.ts (like rg --glob, a matching glob overrides ignore rules for files)",
		(ops) => grep(ops, "repo", "needle", { glob: "*.ts" }),
		(r) =>
			expect(hits(r)).toEqual([
				"src/deep/x.spec.ts:1",
				"src/generated.ts:1",
				"src/index.ts:2",
				"src/index.ts:4",
				"src/util.spec.ts:1",
			]),
	);

	scenario(
		"glob **/*.spec.ts",
		(ops) => grep(ops, "repo", "needle", { glob: "**/*.spec.ts" }),
		(r) => expect(hits(r)).toEqual(["src/deep/x.spec.ts:1", "src/util.spec.ts:1"]),
	);

	scenario(
		"glob with a slash is anchored at the search directory",
		(ops) => grep(ops, "repo", "needle", { glob: "src/*.ts" }),
		(r) =>
			expect(hits(r)).toEqual([
				"src/generated.ts:1",
				"src/index.ts:2",
				"src/index.ts:4",
				"src/util.spec.ts:1",
			]),
	);

	scenario(
		"anchored glob under a directory whose name has glob characters",
		(ops) => grep(ops, "we!rd [x] {y}", "needle", { glob: "src/*.ts" }),
		(r) => expect(hits(r, "we!rd [x] {y}")).toEqual(["src/a.ts:1"]),
	);

	scenario(
		"negated glob excludes",
		(ops) => grep(ops, "repo/src", "needle", { glob: "!*.json" }),
		(r) =>
			expect(hits(r, "repo/src")).toEqual([
				"deep/secret-ok.txt:1",
				"deep/x.spec.ts:1",
				"index.ts:2",
				"index.ts:4",
				"util.spec.ts:1",
			]),
	);

	scenario(
		"ignoreCase",
		(ops) => grep(ops, "repo/special", "needle", { ignoreCase: true }),
		(r) => expect(hits(r, "repo/special")).toEqual(["case.txt:1", "case.txt:2"]),
	);

	scenario(
		"case-sensitive by default",
		(ops) => grep(ops, "repo/special", "Needle"),
		(r) => expect(hits(r, "repo/special")).toEqual(["case.txt:1"]),
	);

	scenario(
		"literal pattern with regex characters",
		(ops) => grep(ops, "repo/special", "a.b(", { literal: true }),
		(r) => expect(hits(r, "repo/special")).toEqual(["regex.txt:1"]),
	);

	scenario(
		"regex pattern",
		(ops) => grep(ops, "repo/special", "a.b\\(\\d\\)"),
		(r) => expect(hits(r, "repo/special")).toEqual(["regex.txt:1", "regex.txt:2"]),
	);

	scenario(
		"invalid regex is INVALID_PATTERN",
		(ops) => grep(ops, "repo", "a.b("),
		(r) => expect(r).toEqual({ error: "INVALID_PATTERN" }),
	);

	scenario(
		"invalid glob is INVALID_PATTERN",
		(ops) => grep(ops, "repo", "needle", { glob: "src/[" }),
		(r) => expect(r).toEqual({ error: "INVALID_PATTERN" }),
	);

	scenario(
		"context lines, overlapping between close matches",
		(ops) => grep(ops, "repo/src/index.ts", "needle", { context: 2 }),
		(r) => {
			if (!("matches" in r)) throw new Error(JSON.stringify(r));
			expect(r.matches.map(({ line, text, before, after }) => ({ line, text, before, after }))).toEqual([
				{
					line: 2,
					text: "line2 needle one",
					before: [{ line: 1, text: "line1 alpha" }],
					after: [
						{ line: 3, text: "line3 beta" },
						{ line: 4, text: "line4 needle two" },
					],
				},
				{
					line: 4,
					text: "line4 needle two",
					before: [
						{ line: 2, text: "line2 needle one" },
						{ line: 3, text: "line3 beta" },
					],
					after: [
						{ line: 5, text: "line5 gamma" },
						{ line: 6, text: "line6 delta" },
					],
				},
			]);
			expect(r.matches[0].path).toBe(join(repo, "src/index.ts"));
		},
	);

	scenario(
		"CRLF line endings are stripped",
		(ops) => grep(ops, "repo/docs/crlf.txt", "needle", { context: 1 }),
		(r) => {
			if (!("matches" in r)) throw new Error(JSON.stringify(r));
			expect(r.matches).toEqual([
				{
					path: join(repo, "docs/crlf.txt"),
					line: 2,
					text: "needle crlf",
					before: [{ line: 1, text: "first" }],
					after: [{ line: 3, text: "last" }],
				},
			]);
		},
	);

	scenario(
		"limit reached: stops at limit, context of the last match complete",
		(ops) => grep(ops, "repo/many", "hit", { limit: 3, context: 1 }),
		(r) => {
			if (!("matches" in r)) throw new Error(JSON.stringify(r));
			expect(hits(r, "repo/many")).toEqual(["m.txt:1", "m.txt:2", "m.txt:3"]);
			expect(r.matches[2].after).toEqual([{ line: 4, text: "hit 4" }]);
			expect(r.limitReached).toBe(true);
		},
	);

	scenario(
		"limit reached across files",
		(ops) => grep(ops, "repo/many", "hit", { limit: 11 }),
		(r) => {
			expect(hits(r, "repo/many").at(-1)).toBe("n.txt:1");
			expect("limitReached" in r && r.limitReached).toBe(true);
		},
	);

	scenario(
		"exactly limit matches: limitReached is false",
		(ops) => grep(ops, "repo/many", "hit", { limit: 12 }),
		(r) => {
			expect(hits(r, "repo/many")).toHaveLength(12);
			expect("limitReached" in r && r.limitReached).toBe(false);
		},
	);

	scenario(
		"a file as the search path is searched even when ignored",
		(ops) => grep(ops, "repo/build/out.ts", "needle"),
		(r) => expect(hits(r)).toEqual(["build/out.ts:1"]),
	);

	scenario(
		"a binary file as the search path yields nothing",
		(ops) => grep(ops, "repo/bin.dat", "needle"),
		(r) => expect(hits(r)).toEqual([]),
	);

	scenario(
		"no match",
		(ops) => grep(ops, "repo", "zzz-nothing-zzz"),
		(r) => expect(r).toMatchObject({ matches: [], limitReached: false }),
	);

	scenario(
		"missing path is NOT_FOUND",
		(ops) => grep(ops, "repo/nope", "needle"),
		(r) => expect(r).toEqual({ error: "NOT_FOUND" }),
	);

	scenario(
		"aborted signal is ABORTED",
		(ops) => grep(ops, "repo", "needle", { signal: AbortSignal.abort() }),
		(r) => expect(r).toEqual({ error: "ABORTED" }),
	);
});

describe("find", () => {
	scenario(
		"everything: hidden included, .git and ignored excluded, dirs end with /, symlinks plain",
		(ops) => find(ops, "repo", "*"),
		(r) =>
			expect(paths(r)).toEqual([
				".config/",
				".config/settings.json",
				".gitignore",
				".hidden",
				".ignore",
				"B.txt",
				"a/",
				"a/b.txt",
				"a.txt",
				"bin.dat",
				"docs/",
				"docs/crlf.txt",
				"docs/with space.txt",
				"docs/ünïcödé 文件.md",
				"keep.log",
				"link.ts",
				"linkdir",
				"many/",
				"many/m.txt",
				"many/n.txt",
				"package.json",
				"special/",
				"special/case.txt",
				"special/regex.txt",
				"src/",
				"src/.gitignore",
				"src/deep/",
				"src/deep/.ignore",
				"src/deep/data.json",
				"src/deep/secret-ok.txt",
				"src/deep/x.spec.ts",
				"src/index.ts",
				"src/util.spec.ts",
				"vendor/",
				"vendor/lib/",
				"vendor/lib/x.log",
			]),
	);

	scenario(
		"*.ts",
		(ops) => find(ops, "repo", "*.ts"),
		(r) => expect(paths(r)).toEqual(["link.ts", "src/deep/x.spec.ts", "src/index.ts", "src/util.spec.ts"]),
	);

	scenario(
		"**/*.json",
		(ops) => find(ops, "repo", "**/*.json"),
		(r) => expect(paths(r)).toEqual([".config/settings.json", "package.json", "src/deep/data.json"]),
	);

	scenario(
		"src/**/*.spec.ts matches at any depth",
		(ops) => find(ops, "repo", "src/**/*.spec.ts"),
		(r) => expect(paths(r)).toEqual(["src/deep/x.spec.ts", "src/util.spec.ts"]),
	);

	scenario(
		"dir/** lists the contents, not the directory",
		(ops) => find(ops, "repo", "src/deep/**"),
		(r) =>
			expect(paths(r)).toEqual([
				"src/deep/.ignore",
				"src/deep/data.json",
				"src/deep/secret-ok.txt",
				"src/deep/x.spec.ts",
			]),
	);

	scenario(
		"a leading / anchors at the search directory",
		(ops) => find(ops, "repo", "/*.json"),
		(r) => expect(paths(r)).toEqual(["package.json"]),
	);

	scenario(
		"pattern matching directories",
		(ops) => find(ops, "repo", "{deep,lib,linkdir}"),
		(r) => expect(paths(r)).toEqual(["linkdir", "src/deep/", "vendor/lib/"]),
	);

	scenario(
		"unicode names and names with spaces",
		(ops) => find(ops, "repo", "*{文件,space}*"),
		(r) => expect(paths(r)).toEqual(["docs/with space.txt", "docs/ünïcödé 文件.md"]),
	);

	scenario(
		"path pattern under a directory whose name has glob characters",
		(ops) => find(ops, "we!rd [x] {y}", "src/*.ts"),
		(r) => expect(paths(r)).toEqual(["src/a.ts"]),
	);

	// As pi's find (fd --no-require-git): .gitignore files apply outside a repository too, each
	// to its own directory and below. An fd without that flag cannot, so it is not compared.
	const PLAIN_FIND = [
		".gitignore",
		".ignore",
		"ok.txt",
		"sub/",
		"sub/.gitignore",
		"sub/keep.txt",
		"sub/y.md",
	];
	it(".gitignore applies outside a repository, nested ones scoped [js]", async () => {
		expect(paths(await find(js, "plain", "*"))).toEqual(PLAIN_FIND);
	});
	it.skipIf(!tools.fd?.noRequireGit)(
		".gitignore applies outside a repository [native, fd with --no-require-git]",
		async () => {
			expect(paths(await find(native, "plain", "*"))).toEqual(PLAIN_FIND);
		},
	);

	scenario(
		"limit",
		(ops) => find(ops, "repo", "*", 3),
		(r) =>
			expect(r).toMatchObject({
				paths: [".config/", ".config/settings.json", ".gitignore"],
				limitReached: true,
			}),
	);

	scenario(
		"exactly limit results: limitReached is false",
		(ops) => find(ops, "repo", "*.json", 3),
		(r) => expect(r).toMatchObject({ limitReached: false }),
	);

	scenario(
		"invalid glob is INVALID_PATTERN",
		(ops) => find(ops, "repo", "[abc"),
		(r) => expect(r).toEqual({ error: "INVALID_PATTERN" }),
	);

	scenario(
		"missing path is NOT_FOUND",
		(ops) => find(ops, "repo/nope", "*"),
		(r) => expect(r).toEqual({ error: "NOT_FOUND" }),
	);

	scenario(
		"a file as the search path is NOT_DIRECTORY",
		(ops) => find(ops, "repo/a.txt", "*"),
		(r) => expect(r).toEqual({ error: "NOT_DIRECTORY" }),
	);

	scenario(
		"aborted signal is ABORTED",
		(ops) => find(ops, "repo", "*", 10, AbortSignal.abort()),
		(r) => expect(r).toEqual({ error: "ABORTED" }),
	);
});

describe("engines and tools", () => {
	it("js engine reports engine js", async () => {
		expect(await js.grep({ pattern: "needle", path: repo, context: 0, limit: 1 })).toMatchObject({
			engine: "js",
		});
		expect(await js.find({ pattern: "*", path: repo, limit: 1 })).toMatchObject({ engine: "js" });
	});

	it.skipIf(!HAS_NATIVE)(`auto picks rg and fd when present ${NATIVE}`, async () => {
		const auto = createLocalSearch();
		expect(await auto.grep({ pattern: "needle", path: repo, context: 0, limit: 1 })).toMatchObject({
			engine: "rg",
		});
		// fd without --no-require-git (fd < 8.7) cannot apply .gitignore outside a repository.
		const findEngine = tools.fd?.noRequireGit ? "fd" : "js";
		expect(await auto.find({ pattern: "*", path: repo, limit: 1 })).toMatchObject({ engine: findEngine });
	});

	it("native engine without tools is BACKEND_UNAVAILABLE", async () => {
		const none = createLocalSearch({
			engine: "native",
			tools: createLocalTools({ pathEnv: "/nonexistent" }),
		});
		await expect(none.grep({ pattern: "x", path: repo, context: 0, limit: 1 })).rejects.toMatchObject({
			code: "BACKEND_UNAVAILABLE",
		});
		await expect(none.find({ pattern: "x", path: repo, limit: 1 })).rejects.toMatchObject({
			code: "BACKEND_UNAVAILABLE",
		});
	});

	it("auto falls back to js when no tool is on PATH", async () => {
		const auto = createLocalSearch({ tools: createLocalTools({ pathEnv: "/nonexistent" }) });
		expect(await auto.grep({ pattern: "needle", path: repo, context: 0, limit: 1 })).toMatchObject({
			engine: "js",
		});
		expect(await auto.find({ pattern: "*", path: repo, limit: 1 })).toMatchObject({ engine: "js" });
	});

	it("findOnPath finds executables only", async () => {
		const nodeDir = dirname(process.execPath);
		const nodeName = basename(process.execPath);
		expect(await findOnPath(nodeName, `/nonexistent:${nodeDir}`)).toBe(join(nodeDir, nodeName));
		expect(await findOnPath("keel-no-such-tool")).toBeUndefined();
		expect(await findOnPath("HEAD", join(repo, ".git"))).toBeUndefined(); // not executable
	});

	it("detection is cached per object", async () => {
		const t = createLocalTools();
		expect(t.detect()).toBe(t.detect());
	});

	it("the local runner kills the process on abort", async () => {
		const ctl = new AbortController();
		const started = Date.now();
		setTimeout(() => ctl.abort(), 50);
		const result = await localRunner([process.execPath, "-e", "setTimeout(() => {}, 10000)"], {
			signal: ctl.signal,
			onStdout: () => {},
		});
		expect(result.exitCode).toBeNull();
		expect(Date.now() - started).toBeLessThan(5000);
	});

	it("the local runner rejects when the program cannot start", async () => {
		await expect(localRunner(["/nonexistent/keel-tool"], { onStdout: () => {} })).rejects.toThrow();
	});
});

describe("native engine over any transport", () => {
	const fakeTools = {
		rg: { path: "rg", version: "ripgrep 13.0.0" },
		fd: { path: "fd", version: "fd 8.6.0", noGlobalIgnoreFile: false, noRequireGit: false },
	};
	/** One line of rg's output (--null --line-number --with-filename). */
	const matchLine = (path: string, n: number, text: string) => Buffer.from(`${path}\0${n}:${text}\n`);

	it("stops the process once a file takes the matches past the limit", async () => {
		// Files sent per run: the parallel run first, then the run in path order (--sort path).
		const runs: { sorted: boolean; filesSent: number }[] = [];
		const runner: ArgvRunner = async (argv, opts) => {
			const run = { sorted: argv.includes("--sort"), filesSent: 0 };
			runs.push(run);
			for (const name of ["a", "b", "c", "d"]) {
				if (opts.signal?.aborted) break;
				for (const n of [1, 2]) opts.onStdout(matchLine(`/r/${name}`, n, `hit ${n}`));
				run.filesSent++;
			}
			return { exitCode: opts.signal?.aborted ? null : 0 };
		};
		const ops = createNativeSearch(runner, fakeTools);
		const r = await ops.grep({ pattern: "hit", path: "/r", context: 0, limit: 3 });
		expect(r.matches.map((m) => `${m.path}:${m.line}`)).toEqual(["/r/a:1", "/r/a:2", "/r/b:1"]);
		expect(r.limitReached).toBe(true);
		// Each run: b is known complete when c's first line arrives; d is never sent.
		expect(runs).toEqual([
			{ sorted: false, filesSent: 3 },
			{ sorted: true, filesSent: 3 },
		]);
	});

	it("drops a file that rg found to be binary", async () => {
		const runner: ArgvRunner = async (_argv, opts) => {
			opts.onStdout(matchLine("/r/bin", 1, "hit"));
			opts.onStdout(
				Buffer.from(
					'/r/bin: WARNING: stopped searching binary file after match (found "\\0" byte around offset 100)\n',
				),
			);
			opts.onStdout(matchLine("/r/ok", 1, "hit"));
			return { exitCode: 0 };
		};
		const r = await createNativeSearch(runner, fakeTools).grep({
			pattern: "hit",
			path: "/r",
			context: 0,
			limit: 9,
		});
		expect(r.matches.map((m) => `${m.path}:${m.line}`)).toEqual(["/r/ok:1"]);
	});

	it("splits output arriving a byte at a time, and cuts a previewed line", async () => {
		const long = "x".repeat(5000);
		const runner: ArgvRunner = async (_argv, opts) => {
			const out = Buffer.concat([
				matchLine("/r/a", 1, `${long.slice(0, 4096)} [... omitted end of long line]`),
				matchLine("/r/a", 2, "short [... omitted end of long line]"),
			]);
			for (let i = 0; i < out.length; i++) opts.onStdout(out.subarray(i, i + 1));
			return { exitCode: 0 };
		};
		const r = await createNativeSearch(runner, fakeTools).grep({
			pattern: "x",
			path: "/r",
			context: 0,
			limit: 9,
		});
		expect(r.matches.map((m) => m.text)).toEqual([
			long.slice(0, 1000),
			"short [... omitted end of long line]",
		]);
	});

	it("an abort while the tool runs is ABORTED", async () => {
		const runner: ArgvRunner = (_argv, opts) =>
			new Promise((resolve) => opts.signal?.addEventListener("abort", () => resolve({ exitCode: null })));
		const ops = createNativeSearch(runner, fakeTools);
		const grepCtl = new AbortController();
		const pending = ops.grep({ pattern: "x", path: "/r", context: 0, limit: 1, signal: grepCtl.signal });
		setTimeout(() => grepCtl.abort(), 10);
		await expect(pending).rejects.toMatchObject({ code: "ABORTED" });
		const findCtl = new AbortController();
		const pendingFind = ops.find({ pattern: "x", path: "/r", limit: 1, signal: findCtl.signal });
		setTimeout(() => findCtl.abort(), 10);
		await expect(pendingFind).rejects.toMatchObject({ code: "ABORTED" });
	});

	it("a transport that cannot start the tool is BACKEND_UNAVAILABLE", async () => {
		const runner: ArgvRunner = async () => {
			throw new Error("spawn rg ENOENT");
		};
		await expect(
			createNativeSearch(runner, fakeTools).grep({ pattern: "x", path: "/r", context: 0, limit: 1 }),
		).rejects.toMatchObject({ code: "BACKEND_UNAVAILABLE" });
	});
});
