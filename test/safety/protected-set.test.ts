/**
 * The protected set, whatever the spelling and the order, through the tools as a model would try
 * it: other cases and Unicode spellings of protected names (on a real case-insensitive exFAT mount
 * and by fold everywhere), hooks and config written before their directory becomes a git
 * directory, start-up files and hook-runner configs. Every refused write changes nothing on disk;
 * the look-alikes stay writable. Real files, real git, a real exFAT loop mount (skipped with a
 * message when it cannot be made), real bwrap (skipped likewise).
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import { type CallResult, Session, type SessionOptions } from "../../src/session.js";
import { bwrapAvailable } from "../contract/backends.js";

function git(cwd: string, ...args: string[]): string {
	return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], {
		cwd,
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" },
	});
}

/** Every file below `dir` with its bytes: a refused call must leave it equal. */
async function snapshot(dir: string): Promise<Record<string, string>> {
	const out: Record<string, string> = {};
	for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
		if (!e.isFile()) continue;
		const p = join(e.parentPath, e.name);
		out[relative(dir, p)] = await readFile(p, "latin1");
	}
	return out;
}

function show(r: CallResult): string {
	return JSON.stringify(r.ok ? { ok: true } : { ok: false, error: r.error });
}

function expectProtected(r: CallResult, path: string): void {
	expect(r.ok, `${path}: expected PATH_PROTECTED, got ${show(r)}`).toBe(false);
	if (!r.ok) expect(r.error.code, `${path}: ${show(r)}`).toBe("PATH_PROTECTED");
}

function expectOk(r: CallResult, path: string): void {
	expect(r.ok, `${path}: expected ok, got ${show(r)}`).toBe(true);
}

const sessions: Session[] = [];
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.close()));
});

async function open(root: string, opts: SessionOptions = {}): Promise<Session> {
	const s = await Session.create({ root, home: join(root, "..", "nohome"), profile: "unified", ...opts });
	sessions.push(s);
	return s;
}

/** Writes `path` with the file tool, after a read (which replacing an existing file needs). */
async function writeThrough(s: Session, path: string, content = "echo PWNED\n"): Promise<CallResult> {
	await s.call("read", { path });
	return s.call("file", { queries: [{ type: "write", path, content }] });
}

/** An exFAT image on a loop device, mounted with exfat-fuse; undefined (and why) when that cannot be done here. */
async function mountExfat(at: string): Promise<{ dir: string; unmount: () => void } | string> {
	const image = `${at}.img`;
	const run = (cmd: string, ...args: string[]) =>
		execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
	let loop = "";
	try {
		await mkdir(at);
		run("truncate", "-s", "64M", image);
		run("mkfs.exfat", image);
		loop = run("losetup", "-f", "--show", image);
		run("mount.exfat-fuse", loop, at);
	} catch (e) {
		if (loop) run("losetup", "-d", loop);
		return `exFAT loop mount not possible here (${(e as Error).message.split("\n")[0]})`;
	}
	return {
		dir: at,
		unmount: () => {
			run("umount", at);
			run("losetup", "-d", loop);
		},
	};
}

describe("a case-insensitive file system (exFAT loop mount): other spellings are the protected files", async () => {
	const scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-ci-")));
	const mounted = await mountExfat(join(scratch, "disk"));
	afterAll(async () => {
		if (typeof mounted !== "string") mounted.unmount();
		await rm(scratch, { recursive: true, force: true });
	});
	if (typeof mounted === "string") {
		it.skip(mounted, () => {});
		return;
	}
	const root = join(mounted.dir, "ws");
	beforeAll(async () => {
		await mkdir(root);
		git(root, "init", "-q");
		await mkdir(join(root, ".vscode"));
		await writeFile(join(root, ".vscode", "tasks.json"), "{}\n");
		await writeFile(join(root, ".envrc"), "use nix\n");
	});

	it("the mount folds case (the premise of this describe)", async () => {
		expect(await readFile(join(root, ".ENVRC"), "utf8")).toBe("use nix\n");
		expect(await readFile(join(root, ".GIT", "Config"), "utf8")).toContain("[core]");
	});

	const SPELLINGS = [
		".git/CONFIG",
		".git/HOOKS/pre-commit",
		".GIT/hooks/post-checkout",
		".Git/Config",
		".ENVRC",
		".VSCODE/tasks.json",
		".VSCode/settings.json",
		".BashRC",
		"LEFTHOOK.YML",
		".git/head",
	];
	it.each(SPELLINGS)("%s is refused and the file under that name is unchanged", async (path) => {
		const s = await open(root);
		const before = await snapshot(root);
		expectProtected(await writeThrough(s, path), path);
		expect(await snapshot(root)).toEqual(before);
	});
});

describe("spellings a case-insensitive, normalizing or Windows file system takes for a protected name", () => {
	let scratch: string;
	let root: string;
	beforeEach(async () => {
		scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-fold-")));
		root = join(scratch, "ws");
		await mkdir(root);
		git(root, "init", "-q");
	});
	afterEach(async () => {
		await rm(scratch, { recursive: true, force: true });
	});

	// Refused on every file system: case-sensitivity is per directory (ext4 casefold), and sandboxed
	// code can turn it on for an empty directory after the check.
	const REFUSED = [
		".ENVRC",
		".VSCODE/tasks.json",
		".git/CONFIG",
		".git/HOOKS/pre-commit",
		".git/hoo\u212As/pre-commit", // KELVIN SIGN folds to k
		".v\u017Fcode/tasks.json", // LATIN SMALL LETTER LONG S folds to s
		".env\u200Crc", // ZERO WIDTH NON-JOINER: HFS+ ignores it
		".envrc.", // Windows file systems drop a trailing dot
		".mcp.json ", // and a trailing space
		"sub/.Pre-Commit-Config.yaml",
		"\uFF0Eenvrc", // FULLWIDTH FULL STOP: compatibility-equal to "."
	];
	it.each(REFUSED)("%s is refused", async (path) => {
		const s = await open(root);
		const before = await snapshot(root);
		expectProtected(await writeThrough(s, path), path);
		expect(await snapshot(root)).toEqual(before);
	});

	const ALLOWED = [
		".envrc.example",
		"envrc",
		".vscode-test/a.json",
		"src/hooks/useThing.ts",
		"src/config",
		"src/objects/x.ts",
		"HEADER",
		"docs/head.md",
		"configs/config.fish.txt",
	];
	it.each(ALLOWED)("look-alike %s stays writable", async (path) => {
		const s = await open(root);
		expectOk(await writeThrough(s, path, "x\n"), path);
		expect(await readFile(join(root, path), "utf8")).toBe("x\n");
	});
});

describe("order: hooks and config are protected however the git directory around them comes to be", () => {
	let scratch: string;
	let root: string;
	beforeEach(async () => {
		scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-order-")));
		root = join(scratch, "ws");
		await mkdir(root);
	});
	afterEach(async () => {
		await rm(scratch, { recursive: true, force: true });
	});

	interface Sequence {
		name: string;
		/** Made before the session starts (what git or another process left). */
		plant?: Record<string, string>;
		/** Written through the tools in this order; each is ok or PATH_PROTECTED. */
		writes: Array<[path: string, outcome: "ok" | "protected"]>;
	}
	const SEQUENCES: Sequence[] = [
		{
			name: "hooks and config first, then the HEAD that makes it a git directory",
			writes: [
				["d/hooks/pre-commit", "ok"],
				["d/config", "ok"],
				["d/objects/info/alternates", "ok"],
				["d/refs/heads/main", "ok"],
				["d/HEAD", "protected"],
			],
		},
		{
			name: "HEAD in another spelling",
			writes: [
				["d/hooks/pre-commit", "ok"],
				["d/head", "protected"],
				["d/Head", "protected"],
			],
		},
		{
			name: "a HEAD (from git, before objects or refs exist), then hooks and config",
			plant: { "d/HEAD": "ref: refs/heads/main\n" },
			writes: [
				["d/hooks/pre-commit", "protected"],
				["d/hooks", "protected"],
				["d/config", "protected"],
				["d/config.worktree", "protected"],
				["d/commondir", "protected"],
				["d/HOOKS/post-checkout", "protected"],
			],
		},
		{
			name: "a gitdir: file pointing at a directory that does not exist yet",
			plant: { "proj/.git": "gitdir: ../gd\n" },
			writes: [
				["gd/hooks/post-checkout", "ok"],
				["gd/HEAD", "protected"],
				["proj/.git", "protected"],
			],
		},
		{
			name: "a linked worktree's git directory taking shape",
			plant: { "repo/.git/HEAD": "ref: refs/heads/main\n", "repo/.git/worktrees/w/HEAD": "0".repeat(40) },
			writes: [
				["repo/.git/worktrees/w/commondir", "protected"],
				["repo/.git/worktrees/w/config.worktree", "protected"],
				["repo/.git/worktrees/w/hooks/x", "protected"],
			],
		},
	];
	it.each(SEQUENCES)("$name", async ({ plant, writes }) => {
		for (const [p, content] of Object.entries(plant ?? {})) {
			await mkdir(dirname(join(root, p)), { recursive: true });
			await writeFile(join(root, p), content);
		}
		const s = await open(root);
		for (const [path, outcome] of writes) {
			const before = await snapshot(root);
			const r = await writeThrough(s, path);
			if (outcome === "ok") expectOk(r, path);
			else {
				expectProtected(r, path);
				expect(await snapshot(root)).toEqual(before);
			}
		}
	});

	it("parallel writes of hooks and a HEAD cannot both land", async () => {
		const s = await open(root);
		const [hook, head] = await Promise.all([
			writeThrough(s, "d/hooks/pre-commit"),
			writeThrough(s, "d/HEAD", "ref: refs/heads/main\n"),
		]);
		expectOk(hook, "d/hooks/pre-commit");
		expectProtected(head, "d/HEAD");
	});

	it("one apply_patch adding hooks and HEAD together is refused whole", async () => {
		const s = await open(root);
		const patch = [
			"*** Begin Patch",
			"*** Add File: d/hooks/pre-commit",
			"+echo PWNED",
			"*** Add File: d/HEAD",
			"+ref: refs/heads/main",
			"*** End Patch",
		].join("\n");
		expectProtected(await s.call("apply_patch", { input: patch }), "patch");
		expect(await snapshot(root)).toEqual({});
	});
});

describe("start-up files and hook-runner configs are protected", () => {
	let scratch: string;
	let root: string;
	beforeEach(async () => {
		scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-rc-")));
		root = join(scratch, "ws");
		await mkdir(join(root, "home"), { recursive: true });
	});
	afterEach(async () => {
		await rm(scratch, { recursive: true, force: true });
	});

	// Each runs code the next time a shell, a session, an editor or a git hook starts.
	const REFUSED = [
		"home/.bash_aliases",
		"home/.bashrc.d/10-x.sh",
		"home/.login",
		"home/.logout",
		"home/.mkshrc",
		"home/.config/environment.d/50-x.conf",
		"home/.xprofile",
		"home/.xsessionrc",
		"home/.pam_environment",
		"home/.vimrc",
		"home/.vim/plugin/x.vim",
		"home/.config/nvim/init.lua",
		"home/.local/share/nvim/site/plugin/x.lua",
		"home/.emacs",
		"home/.emacs.d/init.el",
		"home/.emacs.d/early-init.el",
		"home/.config/emacs/init.el",
		"home/.local/bin/git",
		"home/bin/ls",
		".pre-commit-config.yaml",
		"sub/.pre-commit-config.yml",
		"lefthook.yml",
		".lefthook.yaml",
		"lefthook-local.yml",
		".lefthook/pre-commit/x.sh",
		".overcommit.yml",
		".simple-git-hooks.json",
		".lintstagedrc.json",
		"lint-staged.config.mjs",
		".exrc",
		".nvim.lua",
		".zed/tasks.json",
		".helix/languages.toml",
	];
	it.each(REFUSED)("%s is refused", async (path) => {
		const s = await open(root, { home: join(root, "home") });
		const before = await snapshot(root);
		expectProtected(await writeThrough(s, path), path);
		expect(await snapshot(root)).toEqual(before);
	});

	const ALLOWED = ["home/notes/bin/x", "home/.config/app/init.lua", "src/bin/tool.ts", "docs/lefthook.md"];
	it.each(ALLOWED)("look-alike %s stays writable", async (path) => {
		const s = await open(root, { home: join(root, "home") });
		expectOk(await writeThrough(s, path, "x\n"), path);
	});
});

const sandboxed = await bwrapAvailable();
describe.skipIf(sandboxed !== true)("the bwrap sandbox protects the same list", () => {
	let scratch: string;
	let root: string;
	beforeEach(async () => {
		scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-bw-")));
		root = join(scratch, "ws");
		await mkdir(join(root, "sub"), { recursive: true });
		await writeFile(join(root, ".pre-commit-config.yaml"), "repos: []\n");
		await writeFile(join(root, "sub", "lefthook.yml"), "pre-commit: {}\n");
	});
	afterEach(async () => {
		await rm(scratch, { recursive: true, force: true });
	});

	it("existing hook-runner configs are read-only inside, new ones are moved aside after", async () => {
		const s = await open(root, { backend: createBwrapBackend({ roots: [root] }) });
		const r = await s.call("bash", {
			command:
				"echo PWNED >> .pre-commit-config.yaml; echo PWNED >> sub/lefthook.yml; echo PWNED > .lintstagedrc.json; true",
		});
		expectOk(r, "bash");
		expect(await readFile(join(root, ".pre-commit-config.yaml"), "utf8")).toBe("repos: []\n");
		expect(await readFile(join(root, "sub", "lefthook.yml"), "utf8")).toBe("pre-commit: {}\n");
		const names = await readdir(root);
		expect(names).not.toContain(".lintstagedrc.json");
		expect(names.some((n) => n.startsWith(".lintstagedrc.json.keel-refused-"))).toBe(true);
	});
});
if (sandboxed !== true) console.warn(`protected-set: the sandbox describe is skipped: ${sandboxed}`);
