/**
 * Bad input, tool by tool: every failure comes back as ok:false with a specific
 * code, an actionable message and a retry class, and nothing on disk changes. Each failing call is
 * bracketed by a snapshot of the whole temp tree (workspace root, a directory outside it and a
 * read-only root): paths, types, modes, bytes, inodes and mtimes must be identical afterwards.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/boundary/errors.js";
import { Session } from "../../src/session.js";
import {
	expectFailure,
	expectSameTree,
	makeTree,
	PNG_1x1,
	removeDir,
	snapshotTree,
	type Tree,
	textOf,
} from "./fixtures.js";

interface Case {
	name: string;
	tool: string;
	/** A function for arguments too big to build at load time. */
	args: unknown | (() => unknown);
	code: ErrorCode;
	/** Text the message must contain (e.g. the offending field). */
	mentions?: string;
}

const TEN_MB = 10 * 1024 * 1024;
const hugePath = () => "p".repeat(TEN_MB);

/** What each tool takes: a valid call, required fields and the type of every field. */
const TOOLS: Record<
	string,
	{
		valid: Record<string, unknown>;
		required: string[];
		strings: string[];
		numbers: string[];
		booleans: string[];
	}
> = {
	read: {
		valid: { path: "a.txt" },
		required: ["path"],
		strings: ["path"],
		numbers: ["offset", "limit"],
		booleans: [],
	},
	write: {
		valid: { path: "new.txt", content: "x" },
		required: ["path", "content"],
		strings: ["path", "content"],
		numbers: [],
		booleans: [],
	},
	edit: {
		valid: { path: "a.txt", edits: [{ oldText: "beta", newText: "BETA" }] },
		required: ["path", "edits"],
		strings: ["path"],
		numbers: [],
		booleans: [],
	},
	bash: {
		valid: { command: "touch ran" },
		required: ["command"],
		strings: ["command"],
		numbers: ["timeout"],
		booleans: [],
	},
	grep: {
		valid: { pattern: "alpha" },
		required: ["pattern"],
		strings: ["pattern", "path", "glob"],
		numbers: ["context", "limit"],
		booleans: ["ignoreCase", "literal"],
	},
	find: {
		valid: { pattern: "*.txt" },
		required: ["pattern"],
		strings: ["pattern", "path"],
		numbers: ["limit"],
		booleans: [],
	},
	ls: { valid: {}, required: [], strings: ["path"], numbers: ["limit"], booleans: [] },
};

function schemaCases(): Case[] {
	const cases: Case[] = [];
	for (const [tool, spec] of Object.entries(TOOLS)) {
		const add = (name: string, args: unknown, mentions?: string) =>
			cases.push({ name: `${tool}: ${name}`, tool, args, code: "INVALID_ARGS", mentions });
		add("null arguments", null);
		add("array arguments", [spec.valid]);
		add("string arguments", JSON.stringify(spec.valid));
		add("number arguments", 42);
		for (const field of spec.required) {
			const { [field]: _dropped, ...rest } = spec.valid;
			add(`missing required "${field}"`, rest, field);
		}
		add("extra field", { ...spec.valid, verbose: true }, "verbose");
		add("two extra fields", { ...spec.valid, cwd: "/", recursive: 1 }, "cwd");
		for (const field of spec.strings) {
			add(`number for string "${field}"`, { ...spec.valid, [field]: 42 }, field);
			// null in an optional field is "absent" (the strict-mode form); in a required one it is refused.
			if (spec.required.includes(field))
				add(`null for string "${field}"`, { ...spec.valid, [field]: null }, field);
			add(`array for string "${field}"`, { ...spec.valid, [field]: ["a.txt"] }, field);
			add(`object for string "${field}"`, { ...spec.valid, [field]: { value: "a.txt" } }, field);
			add(`boolean for string "${field}"`, { ...spec.valid, [field]: true }, field);
		}
		for (const field of spec.numbers) {
			add(`string for number "${field}"`, { ...spec.valid, [field]: "5" }, field);
			if (spec.required.includes(field))
				add(`null for number "${field}"`, { ...spec.valid, [field]: null }, field);
			add(`array for number "${field}"`, { ...spec.valid, [field]: [5] }, field);
			add(`boolean for number "${field}"`, { ...spec.valid, [field]: true }, field);
		}
		for (const field of spec.booleans) {
			add(`string for boolean "${field}"`, { ...spec.valid, [field]: "true" }, field);
			add(`number for boolean "${field}"`, { ...spec.valid, [field]: 1 }, field);
		}
	}
	// edit's nested shape: an array of {oldText, newText} objects.
	const edit = (name: string, edits: unknown, mentions?: string) =>
		cases.push({
			name: `edit: ${name}`,
			tool: "edit",
			args: { path: "a.txt", edits },
			code: "INVALID_ARGS",
			mentions,
		});
	edit("object for edits array", { oldText: "beta", newText: "BETA" }, "edits");
	edit("number for edits array", 3, "edits");
	edit("null for edits array", null, "edits");
	edit("edits as a string that is not JSON", "[{oldText: beta}", "edits");
	edit("edits as a JSON string of an object", '{"oldText":"beta","newText":"BETA"}', "edits");
	edit("array for an edit object", [["beta", "BETA"]], "edits");
	edit("null for an edit object", [null], "edits");
	edit("edit missing newText", [{ oldText: "beta" }], "newText");
	edit("edit missing oldText", [{ newText: "BETA" }], "oldText");
	edit("extra field in an edit", [{ oldText: "beta", newText: "BETA", replaceAll: true }], "replaceAll");
	edit("number for oldText", [{ oldText: 1, newText: "BETA" }], "oldText");
	edit("null for newText", [{ oldText: "beta", newText: null }], "newText");
	edit("empty edits array", [], "edits");
	cases.push({
		name: "edit: top-level oldText without newText",
		tool: "edit",
		args: { path: "a.txt", oldText: "beta" },
		code: "INVALID_ARGS",
	});
	return cases;
}

const EMPTY_STRINGS: Case[] = [
	{ name: "read: empty path", tool: "read", args: { path: "" }, code: "PATH_INVALID" },
	{ name: "write: empty path", tool: "write", args: { path: "", content: "x" }, code: "PATH_INVALID" },
	{
		name: "edit: empty path",
		tool: "edit",
		args: { path: "", edits: [{ oldText: "a", newText: "b" }] },
		code: "PATH_INVALID",
	},
	{
		name: "grep: empty pattern",
		tool: "grep",
		args: { pattern: "" },
		code: "INVALID_ARGS",
		mentions: "pattern",
	},
	{
		name: "find: empty pattern",
		tool: "find",
		args: { pattern: "" },
		code: "INVALID_ARGS",
		mentions: "pattern",
	},
	{
		name: "bash: empty command",
		tool: "bash",
		args: { command: "" },
		code: "INVALID_ARGS",
		mentions: "command",
	},
	{
		name: "bash: blank command",
		tool: "bash",
		args: { command: " \n\t " },
		code: "INVALID_ARGS",
		mentions: "command",
	},
	{
		name: "edit: empty oldText",
		tool: "edit",
		args: { path: "a.txt", edits: [{ oldText: "", newText: "x" }] },
		code: "INVALID_ARGS",
		mentions: "oldText",
	},
	{
		name: "edit: empty oldText among valid edits",
		tool: "edit",
		args: {
			path: "a.txt",
			edits: [
				{ oldText: "alpha", newText: "ALPHA" },
				{ oldText: "", newText: "x" },
			],
		},
		code: "INVALID_ARGS",
		mentions: "oldText",
	},
];

const HUGE_STRINGS: Case[] = [
	{ name: "read: 10 MB path", tool: "read", args: () => ({ path: hugePath() }), code: "PATH_INVALID" },
	{
		name: "write: 10 MB path",
		tool: "write",
		args: () => ({ path: hugePath(), content: "x" }),
		code: "PATH_INVALID",
	},
	{
		name: "edit: 10 MB path",
		tool: "edit",
		args: () => ({ path: hugePath(), edits: [{ oldText: "a", newText: "b" }] }),
		code: "PATH_INVALID",
	},
	{ name: "ls: 10 MB path", tool: "ls", args: () => ({ path: hugePath() }), code: "PATH_INVALID" },
	{
		name: "find: 10 MB path",
		tool: "find",
		args: () => ({ pattern: "*", path: hugePath() }),
		code: "PATH_INVALID",
	},
	{
		name: "grep: 10 MB path",
		tool: "grep",
		args: () => ({ pattern: "a", path: hugePath() }),
		code: "PATH_INVALID",
	},
	{
		name: "edit: 10 MB oldText not in the file",
		tool: "edit",
		args: () => ({ path: "a.txt", edits: [{ oldText: "beta\n".repeat(TEN_MB / 5), newText: "x" }] }),
		code: "NO_MATCH",
	},
	{
		name: "edit: 10 MB single-line oldText not in the file",
		tool: "edit",
		args: () => ({ path: "a.txt", edits: [{ oldText: "q".repeat(TEN_MB), newText: "x" }] }),
		code: "NO_MATCH",
	},
	{
		name: "write: a path component longer than NAME_MAX",
		tool: "write",
		args: { path: `${"n".repeat(300)}.txt`, content: "x" },
		code: "PATH_INVALID",
	},
	{
		name: "write: a too-long name under a new directory (no directory may be left behind)",
		tool: "write",
		args: { path: `newdir/${"n".repeat(300)}.txt`, content: "x" },
		code: "PATH_INVALID",
	},
];

const NUL_PATHS: Case[] = ["read", "write", "edit", "ls", "find", "grep"].map((tool) => {
	const path = "a.txt\0.sh";
	const args: Record<string, unknown> = {
		read: { path },
		write: { path, content: "x" },
		edit: { path, edits: [{ oldText: "beta", newText: "BETA" }] },
		ls: { path },
		find: { pattern: "*", path },
		grep: { pattern: "alpha", path },
	}[tool] as Record<string, unknown>;
	return { name: `${tool}: path with a NUL byte`, tool, args, code: "PATH_INVALID" as ErrorCode };
});

const ONE_EDIT = [{ oldText: "secret", newText: "pwned" }];
const OUTSIDE: Case[] = [
	{
		name: "read: ../ escape",
		tool: "read",
		args: { path: "../outside/secret.txt" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "read: absolute path outside",
		tool: "read",
		args: { path: "/etc/passwd" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "read: ~ expands outside",
		tool: "read",
		args: { path: "~/secret.txt" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "read: @ prefix escape",
		tool: "read",
		args: { path: "@../outside/secret.txt" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "read: symlink pointing outside",
		tool: "read",
		args: { path: "link-out" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "read: dir/../../ escape",
		tool: "read",
		args: { path: "dir/../../outside/secret.txt" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "write: ../ escape",
		tool: "write",
		args: { path: "../outside/new.txt", content: "x" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "write: over a file outside",
		tool: "write",
		args: { path: "../outside/secret.txt", content: "x" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "write: through a symlinked directory",
		tool: "write",
		args: { path: "link-outdir/new.txt", content: "x" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "write: through a dangling symlink",
		tool: "write",
		args: { path: "dangling", content: "x" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "write: new subdirectories outside",
		tool: "write",
		args: { path: "../outside/a/b/c.txt", content: "x" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "write: into a read-only root",
		tool: "write",
		args: { path: "../ro/ro.txt", content: "x" },
		code: "PATH_READ_ONLY",
	},
	{
		name: "write: .git/config",
		tool: "write",
		args: { path: ".git/config", content: "x" },
		code: "PATH_PROTECTED",
	},
	{
		name: "write: .git/hooks/",
		tool: "write",
		args: { path: ".git/hooks/pre-commit", content: "x" },
		code: "PATH_PROTECTED",
	},
	{
		name: "write: a shell rc file",
		tool: "write",
		args: { path: ".bashrc", content: "x" },
		code: "PATH_PROTECTED",
	},
	{
		name: "edit: ../ escape",
		tool: "edit",
		args: { path: "../outside/secret.txt", edits: ONE_EDIT },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "edit: symlink pointing outside",
		tool: "edit",
		args: { path: "link-out", edits: ONE_EDIT },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "edit: read-only root",
		tool: "edit",
		args: { path: "../ro/ro.txt", edits: ONE_EDIT },
		code: "PATH_READ_ONLY",
	},
	{
		name: "edit: .git/config",
		tool: "edit",
		args: { path: ".git/config", edits: [{ oldText: "core", newText: "x" }] },
		code: "PATH_PROTECTED",
	},
	{ name: "ls: ..", tool: "ls", args: { path: ".." }, code: "PATH_OUTSIDE_ROOTS" },
	{ name: "ls: /", tool: "ls", args: { path: "/" }, code: "PATH_OUTSIDE_ROOTS" },
	{
		name: "ls: symlinked directory outside",
		tool: "ls",
		args: { path: "link-outdir" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{ name: "find: /", tool: "find", args: { pattern: "*", path: "/" }, code: "PATH_OUTSIDE_ROOTS" },
	{
		name: "find: ../outside",
		tool: "find",
		args: { pattern: "*", path: "../outside" },
		code: "PATH_OUTSIDE_ROOTS",
	},
	{ name: "grep: /etc", tool: "grep", args: { pattern: "root", path: "/etc" }, code: "PATH_OUTSIDE_ROOTS" },
	{
		name: "grep: symlink outside",
		tool: "grep",
		args: { pattern: "secret", path: "link-out" },
		code: "PATH_OUTSIDE_ROOTS",
	},
];

const WRONG_KIND: Case[] = [
	{ name: "read: a directory", tool: "read", args: { path: "dir" }, code: "IS_DIRECTORY" },
	{ name: "read: the root", tool: "read", args: { path: "." }, code: "IS_DIRECTORY" },
	{ name: "write: a directory", tool: "write", args: { path: "dir", content: "x" }, code: "IS_DIRECTORY" },
	{ name: "write: the root", tool: "write", args: { path: ".", content: "x" }, code: "IS_DIRECTORY" },
	{
		name: "write: a directory with a trailing slash",
		tool: "write",
		args: { path: "dir/", content: "x" },
		code: "IS_DIRECTORY",
	},
	{
		name: "write: a new path with a trailing slash (a directory, not a file)",
		tool: "write",
		args: { path: "newdir/", content: "x" },
		code: "IS_DIRECTORY",
	},
	{
		name: "edit: a directory",
		tool: "edit",
		args: { path: "dir", edits: [{ oldText: "a", newText: "b" }] },
		code: "IS_DIRECTORY",
	},
	{ name: "ls: a file", tool: "ls", args: { path: "a.txt" }, code: "NOT_DIRECTORY" },
	{ name: "find: in a file", tool: "find", args: { pattern: "*", path: "a.txt" }, code: "NOT_DIRECTORY" },
	{ name: "read: below a file", tool: "read", args: { path: "a.txt/x" }, code: "NOT_DIRECTORY" },
	{
		name: "write: below a file",
		tool: "write",
		args: { path: "a.txt/x.txt", content: "x" },
		code: "NOT_DIRECTORY",
	},
];

const CONTENT: Case[] = [
	{ name: "read: binary file", tool: "read", args: { path: "blob.bin" }, code: "BINARY_FILE" },
	{
		name: "edit: binary file",
		tool: "edit",
		args: { path: "blob.bin", edits: [{ oldText: "A", newText: "B" }] },
		code: "ENCODING_UNSAFE",
	},
	{
		name: "edit: PNG",
		tool: "edit",
		args: { path: "image.png", edits: [{ oldText: "PNG", newText: "GIF" }] },
		code: "ENCODING_UNSAFE",
	},
	{
		name: "edit: invalid UTF-8 without NUL",
		tool: "edit",
		args: { path: "latin1.txt", edits: [{ oldText: "caf", newText: "tea" }] },
		code: "ENCODING_UNSAFE",
	},
];

const UNREAD: Case[] = [
	{
		name: "write: over an existing file not read in this session",
		tool: "write",
		args: { path: "a.txt", content: "clobbered" },
		code: "NOT_READ",
	},
	{
		name: "write: over an executable not read in this session",
		tool: "write",
		args: { path: "exec.sh", content: "" },
		code: "NOT_READ",
	},
];

const MISSING: Case[] = [
	{ name: "read: missing file", tool: "read", args: { path: "missing.txt" }, code: "NOT_FOUND" },
	{ name: "read: missing parent", tool: "read", args: { path: "nodir/missing.txt" }, code: "NOT_FOUND" },
	{
		name: "edit: missing file",
		tool: "edit",
		args: { path: "missing.txt", edits: [{ oldText: "a", newText: "b" }] },
		code: "NOT_FOUND",
	},
	{ name: "ls: missing directory", tool: "ls", args: { path: "nodir" }, code: "NOT_FOUND" },
	{ name: "find: missing directory", tool: "find", args: { pattern: "*", path: "nodir" }, code: "NOT_FOUND" },
	{
		name: "grep: missing path",
		tool: "grep",
		args: { pattern: "a", path: "missing.txt" },
		code: "NOT_FOUND",
	},
];

const EDIT_SEMANTICS: Case[] = [
	{
		name: "edit: oldText not found",
		tool: "edit",
		args: { path: "a.txt", edits: [{ oldText: "delta", newText: "DELTA" }] },
		code: "NO_MATCH",
	},
	{
		// Trailing blanks are drift the ladder forgives; a blank inside a word is not.
		name: "edit: oldText with a blank inside a word",
		tool: "edit",
		args: { path: "a.txt", edits: [{ oldText: "be ta\n", newText: "BETA\n" }] },
		code: "NO_MATCH",
	},
	{
		name: "edit: one of two edits not found (nothing applied)",
		tool: "edit",
		args: {
			path: "a.txt",
			edits: [
				{ oldText: "alpha", newText: "ALPHA" },
				{ oldText: "delta", newText: "DELTA" },
			],
		},
		code: "NO_MATCH",
	},
	{
		name: "edit: oldText matches twice",
		tool: "edit",
		args: { path: "dup.txt", edits: [{ oldText: "same", newText: "SAME" }] },
		code: "AMBIGUOUS_MATCH",
	},
	{
		name: "edit: overlapping edits",
		tool: "edit",
		args: {
			path: "a.txt",
			edits: [
				{ oldText: "alpha\nbeta", newText: "x" },
				{ oldText: "beta\ngamma", newText: "y" },
			],
		},
		code: "EDIT_OVERLAP",
	},
	{
		name: "edit: nested edits",
		tool: "edit",
		args: {
			path: "a.txt",
			edits: [
				{ oldText: "alpha\nbeta\ngamma", newText: "x" },
				{ oldText: "beta", newText: "y" },
			],
		},
		code: "EDIT_OVERLAP",
	},
	{
		name: "edit: no-op edit",
		tool: "edit",
		args: { path: "a.txt", edits: [{ oldText: "beta", newText: "beta" }] },
		code: "NO_CHANGE",
	},
	{
		name: "edit: edits that cancel out",
		tool: "edit",
		args: {
			path: "a.txt",
			edits: [
				{ oldText: "alpha", newText: "alpha" },
				{ oldText: "gamma", newText: "gamma" },
			],
		},
		code: "NO_CHANGE",
	},
];

const RANGES: Case[] = [
	{
		name: "grep: unbalanced parenthesis",
		tool: "grep",
		args: { pattern: "(alpha" },
		code: "INVALID_PATTERN",
	},
	{ name: "grep: unterminated class", tool: "grep", args: { pattern: "[a-" }, code: "INVALID_PATTERN" },
	{ name: "grep: dangling repetition", tool: "grep", args: { pattern: "*alpha" }, code: "INVALID_PATTERN" },
	{
		name: "grep: look-around (not supported)",
		tool: "grep",
		args: { pattern: "(?=alpha)" },
		code: "INVALID_PATTERN",
	},
	{
		name: "grep: a NUL byte in the pattern",
		tool: "grep",
		args: { pattern: "al\0pha" },
		code: "INVALID_PATTERN",
	},
	{
		name: "grep: a NUL byte in the glob",
		tool: "grep",
		args: { pattern: "alpha", glob: "*.txt\0" },
		code: "INVALID_PATTERN",
	},
	{ name: "find: unclosed character class", tool: "find", args: { pattern: "[" }, code: "INVALID_PATTERN" },
	{
		name: "find: a NUL byte in the pattern",
		tool: "find",
		args: { pattern: "*.txt\0" },
		code: "INVALID_PATTERN",
	},
	{
		name: "read: offset beyond EOF",
		tool: "read",
		args: { path: "a.txt", offset: 100 },
		code: "OFFSET_OUT_OF_RANGE",
	},
	{
		name: "read: offset one past the last line",
		tool: "read",
		args: { path: "a.txt", offset: 4 },
		code: "OFFSET_OUT_OF_RANGE",
	},
	{
		name: "read: offset 2 of an empty file",
		tool: "read",
		args: { path: "empty.txt", offset: 2 },
		code: "OFFSET_OUT_OF_RANGE",
	},
	{
		name: "read: offset 0",
		tool: "read",
		args: { path: "a.txt", offset: 0 },
		code: "INVALID_ARGS",
		mentions: "offset",
	},
	{
		name: "read: negative offset",
		tool: "read",
		args: { path: "a.txt", offset: -3 },
		code: "INVALID_ARGS",
		mentions: "offset",
	},
	{
		name: "read: NaN offset",
		tool: "read",
		args: { path: "a.txt", offset: Number.NaN },
		code: "INVALID_ARGS",
	},
	{
		name: "bash: NaN timeout",
		tool: "bash",
		args: { command: "touch ran", timeout: Number.NaN },
		code: "INVALID_ARGS",
	},
	{
		name: "bash: timeout 0",
		tool: "bash",
		args: { command: "touch ran", timeout: 0 },
		code: "INVALID_ARGS",
		mentions: "timeout",
	},
	{
		name: "bash: negative timeout",
		tool: "bash",
		args: { command: "touch ran", timeout: -5 },
		code: "INVALID_ARGS",
		mentions: "timeout",
	},
	{
		name: "bash: a NUL byte in the command",
		tool: "bash",
		args: { command: "touch ran\0; echo" },
		code: "INVALID_ARGS",
	},
	...(["read", "grep", "find", "ls"] as const).flatMap((tool): Case[] => {
		const base = TOOLS[tool].valid;
		return [
			{
				name: `${tool}: limit 0`,
				tool,
				args: { ...base, limit: 0 },
				code: "INVALID_ARGS",
				mentions: "limit",
			},
			{
				name: `${tool}: negative limit`,
				tool,
				args: { ...base, limit: -1 },
				code: "INVALID_ARGS",
				mentions: "limit",
			},
			{
				name: `${tool}: fractional limit below 1`,
				tool,
				args: { ...base, limit: 0.5 },
				code: "INVALID_ARGS",
				mentions: "limit",
			},
		];
	}),
];

const UNKNOWN: Case[] = ["cat", "", "READ", "Read", "__proto__", "toString", "python", "file", "read "].map(
	(tool) => ({
		name: `unknown tool ${JSON.stringify(tool)}`,
		tool,
		args: { path: "a.txt" },
		code: "UNKNOWN_TOOL" as ErrorCode,
	}),
);

const GROUPS: Record<string, Case[]> = {
	"schema: missing, extra and mistyped fields": schemaCases(),
	"empty strings": EMPTY_STRINGS,
	"huge strings": HUGE_STRINGS,
	"NUL bytes in paths": NUL_PATHS,
	"paths outside the roots": OUTSIDE,
	"directory where a file is expected and the reverse": WRONG_KIND,
	"binary and non-UTF-8 content": CONTENT,
	"non-existent paths": MISSING,
	"overwriting what was never read": UNREAD,
	"edit anchors": EDIT_SEMANTICS,
	"patterns, offsets, limits, timeouts": RANGES,
	"unknown tools": UNKNOWN,
};

let tree: Tree;
let session: Session;

beforeEach(async () => {
	tree = await makeTree();
	session = await Session.create({
		root: tree.root,
		allowRead: [tree.ro],
		home: tree.outside,
		spillDir: tree.spill,
	});
});

afterEach(async () => {
	await session?.close();
	await removeDir(tree?.base);
	await removeDir(tree?.spill);
});

async function expectRefused(c: Case): Promise<void> {
	const args = typeof c.args === "function" ? (c.args as () => unknown)() : c.args;
	const before = await snapshotTree(tree.base);
	const r = await session.call(c.tool, args);
	const after = await snapshotTree(tree.base);
	expectFailure(r, c.code);
	if (c.mentions && !r.ok) expect(r.error.message).toContain(c.mentions);
	expectSameTree(after, before);
}

for (const [group, cases] of Object.entries(GROUPS)) {
	describe(group, () => {
		for (const c of cases) {
			it(c.name, async () => {
				await expectRefused(c);
			});
		}
	});
}

describe("special files", () => {
	let special: Tree;
	let s: Session;
	beforeEach(async () => {
		special = await makeTree({ special: true });
		s = await Session.create({ root: special.root, spillDir: special.spill });
	});
	afterEach(async () => {
		await s?.close();
		await removeDir(special?.base);
		await removeDir(special?.spill);
	});

	const cases: Case[] = [
		{ name: "read: a FIFO", tool: "read", args: { path: "fifo" }, code: "NOT_A_FILE" },
		{
			name: "edit: a FIFO",
			tool: "edit",
			args: { path: "fifo", edits: [{ oldText: "a", newText: "b" }] },
			code: "NOT_A_FILE",
		},
		{ name: "write: over a FIFO", tool: "write", args: { path: "fifo", content: "x" }, code: "NOT_A_FILE" },
		{ name: "read: a symlink loop", tool: "read", args: { path: "loop" }, code: "PATH_LOOP" },
		{ name: "write: a symlink loop", tool: "write", args: { path: "loop", content: "x" }, code: "PATH_LOOP" },
		{ name: "ls: a symlink loop", tool: "ls", args: { path: "loop" }, code: "PATH_LOOP" },
	];
	for (const c of cases) {
		it(c.name, async () => {
			const before = await snapshotTree(special.base);
			const r = await s.call(c.tool, c.args);
			expectFailure(r, c.code);
			expectSameTree(await snapshotTree(special.base), before);
		});
	}
});

describe("closed sessions and profiles", () => {
	it("a closed session refuses calls without touching disk", async () => {
		const s = await Session.create({ root: tree.root, spillDir: tree.spill });
		await s.close();
		const before = await snapshotTree(tree.base);
		expectFailure(await s.call("write", { path: "late.txt", content: "x" }), "BACKEND_UNAVAILABLE");
		expectSameTree(await snapshotTree(tree.base), before);
	});

	it("a tool left out of the palette is unknown", async () => {
		const s = await Session.create({ root: tree.root, spillDir: tree.spill, disabledTools: ["write"] });
		try {
			const before = await snapshotTree(tree.base);
			expectFailure(await s.call("write", { path: "x.txt", content: "x" }), "UNKNOWN_TOOL");
			expectSameTree(await snapshotTree(tree.base), before);
		} finally {
			await s.close();
		}
	});

	it("the unified profile has no pi write tool", async () => {
		const s = await Session.create({ root: tree.root, spillDir: tree.spill, profile: "unified" });
		try {
			expectFailure(await s.call("write", { path: "x.txt", content: "x" }), "UNKNOWN_TOOL");
		} finally {
			await s.close();
		}
	});

	it("an aborted signal refuses the call before anything runs", async () => {
		const before = await snapshotTree(tree.base);
		const r = await session.call("bash", { command: "touch ran" }, { signal: AbortSignal.abort() });
		expectFailure(r, "ABORTED");
		expectSameTree(await snapshotTree(tree.base), before);
	});
});

describe("inputs that look odd but must succeed", () => {
	it("write: 20 MB of content round-trips byte-exact", async () => {
		const unit = "line é 😀 \t tab\r\nlf only\n\u0000nul? no: \u0001\u007f ✓\n";
		const content = unit.repeat(Math.ceil((20 * 1024 * 1024) / Buffer.byteLength(unit)));
		expect(Buffer.byteLength(content)).toBeGreaterThanOrEqual(20 * 1024 * 1024);
		const r = await session.call("write", { path: "big/huge.txt", content });
		expect(r.ok).toBe(true);
		const back = await readFile(join(tree.root, "big", "huge.txt"));
		expect(back.equals(Buffer.from(content, "utf8"))).toBe(true);
		expect(textOf(r)).toBe(`Successfully wrote ${back.length} bytes to big/huge.txt`);
	});

	it("read: a PNG comes back as an image content part", async () => {
		const r = await session.call("read", { path: "image.png" });
		if (!r.ok) expect.fail(r.error.message);
		const image = r.content.find((c) => c.type === "image");
		expect(image).toEqual({ type: "image", mimeType: "image/png", data: PNG_1x1.toString("base64") });
		expect(r.content[0]).toEqual({ type: "text", text: "Read image file [image/png]" });
	});

	it("write: empty content creates an empty file", async () => {
		const r = await session.call("write", { path: "blank.txt", content: "" });
		expect(textOf(r)).toBe("Successfully wrote 0 bytes to blank.txt");
		expect((await stat(join(tree.root, "blank.txt"))).size).toBe(0);
	});

	it("edit: empty newText deletes the anchor", async () => {
		const r = await session.call("edit", { path: "a.txt", edits: [{ oldText: "beta\n", newText: "" }] });
		expect(r.ok).toBe(true);
		expect(await readFile(join(tree.root, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
	});

	it("ls, find and grep: an empty path means the workspace root (as in pi)", async () => {
		expect(textOf(await session.call("ls", { path: "" }))).toContain("a.txt");
		expect(textOf(await session.call("find", { pattern: "a.txt", path: "" }))).toBe("a.txt");
		expect(textOf(await session.call("grep", { pattern: "gamma", path: "" }))).toBe("a.txt:3: gamma");
	});

	it("grep: a pattern that is an invalid regex works with literal: true", async () => {
		await session.call("write", { path: "paren.txt", content: "call(alpha\n" });
		expect(textOf(await session.call("grep", { pattern: "(alpha", literal: true, path: "paren.txt" }))).toBe(
			"paren.txt:1: call(alpha",
		);
	});

	it("read: a read-only root can be read", async () => {
		expect(textOf(await session.call("read", { path: "../ro/ro.txt" }))).toBe("read only");
	});
});
