/**
 * Positive behaviour pi users rely on, asserted on exact outputs: read paging and its continuation
 * hints, byte truncation, CRLF and BOM handling, edits that keep BOM, line endings and modes, write
 * creating parents, bash exit codes, timeouts, spill files, abort and streaming, ls ordering.
 * Truncation never splits a character.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { chmod, mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import type { Content, ToolResult } from "../../src/tools/types.js";
import { expectFailure, makeTree, removeDir, type Tree, textOf } from "./fixtures.js";

let tree: Tree;
let session: Session;

beforeEach(async () => {
	tree = await makeTree();
	session = await Session.create({ root: tree.root, spillDir: tree.spill });
});

afterEach(async () => {
	await session?.close();
	await removeDir(tree?.base);
	await removeDir(tree?.spill);
});

const put = (rel: string, data: string | Buffer) => writeFile(join(tree.root, rel), data);
const bytesOf = (rel: string) => readFile(join(tree.root, rel));
const modeOf = async (rel: string) => (await stat(join(tree.root, rel))).mode & 0o7777;
const numbered = (from: number, to: number) =>
	Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);
const joinText = (content: Content[]) =>
	content
		.filter((c) => c.type === "text")
		.map((c) => (c as { text: string }).text)
		.join("\n");

/** A shell pipeline printing `char` `count` times on one line, without a newline (fast, unlike ${s// /x}). */
const repeatChar = (char: string, count: number) => `yes '${char}' | head -n ${count} | tr -d '\\n'`;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Polls `check` (bounded number of tries); fails the test when it never holds. */
async function until(
	what: string,
	check: () => boolean | Promise<boolean>,
	tries = 400,
	everyMs = 25,
): Promise<void> {
	for (let i = 0; i < tries; i++) {
		if (await check()) return;
		await new Promise((r) => setTimeout(r, everyMs));
	}
	expect.fail(`timed out waiting for ${what}`);
}

/** True once `pid` is gone. A zombie (killed, waiting for a reaper that may not exist in a container) counts as gone. */
function processGone(pid: number): boolean {
	try {
		process.kill(pid, 0);
	} catch (e) {
		return (e as NodeJS.ErrnoException).code === "ESRCH";
	}
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
	} catch {
		return true;
	}
}

describe("read", () => {
	beforeEach(async () => {
		await put("long.txt", `${numbered(1, 2500).join("\n")}\n`);
	});

	it("stops at 2000 lines with a continuation hint", async () => {
		const r = await session.call("read", { path: "long.txt" });
		expect(textOf(r)).toBe(
			`${numbered(1, 2000).join("\n")}\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]`,
		);
		expect(r.ok && (r.details as { truncation: { truncatedBy: string } }).truncation.truncatedBy).toBe(
			"lines",
		);
	});

	it("continues from the offset to the end without a hint", async () => {
		expect(textOf(await session.call("read", { path: "long.txt", offset: 2001 }))).toBe(
			numbered(2001, 2500).join("\n"),
		);
	});

	it("honours offset and limit and says how many lines remain", async () => {
		expect(textOf(await session.call("read", { path: "long.txt", offset: 10, limit: 5 }))).toBe(
			`${numbered(10, 14).join("\n")}\n\n[2486 more lines in file. Use offset=15 to continue.]`,
		);
		expect(textOf(await session.call("read", { path: "long.txt", limit: 1 }))).toBe(
			"line 1\n\n[2499 more lines in file. Use offset=2 to continue.]",
		);
	});

	it("a limit that reaches the last line gives no hint", async () => {
		expect(textOf(await session.call("read", { path: "long.txt", offset: 2496, limit: 5 }))).toBe(
			numbered(2496, 2500).join("\n"),
		);
		expect(textOf(await session.call("read", { path: "long.txt", offset: 2500, limit: 100 }))).toBe(
			"line 2500",
		);
	});

	it("a limit above 2000 is still capped at 2000 lines", async () => {
		expect(textOf(await session.call("read", { path: "long.txt", offset: 2, limit: 2400 }))).toBe(
			`${numbered(2, 2001).join("\n")}\n\n[Showing lines 2-2001 of 2500. Use offset=2002 to continue.]`,
		);
	});

	for (const [label, unit] of [
		["ASCII", "x".repeat(100)],
		["2-byte é", "é".repeat(50)],
		["4-byte 😀", "😀".repeat(25)],
	] as const) {
		it(`stops at 50KB on a whole line (${label}, never a split character)`, async () => {
			// 100-byte lines: 506 of them (with 505 newlines) are 51105 bytes; 507 would pass 51200.
			await put("wide.txt", `${Array.from({ length: 1000 }, () => unit).join("\n")}\n`);
			const out = textOf(await session.call("read", { path: "wide.txt" }));
			expect(out).toBe(
				`${Array.from({ length: 506 }, () => unit).join("\n")}\n\n[Showing lines 1-506 of 1000 (50.0KB limit). Use offset=507 to continue.]`,
			);
			expect(out).not.toContain("\uFFFD");
		});
	}

	it("a first line over 50KB points at bash instead", async () => {
		await put("oneline.txt", `${"😀".repeat(15000)}\nsecond\n`);
		const r = await session.call("read", { path: "oneline.txt" });
		expect(textOf(r)).toBe(
			"[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' oneline.txt | head -c 51200]",
		);
		expect(textOf(await session.call("read", { path: "oneline.txt", offset: 2 }))).toBe("second");
	});

	it("a CRLF file reads without carriage returns", async () => {
		await put("crlf.txt", "one\r\ntwo\r\nthree\r\n");
		const out = textOf(await session.call("read", { path: "crlf.txt" }));
		expect(out).toBe("one\ntwo\nthree");
		expect(out).not.toContain("\r");
	});

	it("a BOM file reads without the BOM", async () => {
		await put("bom.txt", "\uFEFFhello\r\nworld\n");
		const out = textOf(await session.call("read", { path: "bom.txt" }));
		expect(out).toBe("hello\nworld");
		expect(out.charCodeAt(0)).not.toBe(0xfeff);
	});

	it("an empty file reads as empty text", async () => {
		expect(textOf(await session.call("read", { path: "empty.txt" }))).toBe("");
	});

	it("a file without a final newline keeps its last line", async () => {
		await put("nofinal.txt", "a\nb");
		expect(textOf(await session.call("read", { path: "nofinal.txt" }))).toBe("a\nb");
	});
});

describe("edit", () => {
	it("replaces, reports the diff and the first changed line", async () => {
		await put("f.txt", "one\ntwo\nthree\n");
		const r = await session.call("edit", { path: "f.txt", edits: [{ oldText: "two", newText: "TWO" }] });
		expect(r).toMatchObject({
			ok: true,
			content: [{ type: "text", text: "Successfully replaced 1 block(s) in f.txt." }],
			details: { diff: " 1 one\n-2 two\n+2 TWO\n 3 three", firstChangedLine: 2 },
		});
		expect((await bytesOf("f.txt")).toString()).toBe("one\nTWO\nthree\n");
	});

	it("applies several edits against the original, not one after another", async () => {
		await put("f.txt", "a\nb\nc\n");
		const r = await session.call("edit", {
			path: "f.txt",
			edits: [
				{ oldText: "a", newText: "b" },
				{ oldText: "b", newText: "c" },
			],
		});
		expect(textOf(r)).toBe("Successfully replaced 2 block(s) in f.txt.");
		expect((await bytesOf("f.txt")).toString()).toBe("b\nc\nc\n");
		expect(r.ok && r.details).toMatchObject({ firstChangedLine: 1 });
	});

	it("accepts pi's legacy top-level oldText/newText", async () => {
		await put("f.txt", "keep\nold\n");
		expect((await session.call("edit", { path: "f.txt", oldText: "old", newText: "new" })).ok).toBe(true);
		expect((await bytesOf("f.txt")).toString()).toBe("keep\nnew\n");
	});

	it("keeps a BOM", async () => {
		await put("bom.txt", "\uFEFFhello\nworld\n");
		expect(
			(await session.call("edit", { path: "bom.txt", edits: [{ oldText: "hello", newText: "hi" }] })).ok,
		).toBe(true);
		expect((await bytesOf("bom.txt")).equals(Buffer.from("\uFEFFhi\nworld\n"))).toBe(true);
	});

	it("keeps a BOM and CRLF together", async () => {
		await put("bom.txt", "\uFEFFa\r\nb\r\n");
		expect(
			(await session.call("edit", { path: "bom.txt", edits: [{ oldText: "b", newText: "c" }] })).ok,
		).toBe(true);
		expect((await bytesOf("bom.txt")).equals(Buffer.from("\uFEFFa\r\nc\r\n"))).toBe(true);
	});

	it("keeps CRLF on untouched lines and gives new lines the replaced region's ending", async () => {
		await put("crlf.txt", "a\r\nb\r\nc\r\n");
		const r = await session.call("edit", { path: "crlf.txt", edits: [{ oldText: "b", newText: "x\ny" }] });
		expect(r.ok).toBe(true);
		expect((await bytesOf("crlf.txt")).toString()).toBe("a\r\nx\r\ny\r\nc\r\n");
		// The diff is of the text, not of its line endings.
		expect(r.ok && (r.details as { diff: string }).diff).not.toContain("\r");
	});

	it("matches an LF anchor across CRLF lines and writes CRLF back", async () => {
		await put("crlf.txt", "a\r\nb\r\nc\r\n");
		expect(
			(await session.call("edit", { path: "crlf.txt", edits: [{ oldText: "a\nb", newText: "A\nB" }] })).ok,
		).toBe(true);
		expect((await bytesOf("crlf.txt")).toString()).toBe("A\r\nB\r\nc\r\n");
	});

	describe("mixed line endings: only the edited lines change", () => {
		const original = "l1\r\nl2\nl3\r\nl4\n";
		const cases: Array<[string, string, string, string]> = [
			["a line inside", "l2", "L2", "l1\r\nL2\nl3\r\nl4\n"],
			["a CRLF region grows", "l3\nl4", "X\nY\nZ", "l1\r\nl2\nX\r\nY\r\nZ\n"],
			["an LF region grows", "l2\nl3", "P\nQ\nR", "l1\r\nP\nQ\nR\r\nl4\n"],
			["the first line", "l1", "first", "first\r\nl2\nl3\r\nl4\n"],
			["the last line", "l4", "last", "l1\r\nl2\nl3\r\nlast\n"],
		];
		for (const [label, oldText, newText, expected] of cases) {
			it(label, async () => {
				await put("mixed.txt", original);
				expect((await session.call("edit", { path: "mixed.txt", edits: [{ oldText, newText }] })).ok).toBe(
					true,
				);
				expect((await bytesOf("mixed.txt")).equals(Buffer.from(expected))).toBe(true);
			});
		}

		it("two edits in one call", async () => {
			await put("mixed.txt", original);
			const r = await session.call("edit", {
				path: "mixed.txt",
				edits: [
					{ oldText: "l1", newText: "one" },
					{ oldText: "l4", newText: "four" },
				],
			});
			expect(r.ok).toBe(true);
			expect((await bytesOf("mixed.txt")).equals(Buffer.from("one\r\nl2\nl3\r\nfour\n"))).toBe(true);
		});
	});

	it("keeps the exec bit", async () => {
		await chmod(join(tree.root, "exec.sh"), 0o755);
		expect(
			(await session.call("edit", { path: "exec.sh", edits: [{ oldText: "echo hi", newText: "echo ho" }] }))
				.ok,
		).toBe(true);
		expect(await modeOf("exec.sh")).toBe(0o755);
		expect((await bytesOf("exec.sh")).toString()).toBe("#!/bin/sh\necho ho\n");
	});

	it("a second edit in the same session sees the first one", async () => {
		await put("f.txt", "v1\n");
		expect(
			(await session.call("edit", { path: "f.txt", edits: [{ oldText: "v1", newText: "v2" }] })).ok,
		).toBe(true);
		expect(
			(await session.call("edit", { path: "f.txt", edits: [{ oldText: "v2", newText: "v3" }] })).ok,
		).toBe(true);
		expect((await bytesOf("f.txt")).toString()).toBe("v3\n");
	});
});

describe("write", () => {
	it("creates parent directories", async () => {
		const r = await session.call("write", { path: "deep/er/est/f.txt", content: "héllo\n" });
		expect(textOf(r)).toBe("Successfully wrote 7 bytes to deep/er/est/f.txt");
		expect((await bytesOf("deep/er/est/f.txt")).toString()).toBe("héllo\n");
	});

	it("creates a new file with mode 644", async () => {
		expect((await session.call("write", { path: "n.txt", content: "x" })).ok).toBe(true);
		expect(await modeOf("n.txt")).toBe(0o644);
	});

	it("keeps the exec bit on overwrite", async () => {
		await chmod(join(tree.root, "exec.sh"), 0o755);
		expect((await session.call("read", { path: "exec.sh" })).ok).toBe(true);
		expect((await session.call("write", { path: "exec.sh", content: "#!/bin/sh\nexit 0\n" })).ok).toBe(true);
		expect(await modeOf("exec.sh")).toBe(0o755);
		expect((await bytesOf("exec.sh")).toString()).toBe("#!/bin/sh\nexit 0\n");
	});

	it("writes exactly the bytes given (no BOM, no newline conversion)", async () => {
		const content = "\uFEFFa\r\nb\nc";
		expect((await session.call("write", { path: "raw.txt", content })).ok).toBe(true);
		expect((await bytesOf("raw.txt")).equals(Buffer.from(content))).toBe(true);
	});
});

describe("bash", () => {
	it("returns output without the final newline", async () => {
		expect(textOf(await session.call("bash", { command: "printf 'a\\nb\\n'" }))).toBe("a\nb");
		expect(textOf(await session.call("bash", { command: "true" }))).toBe("(no output)");
	});

	it("runs in the workspace root", async () => {
		expect(textOf(await session.call("bash", { command: "pwd" }))).toBe(session.workspace);
	});

	it("a non-zero exit is COMMAND_FAILED with the exit code and the output", async () => {
		const r = await session.call("bash", { command: "echo hello; exit 3" });
		expectFailure(r, "COMMAND_FAILED");
		if (r.ok) return;
		expect(r.error.message).toBe("hello\n\nCommand exited with code 3");
		expect(r.error.details).toMatchObject({ exitCode: 3 });
	});

	it("stderr is part of a failure's message", async () => {
		const r = await session.call("bash", { command: "echo oops >&2; exit 1" });
		expectFailure(r, "COMMAND_FAILED");
		if (r.ok) return;
		expect(r.error.message).toBe("oops\n\nCommand exited with code 1");
		expect(r.error.details).toMatchObject({ exitCode: 1 });
	});

	it("a failure without output has just the status", async () => {
		const r = await session.call("bash", { command: "exit 7" });
		expectFailure(r, "COMMAND_FAILED");
		if (!r.ok) expect(r.error.message).toBe("Command exited with code 7");
	});

	it("a timeout kills the command and says so", { timeout: 15_000 }, async () => {
		const r = await session.call("bash", { command: "echo started; sleep 30", timeout: 1 });
		expectFailure(r, "TIMEOUT");
		if (!r.ok) expect(r.error.message).toBe("started\n\nCommand timed out after 1 seconds");
	});

	it("a timeout kills background children too", { timeout: 15_000 }, async () => {
		const r = await session.call("bash", { command: "sleep 1000 & echo $! > bgpid; wait", timeout: 1 });
		expectFailure(r, "TIMEOUT");
		const pid = Number((await bytesOf("bgpid")).toString().trim());
		await until(`pid ${pid} to die`, () => processGone(pid));
	});

	it("100k lines: the tail is shown and the spill file holds everything, exactly", async () => {
		const r = await session.call("bash", { command: "seq 1 100000" });
		const out = textOf(r);
		const details = (r.ok ? r.details : undefined) as {
			fullOutputPath: string;
			truncation: Record<string, unknown>;
		};
		expect(details.fullOutputPath).toBeTruthy();
		const tail = Array.from({ length: 2000 }, (_, i) => String(98001 + i)).join("\n");
		expect(out).toBe(
			`${tail}\n\n[Showing lines 98001-100000 of 100000. Full output: ${details.fullOutputPath}]`,
		);
		expect(details.truncation).toMatchObject({
			truncated: true,
			truncatedBy: "lines",
			totalLines: 100000,
			outputLines: 2000,
		});
		const full = Array.from({ length: 100000 }, (_, i) => String(i + 1)).join("\n");
		expect(readFileSync(details.fullOutputPath, "utf8")).toBe(`${full}\n`);
	});

	it("a truncated failure still names the spill file", async () => {
		const r = await session.call("bash", { command: "seq 1 3000; exit 2" });
		expectFailure(r, "COMMAND_FAILED");
		if (r.ok) return;
		const path = (r.error.details as { fullOutputPath: string }).fullOutputPath;
		expect(r.error.message).toContain(`[Showing lines 1001-3000 of 3000. Full output: ${path}]`);
		expect(r.error.message.endsWith("Command exited with code 2")).toBe(true);
		expect(r.error.details).toMatchObject({ exitCode: 2 });
		// The message is bounded too.
		expect(r.error.message.length).toBeLessThan(60 * 1024);
	});

	describe("multibyte characters at the truncation boundary", () => {
		for (const [char, perLine, tailCount] of [
			["é", 100, 25600],
			["😀", 50, 12800],
		] as const) {
			const bytes = Buffer.byteLength(char);
			for (const prefix of ["", "x", "xy", "xyz"]) {
				it(`one 60KB line of ${char} after ${JSON.stringify(prefix)}`, async () => {
					const count = 60000 / bytes;
					const command = `printf '%s' '${prefix}'; ${repeatChar(char, count)}; echo`;
					const r = await session.call("bash", { command });
					const out = textOf(r);
					const path = (r.ok ? (r.details as { fullOutputPath: string }).fullOutputPath : "") as string;
					expect(out).not.toContain("\uFFFD");
					expect(out).toBe(
						`${char.repeat(tailCount)}\n\n[Showing last 50.0KB of line 1. Full output: ${path}]`,
					);
					expect(readFileSync(path, "utf8")).toBe(`${prefix}${char.repeat(count)}\n`);
				});
			}

			it(`a 600KB line of ${char} (the window slides) keeps whole characters`, async () => {
				const count = 600000 / bytes;
				const command = `printf x; ${repeatChar(char, count)}; echo`;
				const r = await session.call("bash", { command });
				const out = textOf(r);
				const path = (r.ok ? (r.details as { fullOutputPath: string }).fullOutputPath : "") as string;
				expect(out).toBe(
					`${char.repeat(tailCount)}\n\n[Showing last 50.0KB of line 1. Full output: ${path}]`,
				);
				expect(readFileSync(path, "utf8")).toBe(`x${char.repeat(count)}\n`);
			});

			for (const lines of [300, 3000]) {
				it(`${lines} lines of ${perLine} ${char} keep whole lines`, async () => {
					const command = `yes "$(${repeatChar(char, perLine)})" | head -n ${lines}`;
					const r = await session.call("bash", { command });
					const out = textOf(r);
					const path = (r.ok ? (r.details as { fullOutputPath: string }).fullOutputPath : "") as string;
					const line = char.repeat(perLine);
					// 200-byte lines: 254 of them with 253 newlines are 51053 bytes; 255 would be 51254.
					expect(out).not.toContain("\uFFFD");
					expect(out).toBe(
						`${Array.from({ length: 254 }, () => line).join("\n")}\n\n[Showing lines ${lines - 253}-${lines} of ${lines} (50.0KB limit). Full output: ${path}]`,
					);
					expect(readFileSync(path, "utf8")).toBe(`${line}\n`.repeat(lines));
				});
			}
		}

		it("streamed partial output never shows half a character", { timeout: 20_000 }, async () => {
			const updates: string[] = [];
			const r = await session.call(
				"bash",
				{
					command: "printf 'abc\\xc3'; while [ ! -e go ]; do sleep 0.05; done; printf '\\xa9\\n'",
					timeout: 15,
				},
				{
					onUpdate: (p: ToolResult) => {
						const t = joinText(p.content);
						updates.push(t);
						if (t.startsWith("abc")) writeFileSync(join(tree.root, "go"), "");
					},
				},
			);
			expect(textOf(r)).toBe("abcé");
			expect(updates.length).toBeGreaterThan(0);
			for (const u of updates) expect(u).not.toContain("\uFFFD");
		});
	});

	it("abort kills the whole process tree", { timeout: 20_000 }, async () => {
		const controller = new AbortController();
		// Three background sleepers: one holding the output pipe, one in a subshell, one detached from the pipe.
		const command = [
			"sleep 1000 & echo $! >> pids",
			"(sleep 1000 >/dev/null 2>&1 & echo $! >> pids; wait) &",
			"sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >> pids",
			"wait",
		].join("\n");
		const call = session.call("bash", { command }, { signal: controller.signal });
		const pidFile = join(tree.root, "pids");
		const pids = () =>
			existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim().split("\n").filter(Boolean) : [];
		await until("three background pids", () => pids().length === 3);
		controller.abort();
		const r = await call;
		expectFailure(r, "ABORTED");
		for (const pid of pids().map(Number)) {
			expect(pid).toBeGreaterThan(1);
			await until(`pid ${pid} to die`, () => processGone(pid));
		}
	});

	it("onUpdate receives output before the command ends", { timeout: 20_000 }, async () => {
		const updates: string[] = [];
		const r = await session.call(
			"bash",
			{ command: "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second", timeout: 15 },
			{
				onUpdate: (p: ToolResult) => {
					const t = joinText(p.content);
					updates.push(t);
					// The command cannot finish until the streamed "first" has been seen here.
					if (t.includes("first")) writeFileSync(join(tree.root, "go"), "");
				},
			},
		);
		expect(textOf(r)).toBe("first\nsecond");
		expect(updates.some((u) => u.includes("first") && !u.includes("second"))).toBe(true);
	});
});

describe("ls", () => {
	beforeEach(async () => {
		const dir = join(tree.root, "listing");
		await mkdir(join(dir, "Dir"), { recursive: true });
		await mkdir(join(dir, "apple"));
		for (const name of ["b.txt", "A.txt", "c", ".hidden", "Zeta.md", "_under", "10.txt", "9.txt"]) {
			await writeFile(join(dir, name), "");
		}
		await symlink("apple", join(dir, "linkdir"));
	});

	it("sorts case-insensitively, marks directories (and links to them) with /, includes dotfiles", async () => {
		expect(textOf(await session.call("ls", { path: "listing" }))).toBe(
			"_under\n.hidden\n10.txt\n9.txt\nA.txt\napple/\nb.txt\nc\nDir/\nlinkdir/\nZeta.md",
		);
	});

	it("stops at the limit with a notice", async () => {
		const r = await session.call("ls", { path: "listing", limit: 3 });
		expect(textOf(r)).toBe("_under\n.hidden\n10.txt\n\n[3 entries limit reached. Use limit=6 for more]");
		expect(r.ok && r.details).toEqual({ entryLimitReached: 3 });
	});

	it("says when a directory is empty", async () => {
		await mkdir(join(tree.root, "listing", "Dir", "empty"));
		expect(textOf(await session.call("ls", { path: "listing/Dir/empty" }))).toBe("(empty directory)");
	});

	it("defaults to the workspace root", async () => {
		expect(textOf(await session.call("ls", {}))).toContain("listing/");
	});
});

describe("grep long lines", () => {
	it("cuts a long line to 500 characters without splitting a surrogate pair", async () => {
		await put("emoji.txt", `x${"😀".repeat(600)}\n`);
		const out = textOf(await session.call("grep", { pattern: "x", path: "emoji.txt" }));
		expect(out).toBe(
			`emoji.txt:1: x${"😀".repeat(249)}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]`,
		);
		expect(out).not.toContain("\uFFFD");
		expect(LONE_SURROGATE.test(out)).toBe(false);
	});
});
