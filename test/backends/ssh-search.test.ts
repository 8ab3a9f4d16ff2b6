/**
 * Search on the remote host: rg/fd found and run there, and the find/grep fallback on a host
 * without them (simulated with a remote PATH that lacks rg, fd and fdfind), which must give the
 * same results as the native engines on a tree without ignore files.
 */
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSshBackend, type SshBackend } from "../../src/backend/ssh/index.js";
import type { GrepRequest } from "../../src/backend/types.js";
import { KeelError } from "../../src/boundary/errors.js";
import { type Sshd, sshdMissing, sshOptions, startSshd } from "../fixtures/sshd.js";

const missing = sshdMissing();

let sshd: Sshd;
let native: SshBackend;
let fallback: SshBackend;
let dir: string;
let bin: string;

beforeAll(async () => {
	if (missing) return;
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-search-"));
	// A PATH with everything in /usr/bin except rg and fd: a host that never installed them.
	bin = await mkdtemp(join(tmpdir(), "keel-ssh-bin-"));
	for (const name of await readdir("/usr/bin")) {
		if (["rg", "fd", "fdfind"].includes(name)) continue;
		await symlink(join("/usr/bin", name), join(bin, name));
	}
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
});

/** `path`, when given, is relative to the tree. */
const grep = (b: SshBackend, req: Partial<GrepRequest> & { pattern: string }) =>
	b.search.grep({ context: 0, limit: 100, ...req, path: req.path ? join(dir, req.path) : dir });

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
	});

	it("rg over ssh honours .gitignore in a repository (the fallback documents that it does not)", async () => {
		const repo = join(dir, "repo");
		await mkdir(join(repo, ".git"), { recursive: true });
		await writeFile(join(repo, ".gitignore"), "ignored.txt\n");
		await writeFile(join(repo, "ignored.txt"), "needle ignored\n");
		await writeFile(join(repo, "kept.txt"), "needle kept\n");
		try {
			const r = await grep(native, { pattern: "needle", path: "repo" });
			expect(r.matches.map((m) => m.path)).toEqual([join(repo, "kept.txt")]);
		} finally {
			await rm(repo, { recursive: true, force: true });
		}
	});
});
