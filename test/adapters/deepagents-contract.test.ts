/**
 * What a deepagents sandbox backend owes its agent, checked on KeelSandbox as a table. deepagents
 * keeps its backend conformance suite in its source repository, not on npm, so keel states the
 * same behaviours here in its own rows: each row makes a directory of its own in a real temp
 * workspace, puts files there through the sandbox (or on disk, for what was there before the
 * session), makes one call through deepagents' own protocol adapter, and checks the answer and the
 * files on disk.
 *
 * Where the contract and keel's promises differ, keel's win and the row says so: a path outside
 * the workspace is refused, an existing file the session has not read is not overwritten, and bytes
 * that are not UTF-8 text are not uploaded. Most edit rows are in langchain.test.ts's edit table.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	adaptSandboxProtocol,
	type FileDownloadResponse,
	type GlobResult,
	type GrepResult,
	isSandboxBackend,
	type LsResult,
	type MaybePromise,
	type SandboxBackendProtocolV2,
} from "deepagents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeelSandbox } from "../../src/adapters/langchain/index.js";
import { createSession, type Session } from "../../src/index.js";
import { PNG_1x1 } from "./helpers.js";

/** The sandbox under test as deepagents holds it, and the row's own directory. */
interface Ctx {
	sandbox: SandboxBackendProtocolV2 & Pick<KeelSandbox, "uploadFiles" | "downloadFiles">;
	/** A path in the row's directory, absolute. */
	at: (name: string) => string;
	/** A path outside every root. */
	outside: string;
}

interface Row {
	behaviour: string;
	/** Files written through the sandbox before the call (name in the row's directory → text). */
	written?: Record<string, string>;
	/** Files or empty directories (a name ending in "/") put on disk before the call. */
	onDisk?: Record<string, string | Uint8Array>;
	call: (c: Ctx) => unknown;
	/** The answer, as a pattern for toMatchObject (arrays must match in length and order), or a check. */
	expected: object | ((answer: never, c: Ctx) => void);
	/** Files on disk afterwards: their text, their bytes, or null for "does not exist". */
	after?: Record<string, string | Uint8Array | null>;
	/** The row's path outside the roots (Ctx.outside) must still not exist afterwards. */
	outsideUntouched?: true;
}

const lines = (n: number, from = 1, text = (i: number) => `row ${i}`) =>
	Array.from({ length: n }, (_, i) => text(i + from)).join("\n");
const sorted = <T extends { path: string }>(xs: T[] | undefined) =>
	[...(xs ?? [])].sort((a, b) => a.path.localeCompare(b.path));
const str = (pattern: RegExp) => expect.stringMatching(pattern);
const NO_ERROR = { error: undefined };

/**
 * toMatchObject, except that a key expected as undefined must be absent or undefined in the answer
 * (deepagents tells success from failure by a missing `error`), and arrays are matched element by
 * element with the same rule.
 */
function matches(answer: unknown, expected: unknown): void {
	if (Array.isArray(expected)) {
		expect(answer).toHaveLength(expected.length);
		for (const [i, e] of expected.entries()) matches((answer as unknown[])[i], e);
		return;
	}
	// A value or an asymmetric matcher (expect.stringMatching) compares whole.
	if (typeof expected !== "object" || expected === null || "asymmetricMatch" in expected) {
		expect(answer).toEqual(expected);
		return;
	}
	const present = Object.entries(expected as object).filter(([, v]) => v !== undefined);
	for (const [key, v] of Object.entries(expected as object)) {
		if (v === undefined) expect((answer as Record<string, unknown>)[key], key).toBeUndefined();
	}
	expect(answer).toMatchObject(Object.fromEntries(present));
}

const EXECUTE: Row[] = [
	{
		behaviour: "a command's output, exit status 0, not truncated",
		call: ({ sandbox }) => sandbox.execute("echo keel-says-hi"),
		expected: { output: "keel-says-hi", exitCode: 0, truncated: false },
	},
	{
		behaviour: "a non-zero exit status is the command's own",
		call: ({ sandbox }) => sandbox.execute("exit 42"),
		expected: { exitCode: 42 },
	},
	{
		behaviour: "every line of multi-line output",
		call: ({ sandbox }) => sandbox.execute("printf 'one\\ntwo\\nthree\\n'"),
		expected: { output: "one\ntwo\nthree", exitCode: 0 },
	},
	{
		behaviour: "stderr is part of the output",
		call: ({ sandbox }) => sandbox.execute("echo to-stderr >&2"),
		expected: { output: str(/to-stderr/), exitCode: 0 },
	},
	{
		behaviour: "a variable exported earlier in the command is seen later in it",
		call: ({ sandbox }) => sandbox.execute("export KEEL_ROW=exported && echo $KEEL_ROW"),
		expected: { output: "exported", exitCode: 0 },
	},
	{
		behaviour: "a command that does not exist fails with a non-zero status",
		call: ({ sandbox }) => sandbox.execute("keel-no-such-command-7731"),
		expected: (r: { exitCode: number | null }) => expect([0, null]).not.toContain(r.exitCode),
	},
	{
		behaviour: "output beyond keel's bound is cut and says so",
		call: ({ sandbox }) => sandbox.execute("seq 1 200000"),
		expected: { exitCode: 0, truncated: true },
	},
	{
		behaviour: "a script put on disk before the session runs",
		onDisk: { "hello.sh": '#!/bin/sh\necho "from a script"\n' },
		call: ({ sandbox, at }) => sandbox.execute(`sh ${at("hello.sh")}`),
		expected: { output: "from a script", exitCode: 0 },
	},
];

const unicode = "keel \u{1F6A2} \u8239 \u03BA\u03B5\u03BB\nna\u00EFve \u0915\u093F \u{1F9ED}";
const special =
	"env $PATH, run `uname`, sub $(whoami) and ~user\n\tindented\nslash \\ 'single' \"double\" !bang";
const thousand = lines(1000);

const WRITE: Row[] = [
	{
		behaviour: "a new file, its path given back",
		call: ({ sandbox, at }) => sandbox.write(at("new.txt"), "first\nsecond\nthird"),
		expected: (r: { error?: string; path?: string }) =>
			expect(r).toEqual({ path: expect.stringMatching(/\/new\.txt$/), filesUpdate: null }),
		after: { "new.txt": "first\nsecond\nthird" },
	},
	{
		behaviour: "missing parent directories are made",
		call: ({ sandbox, at }) => sandbox.write(at("a/b/c/d/deep.txt"), "deep"),
		expected: NO_ERROR,
		after: { "a/b/c/d/deep.txt": "deep" },
	},
	{
		behaviour: "a file this session wrote can be written again",
		written: { "twice.txt": "first version" },
		call: ({ sandbox, at }) => sandbox.write(at("twice.txt"), "second version"),
		expected: NO_ERROR,
		after: { "twice.txt": "second version" },
	},
	{
		behaviour: "keel: a file that was there before and was never read is not overwritten",
		onDisk: { "theirs.txt": "not yours\n" },
		call: ({ sandbox, at }) => sandbox.write(at("theirs.txt"), "clobbered"),
		expected: { error: str(/NOT_READ/) },
		after: { "theirs.txt": "not yours\n" },
	},
	{
		behaviour: "shell metacharacters, tabs and backslashes are kept as written",
		call: ({ sandbox, at }) => sandbox.write(at("special.txt"), special),
		expected: NO_ERROR,
		after: { "special.txt": special },
	},
	{
		behaviour: "an empty file",
		call: ({ sandbox, at }) => sandbox.write(at("empty.txt"), ""),
		expected: NO_ERROR,
		after: { "empty.txt": "" },
	},
	{
		behaviour: "spaces in directory and file names",
		call: ({ sandbox, at }) => sandbox.write(at("dir with spaces/file name.txt"), "spaced"),
		expected: NO_ERROR,
		after: { "dir with spaces/file name.txt": "spaced" },
	},
	{
		behaviour: "unicode text",
		call: ({ sandbox, at }) => sandbox.write(at("unicode.txt"), unicode),
		expected: NO_ERROR,
		after: { "unicode.txt": unicode },
	},
	{
		behaviour: "repeated slashes in the path are one",
		call: ({ sandbox, at }) => sandbox.write(`${at("slashes")}//sub///file.txt`, "slashed"),
		expected: NO_ERROR,
		after: { "slashes/sub/file.txt": "slashed" },
	},
	{
		behaviour: "a thousand lines",
		call: ({ sandbox, at }) => sandbox.write(at("long.txt"), thousand),
		expected: NO_ERROR,
		after: { "long.txt": thousand },
	},
	{
		behaviour: "newlines only",
		call: ({ sandbox, at }) => sandbox.write(at("newlines.txt"), "\n\n\n\n\n"),
		expected: NO_ERROR,
		after: { "newlines.txt": "\n\n\n\n\n" },
	},
	{
		behaviour: "keel: a path outside the workspace is refused and nothing is made there",
		call: ({ sandbox, outside }) => sandbox.write(join(outside, "escape.txt"), "out"),
		expected: { error: str(/PATH_OUTSIDE_ROOTS/) },
		outsideUntouched: true,
	},
];

const READ: Row[] = [
	{
		behaviour: "every line of a short file",
		written: { "three.txt": "mast\nsail\nrudder" },
		call: ({ sandbox, at }) => sandbox.read(at("three.txt")),
		expected: { content: "mast\nsail\nrudder", error: undefined },
	},
	{
		behaviour: "a missing file is an error that says not found",
		call: ({ sandbox, at }) => sandbox.read(at("absent.txt")),
		expected: { error: str(/not found/i) },
	},
	{
		behaviour: "an empty file reads without an error",
		written: { "empty.txt": "" },
		call: ({ sandbox, at }) => sandbox.read(at("empty.txt")),
		expected: NO_ERROR,
	},
	{
		behaviour: "offset skips that many lines",
		written: { "ten.txt": lines(10) },
		call: ({ sandbox, at }) => sandbox.read(at("ten.txt"), 5),
		expected: { content: lines(5, 6) },
	},
	{
		behaviour: "limit keeps that many lines, and says where to go on",
		written: { "hundred.txt": lines(100) },
		call: ({ sandbox, at }) => sandbox.read(at("hundred.txt"), 0, 5),
		expected: { content: lines(5), nextOffset: 5 },
	},
	{
		behaviour: "offset and limit together",
		written: { "twenty.txt": lines(20) },
		call: ({ sandbox, at }) => sandbox.read(at("twenty.txt"), 10, 5),
		expected: { content: lines(5, 11), nextOffset: 15 },
	},
	{
		behaviour: "unicode text reads back as written",
		written: { "unicode.txt": unicode },
		call: ({ sandbox, at }) => sandbox.read(at("unicode.txt")),
		expected: { content: unicode },
	},
	{
		behaviour: "a very long line does not stop the lines around it",
		written: { "wide.txt": `short before\n${"x".repeat(4096)}\nshort after` },
		call: ({ sandbox, at }) => sandbox.read(at("wide.txt")),
		expected: { error: undefined, content: str(/^short before\nx{100}[\s\S]*\nshort after$/) },
	},
	{
		behaviour: "limit 0 gives no lines",
		written: { "three.txt": "mast\nsail\nrudder" },
		call: ({ sandbox, at }) => sandbox.read(at("three.txt"), 0, 0),
		expected: { content: "" },
	},
	{
		behaviour: "an offset past the end gives no lines",
		written: { "three.txt": "mast\nsail\nrudder" },
		call: ({ sandbox, at }) => sandbox.read(at("three.txt"), 100, 10),
		expected: { content: "" },
	},
	{
		behaviour: "an offset at the end gives no lines",
		written: { "five.txt": lines(5) },
		call: ({ sandbox, at }) => sandbox.read(at("five.txt"), 5, 10),
		expected: { content: "" },
	},
	{
		behaviour: "a thousand lines read in pages: first, middle, last",
		written: { "long.txt": thousand },
		call: async ({ sandbox, at }) =>
			Promise.all([0, 500, 900].map((offset) => sandbox.read(at("long.txt"), offset, 100))),
		expected: [
			{ content: lines(100, 1), nextOffset: 100 },
			{ content: lines(100, 501), nextOffset: 600 },
			{ content: lines(100, 901) },
		],
	},
	{
		behaviour: "a file put on disk before the session",
		onDisk: { "before.txt": "there before\n" },
		call: ({ sandbox, at }) => sandbox.read(at("before.txt")),
		expected: { content: str(/^there before\n?$/) },
	},
];

/** An ls or glob answer's entries, sorted by path, with only path and is_dir. */
async function entries(answer: MaybePromise<LsResult | GlobResult>) {
	const r = await answer;
	return { error: r.error, files: sorted(r.files).map((f) => ({ path: f.path, is_dir: Boolean(f.is_dir) })) };
}
const file = (path: string) => ({ path, is_dir: false });
const folder = (path: string) => ({ path, is_dir: true });

const LS: Row[] = [
	{
		behaviour: "entries by absolute path",
		written: { "only.txt": "x" },
		call: ({ sandbox, at }) => entries(sandbox.ls(at("."))),
		expected: (r, { at }) => expect(r).toEqual({ error: undefined, files: [file(at("only.txt"))] }),
	},
	{
		behaviour: "files and directories, told apart",
		written: { "one.txt": "1", "two.txt": "2" },
		onDisk: { "sub/": "" },
		call: ({ sandbox, at }) => entries(sandbox.ls(at("."))),
		expected: (r, { at }) =>
			expect(r).toEqual({
				error: undefined,
				files: [file(at("one.txt")), folder(at("sub")), file(at("two.txt"))],
			}),
	},
	{
		behaviour: "an empty directory has no entries",
		call: ({ sandbox, at }) => sandbox.ls(at(".")),
		expected: { error: undefined, files: [] },
	},
	{
		behaviour: "a directory that does not exist has no entries, and is no error",
		call: ({ sandbox, at }) => sandbox.ls(at("nowhere")),
		expected: { error: undefined, files: [] },
	},
	{
		behaviour: "hidden files are listed",
		written: { ".hidden": "h", "shown.txt": "s" },
		call: ({ sandbox, at }) => entries(sandbox.ls(at("."))),
		expected: (r, { at }) =>
			expect(r).toEqual({ error: undefined, files: [file(at(".hidden")), file(at("shown.txt"))] }),
	},
	{
		behaviour: "spaces, unicode and punctuation in names",
		written: {
			"a file.txt": "x",
			"\u822A\u6D77.txt": "x",
			"\u0444\u0430\u0439\u043B.txt": "x",
			"f(1)-[2].txt": "x",
		},
		onDisk: { "a dir/": "" },
		call: ({ sandbox, at }) => entries(sandbox.ls(at("."))),
		expected: (r, { at }) =>
			expect(r).toEqual({
				error: undefined,
				files: sorted([
					folder(at("a dir")),
					file(at("a file.txt")),
					file(at("f(1)-[2].txt")),
					file(at("\u822A\u6D77.txt")),
					file(at("\u0444\u0430\u0439\u043B.txt")),
				]),
			}),
	},
	{
		behaviour: "fifty entries, all of them",
		onDisk: Object.fromEntries(
			Array.from({ length: 50 }, (_, i) => [`f${String(i).padStart(3, "0")}.txt`, "x"]),
		),
		call: ({ sandbox, at }) => entries(sandbox.ls(at("."))),
		expected: (r, { at }) =>
			expect(r).toEqual({
				error: undefined,
				files: Array.from({ length: 50 }, (_, i) => file(at(`f${String(i).padStart(3, "0")}.txt`))),
			}),
	},
	{
		behaviour: "a trailing slash lists the same directory",
		written: { "only.txt": "x" },
		call: ({ sandbox, at }) => entries(sandbox.ls(`${at(".")}/`)),
		expected: (r, { at }) => expect(r).toEqual({ error: undefined, files: [file(at("only.txt"))] }),
	},
	{
		behaviour: "keel: a directory outside the workspace is refused",
		call: ({ sandbox }) => sandbox.ls(tmpdir()),
		expected: { error: str(/PATH_OUTSIDE_ROOTS/) },
	},
];

/** A grep answer's matches sorted by path and line. */
async function found(answer: MaybePromise<GrepResult>) {
	const r = await answer;
	const matches = [...(r.matches ?? [])].sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line);
	return { error: r.error, matches };
}
const hit = (path: string, line: number, text: string) => ({ path, line, text });

const GREP: Row[] = [
	{
		behaviour: "a literal across files: absolute path, line and text of each match",
		written: { "f1.txt": "ahoy deck\nbelow deck", "f2.txt": "ahoy port\nbelow port" },
		call: ({ sandbox, at }) => found(sandbox.grep("ahoy", at("."))),
		expected: (r, { at }) =>
			expect(r).toEqual({
				error: undefined,
				matches: [hit(at("f1.txt"), 1, "ahoy deck"), hit(at("f2.txt"), 1, "ahoy port")],
			}),
	},
	{
		behaviour: "a glob narrows the files searched",
		written: { "t.txt": "needle", "t.py": "needle", "t.md": "needle" },
		call: ({ sandbox, at }) => found(sandbox.grep("needle", at("."), "*.py")),
		expected: (r, { at }) => expect(r).toEqual({ error: undefined, matches: [hit(at("t.py"), 1, "needle")] }),
	},
	{
		behaviour: "no match is an empty list, not an error",
		written: { "f.txt": "calm sea" },
		call: ({ sandbox, at }) => sandbox.grep("absent_text", at(".")),
		expected: { error: undefined, matches: [] },
	},
	{
		behaviour: "every matching line of one file, numbered from 1",
		written: { "fruit.txt": "knot\nhitch\nknot\nbend\nknot" },
		call: async ({ sandbox, at }) => (await found(sandbox.grep("knot", at(".")))).matches.map((m) => m.line),
		expected: [1, 3, 5],
	},
	{
		behaviour: "the pattern is a literal: a dot matches only a dot",
		written: { "f.txt": "abc\na.c\n" },
		call: ({ sandbox, at }) => found(sandbox.grep("a.c", at("."))),
		expected: (r, { at }) => expect(r).toEqual({ error: undefined, matches: [hit(at("f.txt"), 2, "a.c")] }),
	},
	{
		behaviour: "regex and shell metacharacters are literals",
		written: { "f.txt": 'cost: $42\nroute: /opt/x\nglob: (b|c)+?\nsaid: it\'s "so" `now`' },
		call: async ({ sandbox, at }) =>
			Promise.all(
				["$42", "(b|c)+?", 'it\'s "so" `now`'].map(async (p) =>
					(await found(sandbox.grep(p, at(".")))).matches.map((m) => m.line),
				),
			),
		expected: [[1], [3], [4]],
	},
	{
		behaviour: "unicode patterns",
		written: { "u.txt": "port \u6E2F\u53E3\n\u03BB\u03B9\u03BC\u03AC\u03BD\u03B9\n" },
		call: ({ sandbox, at }) => found(sandbox.grep("\u6E2F\u53E3", at("."))),
		expected: (r, { at }) =>
			expect(r).toEqual({ error: undefined, matches: [hit(at("u.txt"), 1, "port \u6E2F\u53E3")] }),
	},
	{
		behaviour: "case-sensitive",
		written: { "c.txt": "Keel\nkeel\nKEEL" },
		call: async ({ sandbox, at }) => (await found(sandbox.grep("Keel", at(".")))).matches.map((m) => m.line),
		expected: [1],
	},
	{
		behaviour: "an empty directory has no matches",
		call: ({ sandbox, at }) => sandbox.grep("anything", at(".")),
		expected: { error: undefined, matches: [] },
	},
	{
		behaviour: "subdirectories are searched",
		written: { "top.txt": "deep_needle", "s1/one.txt": "deep_needle", "s1/s2/two.txt": "deep_needle" },
		call: async ({ sandbox, at }) =>
			(await found(sandbox.grep("deep_needle", at(".")))).matches.map((m) => m.path),
		expected: (r, { at }) => expect(r).toEqual([at("s1/one.txt"), at("s1/s2/two.txt"), at("top.txt")]),
	},
	{
		behaviour: "the line number deep in a file",
		written: { "long.txt": lines(100, 1, (i) => `buoy ${i}`) },
		call: ({ sandbox, at }) => found(sandbox.grep("buoy 50", at("."))),
		expected: (r, { at }) =>
			expect(r).toEqual({ error: undefined, matches: [hit(at("long.txt"), 50, "buoy 50")] }),
	},
	{
		behaviour: "a file given as the path",
		written: { "one.txt": "x needle", "two.txt": "needle" },
		call: ({ sandbox, at }) => found(sandbox.grep("needle", at("one.txt"))),
		expected: (r, { at }) =>
			expect(r).toEqual({ error: undefined, matches: [hit(at("one.txt"), 1, "x needle")] }),
	},
	{
		behaviour: "keel: a directory outside the workspace is refused",
		call: ({ sandbox }) => sandbox.grep("root", "/etc"),
		expected: { error: str(/PATH_OUTSIDE_ROOTS/) },
	},
];

const GLOB: Row[] = [
	{
		behaviour: "a wildcard, paths relative to the directory searched",
		written: { "f1.txt": "x", "f2.txt": "x", "f3.py": "x" },
		call: ({ sandbox, at }) => entries(sandbox.glob("*.txt", at("."))),
		expected: { error: undefined, files: [file("f1.txt"), file("f2.txt")] },
	},
	{
		behaviour: "** reaches subdirectories",
		written: { "root.txt": "x", "s1/n1.txt": "x", "s2/n2.txt": "x", "s2/n2.md": "x" },
		call: async ({ sandbox, at }) =>
			(await entries(sandbox.glob("**/*.txt", at(".")))).files.map((f) => f.path),
		expected: (r: string[]) => expect(r).toEqual(expect.arrayContaining(["s1/n1.txt", "s2/n2.txt"])),
	},
	{
		behaviour: "no match is an empty list, not an error",
		written: { "f.txt": "x" },
		call: ({ sandbox, at }) => sandbox.glob("*.py", at(".")),
		expected: { error: undefined, files: [] },
	},
	{
		behaviour: "directories match too, marked as directories",
		written: { "f.txt": "x" },
		onDisk: { "d1/": "", "d2/": "" },
		call: ({ sandbox, at }) => entries(sandbox.glob("*", at("."))),
		expected: { error: undefined, files: [folder("d1"), folder("d2"), file("f.txt")] },
	},
	{
		behaviour: "hidden files match a pattern that starts with a dot",
		written: { ".h1": "x", ".h2": "x", "shown.txt": "x" },
		call: ({ sandbox, at }) => entries(sandbox.glob(".*", at("."))),
		expected: { error: undefined, files: [file(".h1"), file(".h2")] },
	},
	{
		behaviour: "character classes",
		written: { "log1.md": "x", "log2.md": "x", "log3.md": "x", "logB.md": "x" },
		call: ({ sandbox, at }) => entries(sandbox.glob("log[1-2].md", at("."))),
		expected: { error: undefined, files: [file("log1.md"), file("log2.md")] },
	},
	{
		behaviour: "? is exactly one character",
		written: { "v1.ts": "x", "v2.ts": "x", "v12.ts": "x" },
		call: ({ sandbox, at }) => entries(sandbox.glob("v?.ts", at("."))),
		expected: { error: undefined, files: [file("v1.ts"), file("v2.ts")] },
	},
	{
		behaviour: "a name deep down",
		written: { "a/b/c/d/deep.txt": "x", "a/b/other.txt": "x" },
		call: ({ sandbox, at }) => entries(sandbox.glob("**/deep.txt", at("."))),
		expected: { error: undefined, files: [file("a/b/c/d/deep.txt")] },
	},
	{
		behaviour: "keel: a directory outside the workspace is refused",
		call: ({ sandbox }) => sandbox.glob("*", "/etc"),
		expected: { error: str(/PATH_OUTSIDE_ROOTS/) },
	},
];

const utf8 = (text: string) => new TextEncoder().encode(text);
/** Bytes as a latin1 string: one character a byte, so a failing comparison shows readable text. */
const latin1 = (bytes: Uint8Array | string) =>
	Buffer.from(typeof bytes === "string" ? utf8(bytes) : bytes).toString("latin1");
/** A download's outcome: its path, its error and its bytes (as latin1). */
async function downloaded(answer: MaybePromise<FileDownloadResponse[]>) {
	return (await answer).map((d) => ({
		path: d.path,
		error: d.error,
		content: d.content && latin1(d.content),
	}));
}
const ALL_BYTES = new Uint8Array(Array.from({ length: 256 }, (_, i) => i));

/** Files a download gives back byte for byte, whatever their line ends or encoding. */
const EXACT: Array<[string, string | Uint8Array]> = [
	["one line", "just one line"],
	["several lines", "one\ntwo\nthree"],
	["an empty file", ""],
	["a 4096-character line", `before\n${"y".repeat(4096)}\nafter`],
	["5000 lines (more than one read page)", lines(5000)],
	["unicode", unicode],
	["a final newline", "one\ntwo\n"],
	["CRLF line ends", "one\r\ntwo\r\n"],
	["blank lines only", "\n\n\n"],
	["Latin-1 text", new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a])],
	["every byte value", ALL_BYTES],
];

const FILES: Row[] = [
	{
		behaviour: "upload: one file, its path given back, no error",
		call: ({ sandbox, at }) => sandbox.uploadFiles([[at("up.txt"), utf8("uploaded text")]]),
		expected: (r, { at }) => expect(r).toEqual([{ path: at("up.txt"), error: null }]),
		after: { "up.txt": "uploaded text" },
	},
	{
		behaviour: "upload: several files at once, into new directories",
		call: ({ sandbox, at }) =>
			sandbox.uploadFiles([
				[at("m1.txt"), utf8("one")],
				[at("sub/m2.txt"), utf8("two")],
				[at("sub/deeper/m3.txt"), utf8("three")],
			]),
		expected: [{ error: null }, { error: null }, { error: null }],
		after: { "m1.txt": "one", "sub/m2.txt": "two", "sub/deeper/m3.txt": "three" },
	},
	{
		behaviour: "keel: upload of bytes that are not UTF-8 text is refused, nothing written",
		call: ({ sandbox, at }) => sandbox.uploadFiles([[at("bin.dat"), ALL_BYTES]]),
		expected: [{ error: str(/^(invalid_path|permission_denied)$/) }],
		after: { "bin.dat": null },
	},
	{
		behaviour: "keel: upload over a file there before, never read, is refused",
		onDisk: { "theirs.txt": "keep me\n" },
		call: ({ sandbox, at }) => sandbox.uploadFiles([[at("theirs.txt"), utf8("clobbered")]]),
		expected: [{ error: "permission_denied" }],
		after: { "theirs.txt": "keep me\n" },
	},
	{
		behaviour: "keel: upload outside the workspace is refused, nothing made there",
		call: ({ sandbox, outside }) => sandbox.uploadFiles([[join(outside, "escape.txt"), utf8("out")]]),
		expected: [{ error: "permission_denied" }],
		outsideUntouched: true,
	},
	{
		behaviour: "download: a file written through the sandbox",
		written: { "down.txt": "download me" },
		call: ({ sandbox, at }) => downloaded(sandbox.downloadFiles([at("down.txt")])),
		expected: (r, { at }) =>
			expect(r).toEqual([{ path: at("down.txt"), error: null, content: "download me" }]),
	},
	{
		behaviour: "download: a missing file is file_not_found",
		call: ({ sandbox, at }) => downloaded(sandbox.downloadFiles([at("absent.txt")])),
		expected: (r, { at }) =>
			expect(r).toEqual([{ path: at("absent.txt"), error: "file_not_found", content: null }]),
	},
	{
		behaviour: "download: a file there before the session, with a missing one beside it",
		onDisk: { "before.txt": "there before\n" },
		call: ({ sandbox, at }) => downloaded(sandbox.downloadFiles([at("before.txt"), at("absent.txt")])),
		expected: [
			{ error: null, content: "there before\n" },
			{ error: "file_not_found", content: null },
		],
	},
	...EXACT.map(
		([what, text]): Row => ({
			behaviour: `download gives back the bytes on disk: ${what}`,
			onDisk: { "f.txt": text },
			call: ({ sandbox, at }) => downloaded(sandbox.downloadFiles([at("f.txt")])),
			expected: [{ error: null, content: latin1(text) }],
		}),
	),
	{
		behaviour: "download gives back an image's bytes",
		onDisk: { "pixel.png": PNG_1x1 },
		call: ({ sandbox, at }) => downloaded(sandbox.downloadFiles([at("pixel.png")])),
		expected: [{ error: null, content: latin1(new Uint8Array(PNG_1x1)) }],
	},
	{
		behaviour: "download of a directory is is_directory",
		onDisk: { "sub/": "" },
		call: ({ sandbox, at }) => downloaded(sandbox.downloadFiles([at("sub")])),
		expected: [{ error: "is_directory", content: null }],
	},
	{
		behaviour: "keel: download from outside the workspace is refused",
		call: ({ sandbox }) => downloaded(sandbox.downloadFiles(["/etc/passwd"])),
		expected: [{ error: "permission_denied", content: null }],
	},
];

/** What langchain.test.ts's edit table leaves out. */
const EDIT: Row[] = [
	{
		behaviour: "$ sequences in the new text are written as they are",
		written: { "price.txt": "fare: $7.50\n" },
		call: ({ sandbox, at }) => sandbox.edit(at("price.txt"), "$7.50", "$9.25 $& $1 $$"),
		expected: { error: undefined, occurrences: 1 },
		after: { "price.txt": "fare: $9.25 $& $1 $$\n" },
	},
	{
		behaviour: "the lines around an edit keep their ends, the final newline too",
		written: { "ends.txt": "bow\nmidships\nstern\n" },
		call: ({ sandbox, at }) => sandbox.edit(at("ends.txt"), "midships", "beam"),
		expected: { error: undefined, occurrences: 1 },
		after: { "ends.txt": "bow\nbeam\nstern\n" },
	},
	{
		behaviour: "keel: a file outside the workspace is refused and left as it was",
		call: async ({ sandbox, outside }) => {
			await mkdir(outside, { recursive: true });
			await writeFile(join(outside, "theirs.txt"), "keep\n");
			const r = await sandbox.edit(join(outside, "theirs.txt"), "keep", "changed");
			return { error: r.error, left: await readFile(join(outside, "theirs.txt"), "utf8") };
		},
		expected: { error: str(/PATH_OUTSIDE_ROOTS/), left: "keep\n" },
	},
];

const WORKFLOW: Row[] = [
	{
		behaviour: "write, read, edit, read again",
		call: async ({ sandbox, at }) => {
			const written = await sandbox.write(at("flow.txt"), "draft log entry");
			const first = await sandbox.read(at("flow.txt"));
			const edited = await sandbox.edit(at("flow.txt"), "draft", "final");
			const second = await sandbox.read(at("flow.txt"));
			return [written.error, first.content, edited.occurrences, second.content];
		},
		expected: [undefined, "draft log entry", 1, "final log entry"],
		after: { "flow.txt": "final log entry" },
	},
	{
		behaviour: "a tree made through the sandbox, seen by ls, glob and grep",
		written: { "root.txt": "cargo a", "s1/f1.txt": "cargo b", "s1/f2.py": "cargo c", "s2/f3.txt": "cargo d" },
		call: async ({ sandbox, at }) => ({
			ls: (await entries(sandbox.ls(at(".")))).files,
			glob: (await entries(sandbox.glob("**/*.txt", at(".")))).files.map((f) => f.path),
			grep: (await found(sandbox.grep("cargo", at(".")))).matches.length,
		}),
		expected: (r, { at }) =>
			expect(r).toEqual({
				ls: [file(at("root.txt")), folder(at("s1")), folder(at("s2"))],
				glob: ["root.txt", "s1/f1.txt", "s2/f3.txt"],
				grep: 4,
			}),
	},
];

const ROWS = { EXECUTE, WRITE, READ, EDIT, LS, GREP, GLOB, FILES, WORKFLOW };

describe("KeelSandbox meets deepagents' sandbox contract", () => {
	let dir: string;
	let outsideDir: string;
	let session: Session;
	let keel: KeelSandbox;
	let sandbox: Ctx["sandbox"];
	beforeAll(async () => {
		dir = await mkdtemp(join(tmpdir(), "keel-da-contract-"));
		outsideDir = await mkdtemp(join(tmpdir(), "keel-da-outside-"));
		session = await createSession({ root: dir, profile: "unified" });
		keel = new KeelSandbox(session);
		sandbox = Object.assign(adaptSandboxProtocol(keel), {
			uploadFiles: (files: Array<[string, Uint8Array]>) => keel.uploadFiles(files),
			downloadFiles: (paths: string[]) => keel.downloadFiles(paths),
		});
	});
	afterAll(async () => {
		await session.close();
		await rm(dir, { recursive: true, force: true });
		await rm(outsideDir, { recursive: true, force: true });
	});

	it("deepagents takes KeelSandbox for a sandbox backend with an id", () => {
		expect(isSandboxBackend(keel)).toBe(true);
		expect(keel.id).toMatch(/^keel-[0-9a-f]+$/);
		expect(new KeelSandbox(session).id).not.toBe(keel.id);
	});

	const all = Object.entries(ROWS).flatMap(([group, rows]) => rows.map((r, i) => ({ group, i, ...r })));
	it.each(all)("$group: $behaviour", async (row) => {
		const rowDir = join(dir, `${row.group.toLowerCase()}-${row.i}`);
		await mkdir(rowDir, { recursive: true });
		const at = (name: string) => join(rowDir, name);
		const outside = join(outsideDir, `${row.group.toLowerCase()}-${row.i}`);
		for (const [name, content] of Object.entries(row.onDisk ?? {})) {
			if (name.endsWith("/")) await mkdir(at(name), { recursive: true });
			else {
				await mkdir(join(at(name), ".."), { recursive: true });
				await writeFile(at(name), content);
			}
		}
		for (const [name, content] of Object.entries(row.written ?? {})) {
			expect((await sandbox.write(at(name), content)).error, `writing ${name}`).toBeUndefined();
		}
		const ctx = { sandbox, at, outside };
		const answer = await row.call(ctx);
		if (typeof row.expected === "function") (row.expected as (a: unknown, c: Ctx) => void)(answer, ctx);
		else matches(answer, row.expected);
		for (const [name, want] of Object.entries(row.after ?? {})) {
			if (want === null) await expect(stat(at(name)), name).rejects.toThrow(/ENOENT/);
			else if (typeof want === "string") expect(await readFile(at(name), "utf8"), name).toBe(want);
			else expect(new Uint8Array(await readFile(at(name))), name).toEqual(want);
		}
		if (row.outsideUntouched) await expect(stat(outside), "outside").rejects.toThrow(/ENOENT/);
	});

	it("keel: once its session is closed, every method answers an error and none throws", async () => {
		const closing = await createSession({ root: dir, profile: "unified" });
		const gone = new KeelSandbox(closing);
		await closing.close();
		const ran = await gone.execute("echo never");
		expect(ran.exitCode).not.toBe(0);
		expect(ran.output).toMatch(/BACKEND_UNAVAILABLE/);
		for (const r of [
			await gone.read(join(dir, "x.txt")),
			await gone.write(join(dir, "after-close.txt"), "x"),
			await gone.ls(dir),
			await gone.grep("x", dir),
			await gone.glob("*", dir),
		]) {
			expect(r.error).toMatch(/BACKEND_UNAVAILABLE/);
		}
		expect(await gone.downloadFiles([join(dir, "x.txt")])).toEqual([
			{ path: join(dir, "x.txt"), content: null, error: "permission_denied" },
		]);
		await expect(stat(join(dir, "after-close.txt"))).rejects.toThrow(/ENOENT/);
	});
});
