/**
 * Search on the remote host: rg/fd found and run there, and the find/grep fallback on a host
 * without them (simulated with a remote PATH that lacks rg, fd and fdfind), which must give the
 * same results as the native engines, ignore files (.gitignore, .ignore, info/exclude) included.
 */
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalSearch, createLocalTools } from "../../src/backend/search/index.js";
import { createSshBackend, type SshBackend } from "../../src/backend/ssh/index.js";
import type { GrepRequest } from "../../src/backend/types.js";
import { KeelError } from "../../src/boundary/errors.js";
import { type Sshd, sshdMissing, sshOptions, startSshd, usrBinWithout } from "../fixtures/sshd.js";

const missing = sshdMissing();

let sshd: Sshd;
let native: SshBackend;
let fallback: SshBackend;
let dir: string;
let bin: string;
/** A tree with repositories and ignore files, apart from `dir` so the cases above stay as they are. */
let ign: string;

const IGNORE_TREE: Record<string, string> = {
	"repo/.git/HEAD": "ref: refs/heads/main\nneedle in git\n",
	"repo/.git/info/exclude": "excluded.txt\n",
	"repo/.gitignore": "build/\n*.log\n!keep.log\n/rooted.txt\nbuild/wanted.txt\n!build/wanted.txt\n*.gen\n",
	"repo/.ignore": "secret*\n!wanted.gen\n",
	"repo/.hidden": "needle hidden\n",
	"repo/a.txt": "needle a\n",
	"repo/build/out.ts": "needle build\n",
	"repo/build/wanted.txt": "needle inside an ignored directory\n",
	"repo/debug.log": "needle debug\n",
	"repo/keep.log": "needle keep\n",
	"repo/rooted.txt": "needle rooted\n",
	"repo/secret.txt": "needle secret\n",
	"repo/excluded.txt": "needle excluded\n",
	"repo/x.gen": "needle generated\n",
	"repo/wanted.gen": "needle wanted generated\n",
	"repo/src/.gitignore": "generated.ts\n*.tmp\n!keep.tmp\n",
	"repo/src/generated.ts": "needle generated ts\n",
	"repo/src/index.ts": "line1\nneedle one\nline3\n",
	"repo/src/rooted.txt": "needle rooted deeper\n",
	"repo/src/a.tmp": "needle tmp\n",
	"repo/src/keep.tmp": "needle keep tmp\n",
	"repo/src/deep/.ignore": "!secret-ok.txt\n",
	"repo/src/deep/secret-ok.txt": "needle secret ok\n",
	"repo/src/deep/debug.log": "needle deep log\n",
	"repo/vendor/lib/.git/HEAD": "needle nested git\n",
	"repo/vendor/lib/x.log": "needle nested repo\n",
	"plain/.gitignore": "*.log\n",
	"plain/.ignore": "skip.txt\n",
	"plain/a.log": "needle plain log\n",
	"plain/skip.txt": "needle skip\n",
	"plain/ok.txt": "needle ok\n",
};

beforeAll(async () => {
	if (missing) return;
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-search-"));
	// A PATH with everything in /usr/bin except rg and fd: a host that never installed them.
	bin = await usrBinWithout((name) => ["rg", "fd", "fdfind"].includes(name));
	const files: Record<string, string> = {
		"a.txt": "alpha\nneedle one\nbeta\n",
		"a-b.txt": "needle dash\n",
		"a/b.txt": "x\ny\nneedle deep\nz\n",
		"a/c.ts": "const needle = 1;\nNEEDLE upper\n",
		".hidden/h.txt": "needle hidden\n",
		".git/config": "needle in git\n",
		"sp ace/x.md": "ne(dle paren\nneedle\n",
		"bin.dat": "needle\0binary\n",
		"crlf.txt": "needle crlf\r\nnext\r\n",
	};
	for (const [rel, text] of Object.entries(files)) {
		await mkdir(join(dir, rel, ".."), { recursive: true });
		await writeFile(join(dir, rel), text);
	}
	await symlink("a.txt", join(dir, "link.txt"));
	ign = await mkdtemp(join(tmpdir(), "keel-ssh-ignore-"));
	for (const [rel, text] of Object.entries(IGNORE_TREE)) {
		await mkdir(join(ign, rel, ".."), { recursive: true });
		await writeFile(join(ign, rel), text);
	}
	await symlink("a.txt", join(ign, "repo/link.txt"));
	sshd = await startSshd();
	native = createSshBackend(sshOptions(sshd));
	fallback = createSshBackend({ ...sshOptions(sshd), remotePath: `${bin}:/usr/sbin` });
}, 60_000);

afterAll(async () => {
	await native?.close();
	await fallback?.close();
	await sshd?.stop();
	if (dir) await rm(dir, { recursive: true, force: true });
	if (bin) await rm(bin, { recursive: true, force: true });
	if (ign) await rm(ign, { recursive: true, force: true });
});

/** `path`, when given, is relative to the tree. */
const grep = (b: SshBackend, req: Partial<GrepRequest> & { pattern: string }) =>
	b.search.grep({ context: 0, limit: 100, ...req, path: req.path ? join(dir, req.path) : dir });

/** Grep under the ignore tree; `path` is relative to it. */
const ignGrep = (b: SshBackend, path: string, req: Partial<GrepRequest> & { pattern: string }) =>
	b.search.grep({ context: 0, limit: 100, ...req, path: join(ign, path) });

describe.skipIf(missing)("ssh backend: search", () => {
	it("uses the host's rg and fd when it has them, and the fallback when it does not", async () => {
		expect((await grep(native, { pattern: "needle" })).engine).toBe("rg");
		expect((await native.search.find({ pattern: "*.txt", path: dir, limit: 10 })).engine).toBe("fd");
		expect((await grep(fallback, { pattern: "needle" })).engine).toBe("grep");
		expect((await fallback.search.find({ pattern: "*.txt", path: dir, limit: 10 })).engine).toBe("find");
	});

	const grepCases: [string, Partial<GrepRequest> & { pattern: string }][] = [
		["plain", { pattern: "needle" }],
		["regex", { pattern: "needle (one|deep)" }],
		["ignore case", { pattern: "needle upper", ignoreCase: true }],
		["literal", { pattern: "ne(dle", literal: true }],
		["context", { pattern: "needle deep", context: 1 }],
		["glob", { pattern: "needle", glob: "*.ts" }],
		["glob with a directory", { pattern: "needle", glob: "a/**" }],
		["negated glob", { pattern: "needle", glob: "!*.txt" }],
		["limit", { pattern: "needle", limit: 2 }],
		["a file", { pattern: "needle", path: "a/b.txt" }],
	];
	for (const [name, req] of grepCases) {
		it(`grep fallback matches rg: ${name}`, async () => {
			const want = await grep(native, req);
			expect(want.matches.length).toBeGreaterThan(0);
			const got = await grep(fallback, req);
			expect({ ...got, engine: "" }).toEqual({ ...want, engine: "" });
		});
	}

	for (const pattern of ["*.txt", "", "a/*", "**/b.txt", "/a", "*.nothing"]) {
		it(`find fallback matches fd: "${pattern}"`, async () => {
			for (const limit of [100, 3]) {
				const want = await native.search.find({ pattern, path: dir, limit });
				const got = await fallback.search.find({ pattern, path: dir, limit });
				expect({ ...got, engine: "" }).toEqual({ ...want, engine: "" });
			}
		});
	}

	it("the fallback reports missing paths, non-directories and bad patterns clearly", async () => {
		const e1 = await grep(fallback, { pattern: "x", path: "nope" }).catch((e) => e);
		expect((e1 as KeelError).code).toBe("NOT_FOUND");
		const e2 = await fallback.search
			.find({ pattern: "*", path: join(dir, "a.txt"), limit: 5 })
			.catch((e) => e);
		expect((e2 as KeelError).code).toBe("NOT_DIRECTORY");
		const e3 = await grep(fallback, { pattern: "needle(" }).catch((e) => e);
		expect(e3).toBeInstanceOf(KeelError);
		expect((e3 as KeelError).code).toBe("INVALID_PATTERN");
		// Also when the glob and ignore rules leave no file to search (rg checks the pattern first).
		for (const b of [native, fallback]) {
			const e4 = await grep(b, { pattern: "needle(", glob: "*.nothing" }).catch((e) => e);
			expect((e4 as KeelError).code).toBe("INVALID_PATTERN");
		}
	});

	const ignoreGrepCases: [string, string, Partial<GrepRequest> & { pattern: string }][] = [
		["a repository", "repo", { pattern: "needle" }],
		["a subdirectory (the repository's ignore files above it apply)", "repo/src", { pattern: "needle" }],
		["a directory inside an ignored one", "repo/build", { pattern: "needle" }],
		["an ignored file named explicitly", "repo/debug.log", { pattern: "needle" }],
		["a glob overrides the ignore rules", "repo", { pattern: "needle", glob: "*.log" }],
		["a negated glob", "repo", { pattern: "needle", glob: "!*.txt" }],
		["context and limit", "repo", { pattern: "needle", context: 1, limit: 4 }],
		["outside a repository: .ignore applies, .gitignore does not", "plain", { pattern: "needle" }],
	];
	for (const [name, path, req] of ignoreGrepCases) {
		it(`grep fallback matches rg with ignore files: ${name}`, async () => {
			const want = await ignGrep(native, path, req);
			expect(want.matches.length).toBeGreaterThan(0);
			const got = await ignGrep(fallback, path, req);
			expect({ ...got, engine: "" }).toEqual({ ...want, engine: "" });
		});
	}

	const ignoreFindCases: [string, string, string][] = [
		["a repository", "repo", ""],
		["a repository, by name", "repo", "*.log"],
		["a repository, by path", "repo", "src/**"],
		["a subdirectory", "repo/src", ""],
		["a directory inside an ignored one", "repo/build", ""],
		["outside a repository", "plain", ""],
	];
	for (const [name, path, pattern] of ignoreFindCases) {
		it(`find fallback matches fd with ignore files: ${name} "${pattern}"`, async () => {
			// .gitignore outside a repository needs fd's --no-require-git (fd ≥ 8.7); without it the
			// reference is the local JS engine, which applies it as pi's find does.
			const outside = path === "plain" && !(await createLocalTools().detect()).fd?.noRequireGit;
			const reference = outside ? createLocalSearch({ engine: "js" }) : native.search;
			for (const limit of [100, 3]) {
				const want = await reference.find({ pattern, path: join(ign, path), limit });
				const got = await fallback.search.find({ pattern, path: join(ign, path), limit });
				expect({ ...got, engine: "" }).toEqual({ ...want, engine: "" });
			}
		});
	}

	it("the fallback refuses to search without base64 (it could not read the ignore files)", async () => {
		const bare = await mkdtemp(join(tmpdir(), "keel-ssh-bin-"));
		for (const name of await readdir(bin)) {
			if (name !== "base64") await symlink(join("/usr/bin", name), join(bare, name));
		}
		const b = createSshBackend({ ...sshOptions(sshd), remotePath: bare });
		try {
			const e = await ignGrep(b, "repo", { pattern: "needle" }).catch((x) => x);
			expect((e as KeelError).code).toBe("BACKEND_UNAVAILABLE");
			expect((e as KeelError).message).toContain("base64");
		} finally {
			await b.close();
			await rm(bare, { recursive: true, force: true });
		}
	});

	it("the fallback skips .gitignored files and directories, honouring negations and nested files", async () => {
		const r = await ignGrep(fallback, "repo", { pattern: "needle" });
		const rel = r.matches.map((m) => m.path.slice(join(ign, "repo").length + 1));
		expect(rel).toEqual([
			".hidden",
			"a.txt",
			"keep.log",
			"src/deep/secret-ok.txt",
			"src/index.ts",
			"src/keep.tmp",
			"src/rooted.txt",
			"vendor/lib/x.log", // its own repository: the outer .gitignore stops at vendor/lib
			"wanted.gen",
		]);
		const f = await fallback.search.find({ pattern: "", path: join(ign, "repo"), limit: 100 });
		for (const p of ["build/", "debug.log", "x.gen", "src/a.tmp", "src/generated.ts", "vendor/lib/x.log"]) {
			expect(f.paths.includes(p), p).toBe(p === "vendor/lib/x.log");
		}
	});
});
