/**
 * The path battery: every escape shape refused by every path-taking
 * tool, nothing outside touched by a refused call, and the look-alikes still allowed.
 */
import { lstat, mkdir, readFile, readlink, rename, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend, FileOps } from "../../src/backend/types.js";
import type { ErrorCode } from "../../src/boundary/errors.js";
import { type CallResult, Session, type SessionOptions } from "../../src/session.js";
import {
	createFixture,
	type Fixture,
	LOOKALIKE,
	removeFixture,
	SECRET,
	sha256,
	snapshot,
	without,
} from "./fixture.js";

const TOOLS = ["read", "write", "edit", "ls", "find", "grep"] as const;
type ToolName = (typeof TOOLS)[number];
const WRITERS: readonly ToolName[] = ["write", "edit"];

/** Arguments for `tool` aimed at `path`; everything else is valid so only the path can fail. */
function argsFor(tool: ToolName, path: unknown): Record<string, unknown> {
	switch (tool) {
		case "read":
			return { path };
		case "write":
			return { path, content: "PWNED\n" };
		case "edit":
			return { path, edits: [{ oldText: SECRET, newText: "PWNED" }] };
		case "ls":
			return { path };
		case "find":
			return { pattern: "*", path };
		case "grep":
			return { pattern: SECRET, path };
	}
}

function show(r: CallResult): string {
	return JSON.stringify(r.ok ? { ok: true, content: r.content } : { ok: false, error: r.error });
}

function text(r: CallResult): string {
	if (!r.ok) return "";
	return r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** Asserts a refusal with one of `codes`, with a message and no secret in it. */
function expectRefused(r: CallResult, codes: ErrorCode | readonly ErrorCode[]): void {
	const allowed: readonly ErrorCode[] = typeof codes === "string" ? [codes] : codes;
	expect(r.ok, `expected a refusal (${allowed.join(" | ")}), got ${show(r)}`).toBe(false);
	if (r.ok) return;
	expect(allowed, `unexpected error code: ${show(r)}`).toContain(r.error.code);
	expect(r.error.message.length).toBeGreaterThan(0);
	expect(JSON.stringify(r.error)).not.toContain(SECRET);
}

function expectOk(r: CallResult): void {
	expect(r.ok, `expected ok, got ${show(r)}`).toBe(true);
}

/** Asserts that nothing from outside the roots shows up in the result (the full result is in the message). */
function expectNoLeak(r: CallResult, ...markers: string[]): void {
	for (const m of [SECRET, ...markers])
		expect(show(r), `leaked "${m}" from outside: ${show(r)}`).not.toContain(m);
}

/** Overwriting an existing file needs a fresh read by the session. */
async function readFirst(s: Session, path: string): Promise<void> {
	expectOk(await s.call("read", { path }));
}

type Opener = (opts?: Omit<SessionOptions, "root">) => Promise<Session>;

/** A fresh fixture and session opener for one test; both are gone when `fn` settles. */
async function withFixture(fn: (fx: Fixture, open: Opener) => Promise<void>): Promise<void> {
	const f = await createFixture();
	const mine: Session[] = [];
	try {
		await fn(f, async (opts = {}) => {
			const s = await Session.create({ root: f.root, ...opts });
			mine.push(s);
			return s;
		});
	} finally {
		for (const s of mine) await s.close();
		await removeFixture(f);
	}
}

// Sequential describes share these, set up afresh for each test by useFixture().
let fx: Fixture;
const sessions: Session[] = [];

async function open(opts: Omit<SessionOptions, "root"> = {}): Promise<Session> {
	const s = await Session.create({ root: fx.root, ...opts });
	sessions.push(s);
	return s;
}

function useFixture(): void {
	beforeEach(async () => {
		fx = await createFixture();
	});
	afterEach(async () => {
		for (const s of sessions.splice(0)) await s.close();
		await removeFixture(fx);
	});
}

// ---------------------------------------------------------------------------------------------
// Escape attempts: every row × every tool must be refused and change nothing on disk.
// ---------------------------------------------------------------------------------------------

interface Attempt {
	name: string;
	path: (fx: Fixture) => unknown;
	code: ErrorCode | readonly ErrorCode[];
	/** Default: every tool. */
	tools?: readonly ToolName[];
}

const SCHEMA_OR_PATH: readonly ErrorCode[] = ["INVALID_ARGS", "PATH_INVALID"];
const OUT: ErrorCode = "PATH_OUTSIDE_ROOTS";

const ATTEMPTS: Attempt[] = [
	// Prefix siblings: a string-prefix check would let these through.
	{ name: "prefix sibling ../root2/secret.txt", path: () => "../root2/secret.txt", code: OUT },
	{ name: "prefix sibling ../root_backup/secret.txt", path: () => "../root_backup/secret.txt", code: OUT },
	{ name: "prefix sibling ../root-old/secret.txt", path: () => "../root-old/secret.txt", code: OUT },
	{ name: "prefix sibling ../root.bak/secret.txt", path: () => "../root.bak/secret.txt", code: OUT },
	{
		name: "absolute prefix sibling <tmp>/root2/secret.txt",
		path: (f) => f.at("root2/secret.txt"),
		code: OUT,
	},
	{
		name: "absolute prefix sibling <tmp>/root_backup/x (new)",
		path: (f) => f.at("root_backup/x"),
		code: OUT,
	},
	{
		name: "absolute prefix sibling <tmp>/root-old/secret.txt",
		path: (f) => f.at("root-old/secret.txt"),
		code: OUT,
	},
	{
		name: "absolute prefix sibling <tmp>/root.bak/secret.txt",
		path: (f) => f.at("root.bak/secret.txt"),
		code: OUT,
	},
	{ name: "absolute prefix sibling directory <tmp>/root2", path: (f) => f.at("root2"), code: OUT },
	{
		name: "absolute with .. through the root <root>/../root2/secret.txt",
		path: (f) => `${f.root}/../root2/secret.txt`,
		code: OUT,
	},
	// `..` traversal in every position.
	{ name: "bare ..", path: () => "..", code: OUT },
	{ name: "leading ../outside/secret.txt", path: () => "../outside/secret.txt", code: OUT },
	{ name: "leading ./../outside/secret.txt", path: () => "./../outside/secret.txt", code: OUT },
	{
		name: "middle nope/../../outside/secret.txt (missing dir)",
		path: () => "nope/../../outside/secret.txt",
		code: OUT,
	},
	{
		name: "middle a/../../outside/secret.txt (real dir)",
		path: () => "a/../../outside/secret.txt",
		code: OUT,
	},
	{
		name: "after a real dir sub/../../outside/secret.txt",
		path: () => "sub/../../outside/secret.txt",
		code: OUT,
	},
	{
		name: "mixed dots sub/./.././../outside/./secret.txt",
		path: () => "sub/./.././../outside/./secret.txt",
		code: OUT,
	},
	{ name: "trailing a/b/../../..", path: () => "a/b/../../..", code: OUT },
	{
		name: "trailing to a dir sub/deeper/../../../outside",
		path: () => "sub/deeper/../../../outside",
		code: OUT,
	},
	{ name: "trailing slash ../outside/", path: () => "../outside/", code: OUT },
	{
		name: "deep real chain a/b/c/d/e/f/g/h/ + ../ x9 + outside/secret.txt",
		path: () => `a/b/c/d/e/f/g/h/${"../".repeat(9)}outside/secret.txt`,
		code: OUT,
	},
	{
		name: "deep real chain ending at <tmp> (a/…/h + ../ x9)",
		path: () => `a/b/c/d/e/f/g/h/${"../".repeat(9)}`,
		code: OUT,
	},
	{
		name: "deep missing chain n/ x50 + ../ x51 + outside/new-deep.txt",
		path: () => `${"n/".repeat(50)}${"../".repeat(51)}outside/new-deep.txt`,
		code: OUT,
	},
	{
		name: "over-long chain (> 4096 chars) ending outside",
		path: () => `${"a/".repeat(2100)}${"../".repeat(2101)}outside/secret.txt`,
		code: "PATH_INVALID",
	},
	// Absolute paths outside.
	{ name: "absolute /etc/passwd", path: () => "/etc/passwd", code: OUT },
	{ name: "absolute //etc//passwd", path: () => "//etc//passwd", code: OUT },
	{ name: "absolute /", path: () => "/", code: OUT },
	{ name: "absolute <tmp>/outside/secret.txt", path: (f) => f.at("outside/secret.txt"), code: OUT },
	{ name: "absolute <tmp> (the root's parent)", path: (f) => f.tmp, code: OUT },
	{
		name: "absolute /proc/self/root<tmp>/outside/secret.txt",
		path: (f) => `/proc/self/root${f.at("outside/secret.txt")}`,
		code: OUT,
	},
	{ name: "file outside used as a dir /etc/passwd/x", path: () => "/etc/passwd/x", code: OUT },
	// Symlinks inside the root that lead out.
	{ name: "symlink to an outside file (absolute target)", path: () => "lnk_file", code: OUT },
	{ name: "symlink to an outside file (relative target)", path: () => "lnk_rel", code: OUT },
	{ name: "chain of links link1 -> link2 -> outside", path: () => "link1", code: OUT },
	{ name: "outside file link used as a dir lnk_file/x", path: () => "lnk_file/x", code: OUT },
	{ name: "symlinked dir to outside, itself", path: () => "linkdir", code: OUT },
	{
		name: "symlinked parent dir, existing file linkdir/secret.txt",
		path: () => "linkdir/secret.txt",
		code: OUT,
	},
	{ name: "symlinked parent dir, new file linkdir/new.txt", path: () => "linkdir/new.txt", code: OUT },
	{
		name: "symlinked parent dir, mkdir-and-write linkdir/sub/new.txt",
		path: () => "linkdir/sub/new.txt",
		code: OUT,
	},
	{ name: "dangling link to an outside path (absolute)", path: () => "dangle", code: OUT },
	{ name: "dangling link to an outside path (relative)", path: () => "dangle_rel", code: OUT },
	{
		name: "chain ending in a dangling outside link dchain1 -> dchain2 -> ghost",
		path: () => "dchain1",
		code: OUT,
	},
	{ name: "dangling dir link, new file below dangledir/new.txt", path: () => "dangledir/new.txt", code: OUT },
	{
		name: "link to the root's parent parentlink/outside/secret.txt",
		path: () => "parentlink/outside/secret.txt",
		code: OUT,
	},
	{ name: "link to the root's parent, itself", path: () => "parentlink", code: OUT },
	{ name: "link to / rootlink/etc/passwd", path: () => "rootlink/etc/passwd", code: OUT },
	{
		name: "link in a subdir sub/esc -> ../../outside, sub/esc/secret.txt",
		path: () => "sub/esc/secret.txt",
		code: OUT,
	},
	{ name: "link to a prefix sibling (relative) sib/secret.txt", path: () => "sib/secret.txt", code: OUT },
	{
		name: "link to a prefix sibling (absolute) sibabs/secret.txt",
		path: () => "sibabs/secret.txt",
		code: OUT,
	},
	{
		name: ".. via a symlinked dir whose parent is outside (up -> ld/../secret.txt)",
		path: () => "up",
		code: OUT,
	},
	{ name: ".. via a symlinked dir, dangling (up_new -> ld/../new-up.txt)", path: () => "up_new", code: OUT },
	// Loops.
	{ name: "circular links loopa -> loopb -> loopa", path: () => "loopa", code: "PATH_LOOP" },
	{ name: "below circular links loopa/x", path: () => "loopa/x", code: "PATH_LOOP" },
	{ name: "self-link", path: () => "self", code: "PATH_LOOP" },
	// Malformed paths.
	{
		name: "NUL byte in the middle f.txt\\0../../etc/passwd",
		path: () => "f.txt\0../../etc/passwd",
		code: "PATH_INVALID",
	},
	{
		name: "NUL byte at the end ../outside/secret.txt\\0",
		path: () => "../outside/secret.txt\0",
		code: "PATH_INVALID",
	},
	{ name: "NUL byte alone", path: () => "\0", code: "PATH_INVALID" },
	// ls/find/grep treat an empty path as "." (pi); see the look-alikes below.
	{ name: "empty path", path: () => "", code: "PATH_INVALID", tools: ["read", "write", "edit"] },
	{ name: "non-string path: number", path: () => 42, code: SCHEMA_OR_PATH },
	// null in an optional field is that field left out (ls/find/grep then use the root:
	// test/contract/absent-nulls.test.ts); where a path is required it is refused.
	{ name: "non-string path: null", path: () => null, code: SCHEMA_OR_PATH, tools: ["read", "write", "edit"] },
	{
		name: "non-string path: object",
		path: () => ({ toString: () => "../outside/secret.txt" }),
		code: SCHEMA_OR_PATH,
	},
	{ name: "non-string path: array", path: () => ["..", "outside", "secret.txt"], code: SCHEMA_OR_PATH },
	{ name: "non-string path: boolean", path: () => true, code: SCHEMA_OR_PATH },
	// pi's input conventions pointing out (home = <tmp>/outside in this describe).
	{ name: "~/secret.txt with home outside", path: () => "~/secret.txt", code: OUT },
	{ name: "~ alone with home outside", path: () => "~", code: OUT },
	{ name: "~/../root2/secret.txt", path: () => "~/../root2/secret.txt", code: OUT },
	{ name: "@-prefixed absolute outside path", path: (f) => `@${f.at("outside/secret.txt")}`, code: OUT },
	{
		name: "@-prefixed relative outside path @../outside/secret.txt",
		path: () => "@../outside/secret.txt",
		code: OUT,
	},
	{ name: "@~/secret.txt with home outside", path: () => "@~/secret.txt", code: OUT },
];

describe("escape attempts are refused by every tool", () => {
	it("has at least 40 distinct attempts", () => {
		expect(new Set(ATTEMPTS.map((a) => a.name)).size).toBe(ATTEMPTS.length);
		expect(ATTEMPTS.length).toBeGreaterThanOrEqual(40);
	});

	// Each row gets its own temp tree (withFixture).
	for (const tool of TOOLS) {
		describe(tool, () => {
			for (const attempt of ATTEMPTS) {
				if (attempt.tools && !attempt.tools.includes(tool)) continue;
				it(attempt.name, () =>
					withFixture(async (fx, open) => {
						const s = await open({ home: fx.outside });
						const before = await snapshot(fx.tmp);
						const passwd = sha256(await readFile("/etc/passwd"));
						const r = await s.call(tool, argsFor(tool, attempt.path(fx)));
						expectRefused(r, attempt.code);
						const input = attempt.path(fx);
						if (!r.ok && r.error.code === OUT && typeof input === "string") {
							// The error names the path as the model gave it.
							expect(r.error.path).toBe(input);
							expect(r.error.message).toContain(input);
						}
						// Nothing changed anywhere: outside, prefix siblings, and the root itself.
						expect(await snapshot(fx.tmp)).toEqual(before);
						expect(sha256(await readFile("/etc/passwd"))).toBe(passwd);
					}),
				);
			}
		});
	}
});

describe("extra roots keep their own prefix siblings out", () => {
	useFixture();

	for (const tool of TOOLS) {
		it(`${tool}: ../extra2/secret.txt is refused with allow=[../extra]`, async () => {
			const s = await open({ allow: [fx.at("extra")] });
			const before = await snapshot(fx.tmp);
			expectRefused(await s.call(tool, argsFor(tool, "../extra2/secret.txt")), OUT);
			expect(await snapshot(fx.tmp)).toEqual(before);
		});
	}
});

describe("`..` is resolved lexically before links: ld/../x never reaches outside", () => {
	useFixture();

	// ld -> <tmp>/outside/deep/dir; a shell would read <tmp>/outside/deep/secret.txt for
	// ld/../secret.txt. Either a refusal or the root's own file is acceptable; outside never is.
	it("read ld/../f.txt gives the root's f.txt or is refused, never outside data", async () => {
		const s = await open();
		const r = await s.call("read", { path: "ld/../f.txt" });
		if (r.ok) expect(text(r)).toContain(`${LOOKALIKE} root/f.txt`);
		else expectRefused(r, OUT);
		expectNoLeak(r);
	});

	it("read ld/../secret.txt is refused or not found, never outside data", async () => {
		const s = await open();
		const r = await s.call("read", { path: "ld/../secret.txt" });
		expectRefused(r, [OUT, "NOT_FOUND"]);
	});

	it("write ld/../new-lex.txt lands in the root or is refused, outside unchanged", async () => {
		const s = await open();
		const before = await snapshot(fx.outside);
		const r = await s.call("write", { path: "ld/../new-lex.txt", content: "lex\n" });
		if (r.ok) expect(await readFile(join(fx.root, "new-lex.txt"), "utf8")).toBe("lex\n");
		else expectRefused(r, OUT);
		expect(await snapshot(fx.outside)).toEqual(before);
	});
});

// ---------------------------------------------------------------------------------------------
// Protected paths and read-only roots.
// ---------------------------------------------------------------------------------------------

interface Protected {
	name: string;
	path: (fx: Fixture) => string;
	/** Existing file (relative to the root) the path resolves to; undefined for a new file. */
	real?: string;
}

const PROTECTED: Protected[] = [
	{ name: ".git/config", path: () => ".git/config", real: ".git/config" },
	{ name: ".git/hooks/pre-commit", path: () => ".git/hooks/pre-commit", real: ".git/hooks/pre-commit" },
	{ name: ".git/hooks/post-merge (new)", path: () => ".git/hooks/post-merge" },
	{ name: ".bashrc", path: () => ".bashrc", real: ".bashrc" },
	{ name: "sub/.zshrc", path: () => "sub/.zshrc", real: "sub/.zshrc" },
	{ name: "sub/.git/config (nested repo)", path: () => "sub/.git/config", real: "sub/.git/config" },
	{
		name: ".config/fish/config.fish",
		path: () => ".config/fish/config.fish",
		real: ".config/fish/config.fish",
	},
	{ name: "cfglink -> .git/config", path: () => "cfglink", real: ".git/config" },
	{ name: "indir/.zshrc (indir -> sub)", path: () => "indir/.zshrc", real: "sub/.zshrc" },
	{ name: "~/.bashrc with home = root", path: () => "~/.bashrc", real: ".bashrc" },
	{ name: "@.bashrc", path: () => "@.bashrc", real: ".bashrc" },
	{ name: "absolute <root>/.bashrc", path: (f) => join(f.root, ".bashrc"), real: ".bashrc" },
	{ name: "sub/../.git/config", path: () => "sub/../.git/config", real: ".git/config" },
];

describe("protected paths: writes refused, reads allowed", () => {
	useFixture();

	for (const tool of WRITERS) {
		for (const p of PROTECTED) {
			if (tool === "edit" && !p.real) continue;
			it(`${tool} ${p.name} -> PATH_PROTECTED`, async () => {
				const s = await open({ home: fx.root });
				const before = await snapshot(fx.tmp);
				const args =
					tool === "write"
						? { path: p.path(fx), content: "PWNED\n" }
						: { path: p.path(fx), edits: [{ oldText: "#", newText: "PWNED" }] };
				expectRefused(await s.call(tool, args), "PATH_PROTECTED");
				expect(await snapshot(fx.tmp)).toEqual(before);
			});
		}
	}

	for (const p of PROTECTED) {
		if (!p.real) continue;
		const real = p.real;
		it(`read ${p.name} works`, async () => {
			const s = await open({ home: fx.root });
			const r = await s.call("read", { path: p.path(fx) });
			expectOk(r);
			expect(text(r)).toBe((await readFile(join(fx.root, real), "utf8")).replace(/\n$/, ""));
		});
	}

	it("the refusal names the path", async () => {
		const s = await open();
		const r = await s.call("write", { path: ".git/config", content: "x" });
		expectRefused(r, "PATH_PROTECTED");
		if (!r.ok) {
			expect(r.error.path).toBe(".git/config");
			expect(r.error.message).toContain(".git/config");
		}
	});

	it("allowProtected: true permits the write (explicit configuration)", async () => {
		const s = await open({ allowProtected: true });
		await readFirst(s, ".git/config");
		expectOk(await s.call("write", { path: ".git/config", content: "[core]\n" }));
		expect(await readFile(join(fx.root, ".git/config"), "utf8")).toBe("[core]\n");
	});

	for (const name of [".github/config", ".git-backup/config", ".bashrc.bak", "bashrc"]) {
		it(`look-alike ${name} is writable`, async () => {
			const s = await open();
			await readFirst(s, name);
			expectOk(await s.call("write", { path: name, content: "ok\n" }));
			expect(await readFile(join(fx.root, name), "utf8")).toBe("ok\n");
		});
	}
});

describe("read-only roots (allowRead)", () => {
	useFixture();

	const RO_WRITES: { name: string; path: (fx: Fixture) => string; existing: boolean }[] = [
		{ name: "../ro/r.txt", path: () => "../ro/r.txt", existing: true },
		{ name: "absolute <tmp>/ro/r.txt", path: (f) => f.at("ro/r.txt"), existing: true },
		{ name: "../ro/new.txt (new)", path: () => "../ro/new.txt", existing: false },
		{ name: "../ro/sub/new.txt (mkdir)", path: () => "../ro/sub/new.txt", existing: false },
		{ name: "rolink -> <tmp>/ro/r.txt", path: () => "rolink", existing: true },
		{ name: "rodirlink/r.txt (rodirlink -> ../ro)", path: () => "rodirlink/r.txt", existing: true },
		{
			name: "rodirlink/new.txt (new below a link into ro)",
			path: () => "rodirlink/new.txt",
			existing: false,
		},
	];

	for (const tool of WRITERS) {
		for (const w of RO_WRITES) {
			if (tool === "edit" && !w.existing) continue;
			it(`${tool} ${w.name} -> PATH_READ_ONLY`, async () => {
				const s = await open({ allowRead: [fx.at("ro")] });
				const before = await snapshot(fx.tmp);
				const args =
					tool === "write"
						? { path: w.path(fx), content: "PWNED\n" }
						: { path: w.path(fx), edits: [{ oldText: LOOKALIKE, newText: "PWNED" }] };
				expectRefused(await s.call(tool, args), "PATH_READ_ONLY");
				expect(await snapshot(fx.tmp)).toEqual(before);
			});
		}
	}

	for (const path of ["../ro/r.txt", "rolink", "rodirlink/r.txt"]) {
		it(`read ${path} works`, async () => {
			const s = await open({ allowRead: [fx.at("ro")] });
			const r = await s.call("read", { path });
			expectOk(r);
			expect(text(r)).toBe(`${LOOKALIKE} ro/r.txt`);
		});
	}

	it("ls, find and grep work in the read-only root", async () => {
		const s = await open({ allowRead: [fx.at("ro")] });
		const ls = await s.call("ls", { path: "../ro" });
		expectOk(ls);
		expect(text(ls)).toContain("r.txt");
		const find = await s.call("find", { pattern: "*.txt", path: "../ro" });
		expectOk(find);
		expect(text(find)).toContain("r.txt");
		const grep = await s.call("grep", { pattern: LOOKALIKE, path: "../ro" });
		expectOk(grep);
		expect(text(grep)).toContain("r.txt");
	});

	for (const tool of TOOLS) {
		it(`${tool}: the read-only root's prefix sibling ../ro2/secret.txt is refused`, async () => {
			const s = await open({ allowRead: [fx.at("ro")] });
			const before = await snapshot(fx.tmp);
			expectRefused(await s.call(tool, argsFor(tool, "../ro2/secret.txt")), OUT);
			expect(await snapshot(fx.tmp)).toEqual(before);
		});
	}
});

// ---------------------------------------------------------------------------------------------
// Links planted between check and use.
// ---------------------------------------------------------------------------------------------

/** Codes a write or read may fail with when its target moved under it. */
const RACE_CODES: readonly ErrorCode[] = [
	"CHANGED_ON_DISK",
	"WRITE_COLLISION",
	"PATH_LOOP",
	"PATH_OUTSIDE_ROOTS",
	"NOT_FOUND",
];

interface Trap {
	backend: Backend;
	/** Whether the planted change happened (a trap that never fires proves nothing). */
	fired(): boolean;
}

/** A local backend whose `stat` of `path` runs `action` right after its `nth` call returns. */
function trapStat(
	path: string,
	nth: number,
	action: () => Promise<void>,
	searchEngine: "auto" | "js" | "native" = "auto",
): Trap {
	const base = createLocalBackend({ searchEngine });
	let calls = 0;
	let fired = false;
	const fs: FileOps = {
		...base.fs,
		stat: async (p) => {
			const st = await base.fs.stat(p);
			if (p === path && ++calls === nth) {
				fired = true;
				await action();
			}
			return st;
		},
	};
	return { backend: { ...base, fs }, fired: () => fired };
}

/** A local backend that runs `action` once, in beforeCommit, when the commit target is `path`. */
function trapCommit(path: string, action: () => Promise<void>): Trap {
	let fired = false;
	const backend = createLocalBackend({
		hooks: {
			beforeCommit: async (target) => {
				if (fired || target !== path) return;
				fired = true;
				await action();
			},
		},
	});
	return { backend, fired: () => fired };
}

async function swapForLink(path: string, target: string): Promise<void> {
	await rename(path, `${path}.moved`);
	await symlink(target, path);
}

async function isRegularFile(path: string): Promise<boolean> {
	return (await lstat(path)).isFile();
}

describe("a link planted between check and use is not followed", () => {
	useFixture();

	it("write over an existing file: target swapped for a link to an outside file before commit", async () => {
		const victim = join(fx.root, "victim.txt");
		const trap = trapCommit(victim, () => swapForLink(victim, fx.at("outside/secret.txt")));
		const s = await open({ backend: trap.backend });
		await readFirst(s, "victim.txt");
		const before = await snapshot(fx.outside);
		const r = await s.call("write", { path: "victim.txt", content: "PWNED\n" });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		if (r.ok) {
			// Acceptable only if the link itself was replaced by the new file.
			expect(await isRegularFile(victim)).toBe(true);
			expect(await readFile(victim, "utf8")).toBe("PWNED\n");
		} else {
			expectRefused(r, "CHANGED_ON_DISK");
		}
		expect(await snapshot(fx.outside)).toEqual(before);
	});

	it("write of a new file: a link to an outside file planted at the target before commit", async () => {
		const target = join(fx.root, "fresh.txt");
		const trap = trapCommit(target, () => symlink(fx.at("outside/secret.txt"), target));
		const s = await open({ backend: trap.backend });
		const before = await snapshot(fx.outside);
		const r = await s.call("write", { path: "fresh.txt", content: "PWNED\n" });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		if (r.ok) {
			expect(await isRegularFile(target)).toBe(true);
		} else {
			expectRefused(r, ["WRITE_COLLISION", "CHANGED_ON_DISK"]);
		}
		expect(await snapshot(fx.outside)).toEqual(before);
	});

	it("write of a new file: a dangling link to an outside path planted at the target before commit", async () => {
		const target = join(fx.root, "fresh.txt");
		const trap = trapCommit(target, () => symlink(fx.at("outside/toctou-ghost.txt"), target));
		const s = await open({ backend: trap.backend });
		const before = await snapshot(fx.outside);
		const r = await s.call("write", { path: "fresh.txt", content: "PWNED\n" });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		if (r.ok) {
			expect(await isRegularFile(target)).toBe(true);
		} else {
			expectRefused(r, ["WRITE_COLLISION", "CHANGED_ON_DISK"]);
		}
		expect(await snapshot(fx.outside)).toEqual(before);
	});

	it("edit: target swapped for a link to an outside file before commit", async () => {
		const victim = join(fx.root, "victim.txt");
		const trap = trapCommit(victim, () => swapForLink(victim, fx.at("outside/victim.txt")));
		const s = await open({ backend: trap.backend });
		const before = await snapshot(fx.outside);
		const r = await s.call("edit", { path: "victim.txt", edits: [{ oldText: "victim", newText: "PWNED" }] });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		if (r.ok) {
			expect(await isRegularFile(victim)).toBe(true);
		} else {
			expectRefused(r, "CHANGED_ON_DISK");
		}
		expect(await snapshot(fx.outside)).toEqual(before);
	});

	it("write over an existing file: its parent dir swapped for a link to an outside dir before commit", async () => {
		const dir = join(fx.root, "pd");
		await mkdir(dir);
		await writeFile(join(dir, "victim.txt"), "victim\n");
		const trap = trapCommit(join(dir, "victim.txt"), () => swapForLink(dir, fx.at("outside/pd")));
		const s = await open({ backend: trap.backend });
		await readFirst(s, "pd/victim.txt");
		const before = await snapshot(fx.outside);
		const r = await s.call("write", { path: "pd/victim.txt", content: "PWNED\n" });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		// The commit is pinned to the directory the guard checked: it lands there (now pd.moved,
		// inside the root) or is refused; never through the link.
		if (r.ok) expect(await readFile(join(fx.root, "pd.moved", "victim.txt"), "utf8")).toBe("PWNED\n");
		else expectRefused(r, RACE_CODES);
		expect(await snapshot(fx.outside)).toEqual(before);
	});

	it("write of a new file: its parent dir swapped for a link to an outside dir before commit", async () => {
		const dir = join(fx.root, "pd");
		await mkdir(dir);
		const trap = trapCommit(join(dir, "new.txt"), () => swapForLink(dir, fx.at("outside/pd")));
		const s = await open({ backend: trap.backend });
		const before = await snapshot(fx.outside);
		const r = await s.call("write", { path: "pd/new.txt", content: "PWNED\n" });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		if (r.ok) expect(await readFile(join(fx.root, "pd.moved", "new.txt"), "utf8")).toBe("PWNED\n");
		else expectRefused(r, RACE_CODES);
		expect(await snapshot(fx.outside)).toEqual(before);
	});

	it("read: the file swapped for a link to an outside file after the check", async () => {
		const victim = join(fx.root, "victim.txt");
		const trap = trapStat(victim, 1, () => swapForLink(victim, fx.at("outside/secret.txt")));
		const s = await open({ backend: trap.backend });
		const r = await s.call("read", { path: "victim.txt" });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		expectNoLeak(r);
		expectRefused(r, RACE_CODES);
	});

	it("read: the parent dir swapped for a link to an outside dir after the check", async () => {
		const dir = join(fx.root, "pd");
		await mkdir(dir);
		await writeFile(join(dir, "victim.txt"), "victim\n");
		const trap = trapStat(join(dir, "victim.txt"), 1, () => swapForLink(dir, fx.at("outside/pd")));
		const s = await open({ backend: trap.backend });
		const r = await s.call("read", { path: "pd/victim.txt" });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		expectNoLeak(r);
		expectRefused(r, RACE_CODES);
	});

	it("edit: the file swapped for a link to an outside file between its stat and its read", async () => {
		const victim = join(fx.root, "victim.txt");
		await writeFile(join(fx.outside, "victim.txt"), "victim\n");
		const trap = trapStat(victim, 1, () => swapForLink(victim, fx.at("outside/victim.txt")));
		const s = await open({ backend: trap.backend });
		const before = await snapshot(fx.outside);
		const r = await s.call("edit", { path: "victim.txt", edits: [{ oldText: "victim", newText: "PWNED" }] });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		expectRefused(r, RACE_CODES);
		expect(await snapshot(fx.outside)).toEqual(before);
	});

	it("ls: the directory swapped for a link to an outside dir after the check", async () => {
		const dir = join(fx.root, "pd");
		await mkdir(dir);
		await writeFile(join(dir, "inside.txt"), `${LOOKALIKE} inside\n`);
		const trap = trapStat(dir, 1, () => swapForLink(dir, fx.outside));
		const s = await open({ backend: trap.backend });
		const r = await s.call("ls", { path: "pd" });
		expect(trap.fired(), "the trap did not fire").toBe(true);
		expectNoLeak(r, "outside-only");
		expectRefused(r, RACE_CODES);
	});

	for (const engine of ["js", "native"] as const) {
		for (const tool of ["find", "grep"] as const) {
			it(`[${engine}] ${tool}: the directory swapped for a link to an outside dir after the check`, async () => {
				const dir = join(fx.root, "pd");
				await mkdir(dir);
				await writeFile(join(dir, "inside.txt"), `${LOOKALIKE} inside\n`);
				const trap = trapStat(dir, 1, () => swapForLink(dir, fx.outside), engine);
				const s = await open({ backend: trap.backend });
				const r = await s.call(tool, argsFor(tool, "pd"));
				expect(trap.fired(), "the trap did not fire").toBe(true);
				expectNoLeak(r, "outside-only");
				expectRefused(r, RACE_CODES);
			});
		}

		it(`[${engine}] grep: the file swapped for a link to an outside file after the check`, async () => {
			const victim = join(fx.root, "victim.txt");
			const trap = trapStat(victim, 1, () => swapForLink(victim, fx.at("outside/secret.txt")), engine);
			const s = await open({ backend: trap.backend });
			const r = await s.call("grep", { pattern: SECRET, path: "victim.txt" });
			expect(trap.fired(), "the trap did not fire").toBe(true);
			expectNoLeak(r);
			expectRefused(r, RACE_CODES);
		});
	}

	it("edit: the parent dir swapped for a link to an outside dir between its stat and its read", async () => {
		const dir = join(fx.root, "pd");
		await mkdir(dir);
		await writeFile(join(dir, "victim.txt"), "victim\n");
		await writeFile(fx.at("outside/pd/victim.txt"), "victim\n");
		const trap = trapStat(join(dir, "victim.txt"), 1, () => swapForLink(dir, fx.at("outside/pd")));
		const s = await open({ backend: trap.backend });
		const before = await snapshot(fx.outside);
		const r = await s.call("edit", {
			path: "pd/victim.txt",
			edits: [{ oldText: "victim", newText: "PWNED" }],
		});
		expect(trap.fired(), "the trap did not fire").toBe(true);
		expectRefused(r, RACE_CODES);
		expect(await snapshot(fx.outside)).toEqual(before);
	});
});

// ---------------------------------------------------------------------------------------------
// Recursive search and patterns stay inside.
// ---------------------------------------------------------------------------------------------

describe("recursive search does not follow links or patterns out of the root", () => {
	useFixture();

	for (const engine of ["auto", "js", "native"] as const) {
		const backend = () => createLocalBackend({ searchEngine: engine });

		it(`[${engine}] grep over the root finds no outside content through links`, async () => {
			const s = await open({ backend: backend() });
			const r = await s.call("grep", { pattern: SECRET, path: "." });
			expectOk(r);
			expect(text(r)).not.toContain(SECRET);
			// Control: the same walk does search the root's own files.
			const control = await s.call("grep", { pattern: LOOKALIKE, path: "." });
			expectOk(control);
			expect(text(control)).toContain("sub/f.txt");
		});

		it(`[${engine}] find over the root lists nothing below links to outside dirs`, async () => {
			const s = await open({ backend: backend() });
			const r = await s.call("find", { pattern: "**/*", path: "." });
			expectOk(r);
			const out = text(r);
			expect(out).toContain("sub/deeper/g.txt");
			for (const leak of [
				"secret.txt",
				"outside-only",
				"d.txt",
				"linkdir/",
				"sub/esc/",
				"parentlink/",
				"rootlink/",
			]) {
				expect(out).not.toContain(leak);
			}
		});

		for (const pattern of [
			"../outside/*",
			"../**/secret.txt",
			"/etc/*",
			"**/../../outside/*",
			"$TMP/outside/*",
		]) {
			it(`[${engine}] find pattern ${pattern} stays inside`, async () => {
				const s = await open({ backend: backend() });
				const r = await s.call("find", { pattern: pattern.replace("$TMP", fx.tmp), path: "." });
				if (r.ok) {
					expect(text(r)).not.toContain("secret.txt");
					expect(text(r)).not.toContain("passwd");
					expect(text(r)).not.toContain("outside-only");
				} else {
					expectRefused(r, ["INVALID_ARGS", "INVALID_PATTERN", OUT]);
				}
			});

			it(`[${engine}] grep glob ${pattern} stays inside`, async () => {
				const s = await open({ backend: backend() });
				const r = await s.call("grep", { pattern: SECRET, path: ".", glob: pattern.replace("$TMP", fx.tmp) });
				if (r.ok) expect(text(r)).not.toContain(SECRET);
				else expectRefused(r, ["INVALID_ARGS", "INVALID_PATTERN", OUT]);
			});
		}
	}
});

// ---------------------------------------------------------------------------------------------
// Look-alikes that must be allowed.
// ---------------------------------------------------------------------------------------------

interface FileLookalike {
	name: string;
	path: (fx: Fixture) => string;
	/** The file (relative to <tmp>) the path must reach. */
	real: string;
}

const FILE_LOOKALIKES: FileLookalike[] = [
	{ name: "..x", path: () => "..x", real: "root/..x" },
	{ name: "x..", path: () => "x..", real: "root/x.." },
	{ name: ".../f.txt", path: () => ".../f.txt", real: "root/.../f.txt" },
	{ name: ".hidden", path: () => ".hidden", real: "root/.hidden" },
	{ name: "a..b/c", path: () => "a..b/c", real: "root/a..b/c" },
	{ name: "..\\x (backslash is a name character)", path: () => "..\\x", real: "root/..\\x" },
	{ name: "./f.txt", path: () => "./f.txt", real: "root/f.txt" },
	{ name: "sub/../f.txt", path: () => "sub/../f.txt", real: "root/f.txt" },
	{ name: "a/b/../../f.txt", path: () => "a/b/../../f.txt", real: "root/f.txt" },
	{ name: "sub//f.txt", path: () => "sub//f.txt", real: "root/sub/f.txt" },
	{
		name: "deep real chain a/…/h/leaf.txt",
		path: () => "a/b/c/d/e/f/g/h/leaf.txt",
		real: "root/a/b/c/d/e/f/g/h/leaf.txt",
	},
	{ name: "absolute <root>/f.txt", path: (f) => join(f.root, "f.txt"), real: "root/f.txt" },
	{ name: "@f.txt", path: () => "@f.txt", real: "root/f.txt" },
	{ name: "~/x.txt with home inside the root", path: () => "~/x.txt", real: "root/home/x.txt" },
	{
		name: "spaces dir with spaces/file name.txt",
		path: () => "dir with spaces/file name.txt",
		real: "root/dir with spaces/file name.txt",
	},
	{
		name: "unicode ünïcødé/日本語 ✓.txt",
		path: () => "ünïcødé/日本語 ✓.txt",
		real: "root/ünïcødé/日本語 ✓.txt",
	},
	{ name: "symlink inside -> inside file (inlink -> real.txt)", path: () => "inlink", real: "root/real.txt" },
	{ name: "symlinked dir inside -> inside (indir/f.txt)", path: () => "indir/f.txt", real: "root/sub/f.txt" },
	{ name: "extra root ../extra/e.txt", path: () => "../extra/e.txt", real: "extra/e.txt" },
	{ name: "extra root absolute <tmp>/extra/e.txt", path: (f) => f.at("extra/e.txt"), real: "extra/e.txt" },
	{ name: "link into an extra root (elink)", path: () => "elink", real: "extra/e.txt" },
];

function lookalikeSession(): Promise<Session> {
	return open({ home: join(fx.root, "home"), allow: [fx.at("extra")] });
}

describe("look-alike files are allowed", () => {
	useFixture();

	for (const l of FILE_LOOKALIKES) {
		it(`read ${l.name}`, async () => {
			const s = await lookalikeSession();
			const r = await s.call("read", { path: l.path(fx) });
			expectOk(r);
			expect(text(r)).toBe(`${LOOKALIKE} ${l.real}`);
		});

		it(`write ${l.name} changes exactly the real file`, async () => {
			const s = await lookalikeSession();
			const before = await snapshot(fx.tmp);
			await readFirst(s, l.path(fx));
			const r = await s.call("write", { path: l.path(fx), content: "WRITTEN\n" });
			expectOk(r);
			expect(await readFile(fx.at(l.real), "utf8")).toBe("WRITTEN\n");
			expect(await isRegularFile(fx.at(l.real))).toBe(true);
			expect(without(await snapshot(fx.tmp), l.real)).toEqual(without(before, l.real));
		});

		it(`edit ${l.name} changes exactly the real file`, async () => {
			const s = await lookalikeSession();
			const before = await snapshot(fx.tmp);
			const r = await s.call("edit", {
				path: l.path(fx),
				edits: [{ oldText: LOOKALIKE, newText: "EDITED" }],
			});
			expectOk(r);
			expect(await readFile(fx.at(l.real), "utf8")).toBe(`EDITED ${l.real}\n`);
			expect(without(await snapshot(fx.tmp), l.real)).toEqual(without(before, l.real));
		});

		it(`grep ${l.name}`, async () => {
			const s = await lookalikeSession();
			const r = await s.call("grep", { pattern: LOOKALIKE, path: l.path(fx) });
			expectOk(r);
			expect(text(r)).toContain(`${LOOKALIKE} ${l.real}`);
		});
	}

	it("a no-break space for a plain one: read finds the file, writes, edits and grep take the exact name", async () => {
		const s = await lookalikeSession();
		const typed = "nb\u00A0space.txt";
		const r = await s.call("read", { path: typed });
		expectOk(r);
		expect(text(r)).toBe(`${LOOKALIKE} root/nb space.txt`);
		const before = await snapshot(fx.tmp);
		expect((await s.call("edit", { path: typed, edits: [{ oldText: LOOKALIKE, newText: "X" }] })).ok).toBe(
			false,
		);
		expect((await s.call("grep", { pattern: LOOKALIKE, path: typed })).ok).toBe(false);
		expect(await snapshot(fx.tmp)).toEqual(before);
		expectOk(await s.call("write", { path: typed, content: "NEW\n" }));
		expect(await readFile(fx.at(`root/${typed}`), "utf8")).toBe("NEW\n");
		expect(await readFile(fx.at("root/nb space.txt"), "utf8")).toBe(`${LOOKALIKE} root/nb space.txt\n`);
	});

	it("write through an inside link changes the target and keeps the link a link", async () => {
		const s = await lookalikeSession();
		await readFirst(s, "inlink");
		expectOk(await s.call("write", { path: "inlink", content: "via link\n" }));
		expect((await lstat(join(fx.root, "inlink"))).isSymbolicLink()).toBe(true);
		expect(await readlink(join(fx.root, "inlink"))).toBe("real.txt");
		expect(await readFile(join(fx.root, "real.txt"), "utf8")).toBe("via link\n");
	});

	it("edit through an inside link changes the target and keeps the link a link", async () => {
		const s = await lookalikeSession();
		expectOk(await s.call("edit", { path: "inlink", edits: [{ oldText: LOOKALIKE, newText: "EDITED" }] }));
		expect((await lstat(join(fx.root, "inlink"))).isSymbolicLink()).toBe(true);
		expect(await readFile(join(fx.root, "real.txt"), "utf8")).toBe("EDITED root/real.txt\n");
	});

	it("a relative path resolves against the root, not process.cwd()", async () => {
		expect(process.cwd()).not.toBe(fx.root);
		const s = await lookalikeSession();
		const r = await s.call("read", { path: "f.txt" });
		expectOk(r);
		expect(text(r)).toBe(`${LOOKALIKE} root/f.txt`);
	});

	it("a relative write lands in the root, not process.cwd()", async () => {
		const name = `keel-paths-cwd-${process.pid}.txt`;
		const inCwd = join(process.cwd(), name);
		const s = await lookalikeSession();
		try {
			expectOk(await s.call("write", { path: name, content: "here\n" }));
			expect(await readFile(join(fx.root, name), "utf8")).toBe("here\n");
			await expect(lstat(inCwd)).rejects.toMatchObject({ code: "ENOENT" });
		} finally {
			await rm(inCwd, { force: true });
		}
	});

	const NEW_FILES: { path: (fx: Fixture) => string; real: string }[] = [
		{ path: () => "..x-new", real: "root/..x-new" },
		{ path: () => "x..new", real: "root/x..new" },
		{ path: () => ".../new.txt", real: "root/.../new.txt" },
		{ path: () => "a..b/new/c.txt", real: "root/a..b/new/c.txt" },
		{ path: () => "...new/x.txt", real: "root/...new/x.txt" },
		{ path: () => "@new-at.txt", real: "root/new-at.txt" },
		{ path: () => "indir/new.txt", real: "root/sub/new.txt" },
		{ path: () => "~/new-home.txt", real: "root/home/new-home.txt" },
		{ path: () => "new dir/ünï ✓.txt", real: "root/new dir/ünï ✓.txt" },
		{ path: () => "../extra/new.txt", real: "extra/new.txt" },
	];
	for (const n of NEW_FILES) {
		it(`write new file ${n.real}`, async () => {
			const s = await lookalikeSession();
			const before = await snapshot(fx.tmp);
			expectOk(await s.call("write", { path: n.path(fx), content: "new\n" }));
			expect(await readFile(fx.at(n.real), "utf8")).toBe("new\n");
			// Only the new file (and the directories it needed) appeared.
			const after = await snapshot(fx.tmp);
			for (const [k, v] of Object.entries(before)) expect(after[k], k).toBe(v);
			for (const k of Object.keys(after)) {
				if (k in before) continue;
				expect(n.real === k || n.real.startsWith(`${k}/`), `unexpected new entry ${k}`).toBe(true);
			}
		});
	}
});

interface DirLookalike {
	name: string;
	path: (fx: Fixture) => string | undefined;
	/** A child the listing must show. */
	child: string;
}

const DIR_LOOKALIKES: DirLookalike[] = [
	{ name: "...", path: () => "...", child: "f.txt" },
	{ name: "a..b", path: () => "a..b", child: "c" },
	{ name: "symlinked dir inside -> inside (indir)", path: () => "indir", child: "f.txt" },
	{ name: "dir with spaces", path: () => "dir with spaces", child: "file name.txt" },
	{ name: "ünïcødé", path: () => "ünïcødé", child: "日本語 ✓.txt" },
	{ name: "~ with home inside the root", path: () => "~", child: "x.txt" },
	{ name: "@sub", path: () => "@sub", child: "f.txt" },
	{ name: "sub/ (trailing slash)", path: () => "sub/", child: "f.txt" },
	{ name: "sub/deeper/.. ", path: () => "sub/deeper/..", child: "f.txt" },
	{ name: ". (the root)", path: () => ".", child: "f.txt" },
	{ name: "empty path (pi: the root)", path: () => "", child: "f.txt" },
	{ name: "no path (the root)", path: () => undefined, child: "f.txt" },
	{ name: "absolute <root>", path: (f) => f.root, child: "f.txt" },
	{ name: "extra root ../extra", path: () => "../extra", child: "e.txt" },
	{ name: "extra root absolute <tmp>/extra", path: (f) => f.at("extra"), child: "e.txt" },
];

describe("look-alike directories are allowed", () => {
	useFixture();

	for (const d of DIR_LOOKALIKES) {
		for (const tool of ["ls", "find", "grep"] as const) {
			it(`${tool} ${d.name}`, async () => {
				const s = await lookalikeSession();
				const path = d.path(fx);
				const base: Record<string, unknown> =
					tool === "ls" ? {} : tool === "find" ? { pattern: "**/*" } : { pattern: LOOKALIKE };
				const r = await s.call(tool, path === undefined ? base : { ...base, path });
				expectOk(r);
				expect(text(r)).toContain(d.child);
				expect(text(r)).not.toContain(SECRET);
			});
		}
	}
});
