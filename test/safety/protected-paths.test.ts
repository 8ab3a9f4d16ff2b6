/**
 * The protected set through the tools: writes that reach git
 * hooks and config by any name git reads them under, and tool configuration, are PATH_PROTECTED
 * and change nothing; `allowProtected` lifts it; `protectedPaths` extends it. Real git repositories.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CallResult, Session, type SessionOptions } from "../../src/session.js";

let scratch: string;
let root: string;
const sessions: Session[] = [];

function git(cwd: string, ...args: string[]): string {
	return execFileSync(
		"git",
		["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always", ...args],
		{
			cwd,
			encoding: "utf8",
			stdio: ["ignore", "pipe", "pipe"],
			env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" },
		},
	);
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

beforeEach(async () => {
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-protect-")));
	root = join(scratch, "main");
	const subsrc = join(scratch, "subsrc");
	await mkdir(root);
	await mkdir(subsrc);
	git(subsrc, "init", "-q");
	await writeFile(join(subsrc, "a.txt"), "a\n");
	git(subsrc, "add", "a.txt");
	git(subsrc, "commit", "-qm", "a");
	git(root, "init", "-q");
	await writeFile(join(root, "readme.txt"), "r\n");
	git(root, "add", "readme.txt");
	git(root, "commit", "-qm", "r");
	git(root, "submodule", "add", "-q", "../subsrc", "sub"); // .git/modules/sub, sub/.git is a gitdir file
	git(root, "worktree", "add", "-q", "wt"); // .git/worktrees/wt, wt/.git is a gitdir file
	git(root, "config", "extensions.worktreeConfig", "true");
	git(root, "config", "--worktree", "core.hooksPath", "githooks"); // .git/config.worktree
	// A repository whose .git is a symlink to a directory with another name.
	await mkdir(join(root, "linked"));
	await mkdir(join(root, "store"));
	git(join(root, "linked"), "init", "-q", "--separate-git-dir", join(root, "store", "realgit"));
	await rm(join(root, "linked", ".git"));
	await symlink("../store/realgit", join(root, "linked", ".git"));
	// A repository whose .git file points elsewhere in the roots.
	await mkdir(join(root, "proj"));
	await mkdir(join(root, "elsewhere"));
	git(join(root, "proj"), "init", "-q", "--separate-git-dir", join(root, "elsewhere", "gd"));
});
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.close()));
	await rm(scratch, { recursive: true, force: true });
});

async function open(opts: SessionOptions = {}): Promise<Session> {
	const s = await Session.create({ root, home: join(scratch, "nohome"), ...opts });
	sessions.push(s);
	return s;
}

function code(r: CallResult): string | undefined {
	return r.ok ? undefined : r.error.code;
}

/** Paths (relative to the root) that must be refused, with the name git reads them under. */
const PROTECTED = [
	".git/modules/sub/hooks/pre-commit", // submodule git dir
	".git/modules/sub/config",
	"sub/.git", // the submodule's gitdir pointer itself
	".git/config.worktree",
	".git/worktrees/wt/config.worktree", // a worktree's git dir
	".git/worktrees/wt/commondir",
	".git/hooks/post-checkout", // common hooks, seen from the worktree too
	"linked/.git/hooks/pre-commit", // through the .git symlink
	"linked/.git/config",
	"store/realgit/hooks/pre-commit", // the symlink's target by its own name
	"store/realgit/config",
	"elsewhere/gd/hooks/pre-push", // the directory a gitdir file points to
	"elsewhere/gd/config",
	"githooks/pre-commit", // core.hooksPath from config.worktree
	".vscode/tasks.json",
	".vscode/settings.json",
	"pkg/.vscode/settings.json",
	".husky/pre-commit",
	".envrc",
	".mcp.json",
	".claude/settings.json",
	"pkg/.bashrc",
];

describe("protected set through the tools", () => {
	it("write and edit are PATH_PROTECTED for every name git or a tool reads as code, and change nothing", async () => {
		const s = await open();
		const before = await snapshot(scratch);
		for (const p of PROTECTED) {
			const r = await s.call("write", { path: p, content: "#!/bin/sh\ntouch /tmp/pwned\n" });
			expect({ p, code: code(r) }).toEqual({ p, code: "PATH_PROTECTED" });
		}
		// edit of existing protected files (read first, as the tools require)
		for (const p of [
			".git/modules/sub/config",
			"store/realgit/config",
			"elsewhere/gd/config",
			".git/config.worktree",
		]) {
			await s.call("read", { path: p });
			const r = await s.call("edit", {
				path: p,
				edits: [{ oldText: "[core]", newText: "[core]\n\tfsmonitor = evil" }],
			});
			expect({ p, code: code(r) }).toEqual({ p, code: "PATH_PROTECTED" });
		}
		expect(await snapshot(scratch)).toEqual(before);
	});

	it("a worktree's paths reach the common hooks and the worktree's git dir: refused", async () => {
		const s = await open({ root: join(root, "wt"), allow: [root] });
		for (const p of [join(root, ".git/worktrees/wt/config.worktree"), join(root, ".git/hooks/pre-commit")]) {
			expect(code(await s.call("write", { path: p, content: "x" }))).toBe("PATH_PROTECTED");
		}
	});

	it("ordinary files named like git's are writable outside git dirs", async () => {
		const s = await open();
		for (const p of ["src/config", "hooks/pre-commit", "docs/commondir", "store/notes.txt", "sub/a2.txt"]) {
			const r = await s.call("write", { path: p, content: "ok\n" });
			expect({ p, ok: r.ok }).toEqual({ p, ok: true });
		}
	});

	it("the home's configuration is protected when the home is inside the roots", async () => {
		const s = await open({ home: root });
		for (const p of ["~/.gitconfig", "~/.ssh/authorized_keys", "~/.config/git/config", "~/.npmrc"]) {
			expect({ p, code: code(await s.call("write", { path: p, content: "x" })) }).toEqual({
				p,
				code: "PATH_PROTECTED",
			});
		}
	});

	it("protectedPaths extends the set (absolute or relative, everything below)", async () => {
		const s = await open({ protectedPaths: ["deploy", join(root, "Makefile")] });
		expect(code(await s.call("write", { path: "deploy/run.sh", content: "x" }))).toBe("PATH_PROTECTED");
		expect(code(await s.call("write", { path: "Makefile", content: "x" }))).toBe("PATH_PROTECTED");
		expect((await s.call("write", { path: "deployment.txt", content: "x" })).ok).toBe(true);
	});

	it("allowProtected lifts it: the same writes land", async () => {
		const s = await open({ allowProtected: true });
		for (const p of [".git/modules/sub/hooks/pre-commit", "elsewhere/gd/hooks/pre-push", ".envrc"]) {
			const r = await s.call("write", { path: p, content: "lifted\n" });
			expect({ p, ok: r.ok }).toEqual({ p, ok: true });
			expect(await readFile(join(root, p), "utf8")).toBe("lifted\n");
		}
	});

	it("reading protected files still works", async () => {
		const s = await open();
		const r = await s.call("read", { path: ".git/modules/sub/config" });
		expect(r.ok).toBe(true);
	});
});
