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
 * that are not UTF-8 text are not uploaded. The edit rows live in langchain.test.ts.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adaptSandboxProtocol, isSandboxBackend, type SandboxBackendProtocolV2 } from "deepagents";
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
	call: (c: Ctx) => Promise<unknown>;
	/** The answer, as a pattern for toMatchObject (arrays must match in length and order), or a check. */
	expected: object | ((answer: never) => void);
	/** Files on disk afterwards: their text, their bytes, or null for "does not exist". */
	after?: Record<string, string | Uint8Array | null>;
	/** Files outside the roots that must not exist afterwards. */
	outsideAfter?: "untouched";
}

const lines = (n: number, from = 1, text = (i: number) => `row ${i}`) =>
	Array.from({ length: n }, (_, i) => text(i + from)).join("\n");
const sorted = <T extends { path: string }>(xs: T[] | undefined) =>
	[...(xs ?? [])].sort((a, b) => a.path.localeCompare(b.path));
const str = (pattern: RegExp) => expect.stringMatching(pattern);
const NO_ERROR = { error: undefined };

/**
 * toMatchObject, except that a key expected as undefined must be absent or undefined in the answer
 * (deepagents tells success from failure by a missing `error`).
 */
function matches(answer: unknown, expected: unknown): void {
	if (Array.isArray(expected)) {
		expect(answer).toHaveLength(expected.length);
		expected.forEach((e, i) => matches((answer as unknown[])[i], e));
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

const unicode = "Hello \u{1F44B} \u4E16\u754C \u041F\u0440\u0438\u0432\u0435\u0442\nsecond \u00E9 \u{1F389}";
const special = "Special: $HOME, `date`, $(id)\nTab\there\nBackslash: \\ and 'quotes' \"too\"";
const thousand = lines(1000);

const WRITE: Row[] = [
	{
		behaviour: "a new file, its path given back",
		call: ({ sandbox, at }) => sandbox.write(at("new.txt"), "first\nsecond\nthird"),
		expected: (r: { error?: string; path?: string }) => expect(r).toEqual({ path: expect.stringMatching(/\/new\.txt$/), filesUpdate: null }),
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
		outsideAfter: "untouched",
	},
];

const READ: Row[] = [
	{
		behaviour: "every line of a short file",
		written: { "three.txt": "Line 1\nLine 2\nLine 3" },
		call: ({ sandbox, at }) => sandbox.read(at("three.txt")),
		expected: { content: "Line 1\nLine 2\nLine 3", error: undefined },
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
		written: { "wide.txt": `short before\n${"x".repeat(3000)}\nshort after` },
		call: ({ sandbox, at }) => sandbox.read(at("wide.txt")),
		expected: { error: undefined, content: str(/^short before\nx{100}[\s\S]*\nshort after$/) },
	},
	{
		behaviour: "limit 0 gives no lines",
		written: { "three.txt": "Line 1\nLine 2\nLine 3" },
		call: ({ sandbox, at }) => sandbox.read(at("three.txt"), 0, 0),
		expected: { content: "" },
	},
	{
		behaviour: "an offset past the end gives no lines",
		written: { "three.txt": "Line 1\nLine 2\nLine 3" },
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

export const ROWS = { EXECUTE, WRITE, READ };

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
		const answer = await row.call({ sandbox, at, outside });
		if (typeof row.expected === "function") (row.expected as (a: unknown) => void)(answer);
		else matches(answer, row.expected);
		for (const [name, want] of Object.entries(row.after ?? {})) {
			if (want === null) await expect(stat(at(name)), name).rejects.toThrow(/ENOENT/);
			else if (typeof want === "string") expect(await readFile(at(name), "utf8"), name).toBe(want);
			else expect(new Uint8Array(await readFile(at(name))), name).toEqual(want);
		}
		if (row.outsideAfter) await expect(stat(outside), "outside").rejects.toThrow(/ENOENT/);
	});
});
