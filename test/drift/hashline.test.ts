/**
 * Hashline addressing: the unified read's `hashline` output and the file tool's
 * {matchMode: "hashline", start, end} edits, on real files through a unified-profile Session. A
 * ref whose hash no longer matches is STALE_READ with the current lines, and nothing changes.
 *
 * The unified read is called through its tool definition (check, then execute with the session),
 * so this holds whichever read the profile's registry lists.
 */
import { readFile, writeFile } from "node:fs/promises";
import { beforeEach, describe, expect, it } from "vitest";
import { KeelError } from "../../src/boundary/errors.js";
import { hashlinePrefix, lineHash } from "../../src/edit/hashline.js";
import type { CallResult, Session } from "../../src/session.js";
import { readTool, unifiedReadTool } from "../../src/tools/read.js";
import { useWorkspace } from "../fixtures/workspace.js";

let session: Session;
const ws = useWorkspace({ prefix: "keel-hashline-", session: { profile: "unified" } });
beforeEach(async () => {
	session = ws().session;
});

const p = (name: string) => ws().path(name);

async function hashRead(path: string, extra: Record<string, unknown> = {}): Promise<string> {
	const args = { path, hashline: true, ...extra };
	unifiedReadTool.check(args);
	const r = await unifiedReadTool.execute(args, { host: session });
	return (r.content[0] as { text: string }).text;
}

/** The ref of 1-based line n as the read showed it. */
function ref(shown: string, n: number): string {
	const line = shown.split("\n").find((l) => l.startsWith(`${n}#`));
	if (!line) throw new Error(`line ${n} not shown`);
	return line.slice(0, line.indexOf("|"));
}

function edit(path: string, edits: unknown[]): Promise<CallResult> {
	return session.call("file", { queries: [{ type: "edit", path, edits }] });
}

describe("the line hash", () => {
	it("is the first 3 hex digits of FNV-1a over the line's UTF-8 bytes", () => {
		// Reference values from an independent FNV-1a implementation (Python).
		expect(lineHash("")).toBe("811");
		expect(lineHash("hello")).toBe("4f9");
		expect(lineHash("\tfoo()")).toBe("1b1");
		expect(lineHash("é😀")).toBe("039");
		expect(hashlinePrefix(12, "hello")).toBe("12#4f9|");
	});
});

describe("read with hashline", () => {
	it("only the unified read takes hashline; the pi read keeps pi's schema", () => {
		expect(() => readTool.check({ path: "a", hashline: true })).toThrow(KeelError);
		expect(() => unifiedReadTool.check({ path: "a", hashline: true })).not.toThrow();
		const { hashline, ...rest } = (unifiedReadTool.parameters.properties ?? {}) as Record<string, unknown>;
		expect(hashline).toBeDefined();
		expect(rest).toEqual(readTool.parameters.properties);
	});

	it("prefixes each line with number#hash|, from the offset, endings and BOM left out", async () => {
		await writeFile(p("a.txt"), "\uFEFFone\r\ntwo\r\nthree\r\n");
		expect(await hashRead("a.txt")).toBe(
			["one", "two", "three"].map((l, i) => `${hashlinePrefix(i + 1, l)}${l}`).join("\n"),
		);
		expect(await hashRead("a.txt", { offset: 2, limit: 1 })).toBe(
			`${hashlinePrefix(2, "two")}two\n\n[1 more lines in file. Use offset=3 to continue.]`,
		);
	});

	it("without hashline the unified read shows plain lines", async () => {
		await writeFile(p("a.txt"), "one\n");
		const r = await unifiedReadTool.execute({ path: "a.txt" }, { host: session });
		expect((r.content[0] as { text: string }).text).toBe("one");
	});
});

describe("file edits addressed by hashline refs", () => {
	it("replaces the lines start..end, keeping the line break after them", async () => {
		await writeFile(p("f.py"), "def f():\n    a = 1\n    b = 2\n    return a + b\n");
		const shown = await hashRead("f.py");
		const r = await edit("f.py", [
			{ matchMode: "hashline", start: ref(shown, 2), end: ref(shown, 3), newText: "    a, b = 1, 2" },
		]);
		expect(r.ok).toBe(true);
		expect(await readFile(p("f.py"), "utf8")).toBe("def f():\n    a, b = 1, 2\n    return a + b\n");
		const results = (r as { details: { results: Array<{ matched: string[] }> } }).details.results;
		expect(results[0].matched).toEqual(["hashline"]);
	});

	it("one line by start alone; empty newText deletes; refs may carry the |text part; CRLF kept", async () => {
		await writeFile(p("c.txt"), "a\r\nb\r\nc\r\nd\r\n");
		const shown = await hashRead("c.txt");
		const withText = shown.split("\n")[2]; // "3#xxx|c"
		const r = await edit("c.txt", [
			{ matchMode: "hashline", start: ref(shown, 1), newText: "A" },
			{ matchMode: "hashline", start: ref(shown, 2), newText: "" },
			{ matchMode: "hashline", start: withText, end: ref(shown, 3), newText: "C\nC2" },
		]);
		expect(r.ok).toBe(true);
		expect(await readFile(p("c.txt"), "utf8")).toBe("A\r\nC\r\nC2\r\nd\r\n");
	});

	it("deleting the last lines of a file without a final newline adds none", async () => {
		for (const [file, from, to, expected] of [
			["a\nb\nc", 3, 3, "a\nb"],
			["a\nb\nc", 2, 3, "a"],
			["a\r\nb\r\nc", 3, 3, "a\r\nb"],
			["a\nb\nc\n", 3, 3, "a\nb\n"],
		] as const) {
			await writeFile(p("z.txt"), file);
			const shown = await hashRead("z.txt");
			const r = await edit("z.txt", [
				{ matchMode: "hashline", start: ref(shown, from), end: ref(shown, to), newText: "" },
			]);
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect(await readFile(p("z.txt"), "utf8")).toBe(expected);
		}
	});

	it("needs no prior read: the hashes prove what the model saw", async () => {
		await writeFile(p("n.txt"), "x\ny\n");
		const r = await edit("n.txt", [{ matchMode: "hashline", start: `2#${lineHash("y")}`, newText: "Y" }]);
		expect(r.ok).toBe(true);
		expect(await readFile(p("n.txt"), "utf8")).toBe("x\nY\n");
	});

	it("a stale ref is STALE_READ with the current lines and their refs; nothing changes", async () => {
		const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
		await writeFile(p("s.txt"), `${lines.join("\n")}\n`);
		const shown = await hashRead("s.txt");
		// Another writer inserts a line at the top: every ref now points one line off.
		const changed = `new first line\n${lines.join("\n")}\n`;
		await writeFile(p("s.txt"), changed);
		const r = await edit("s.txt", [
			{ matchMode: "hashline", start: ref(shown, 10), end: ref(shown, 11), newText: "X" },
		]);
		expect(r.ok).toBe(false);
		if (r.ok) return;
		expect(r.error.code).toBe("STALE_READ");
		expect(r.error.payloadRef).toBeUndefined();
		// The fresh lines around line 10, bounded, in hashline form, ready for a retry.
		expect(r.error.message).toContain(`${hashlinePrefix(10, "line 9")}line 9`);
		expect(r.error.message).toContain(`${hashlinePrefix(13, "line 12")}line 12`);
		expect(r.error.message).not.toContain("line 15");
		expect(await readFile(p("s.txt"), "utf8")).toBe(changed);
	});

	it("a ref past the end of a file that shrank is STALE_READ", async () => {
		await writeFile(p("t.txt"), "a\nb\nc\n");
		const shown = await hashRead("t.txt");
		await writeFile(p("t.txt"), "a\n");
		const r = await edit("t.txt", [{ matchMode: "hashline", start: ref(shown, 3), newText: "C" }]);
		expect(!r.ok && r.error.code).toBe("STALE_READ");
		expect(!r.ok && r.error.message).toContain("1 lines now");
	});

	it("malformed refs and stray fields are INVALID_ARGS", async () => {
		await writeFile(p("m.txt"), "a\nb\n");
		const a = `1#${lineHash("a")}`;
		const b = `2#${lineHash("b")}`;
		const bad: unknown[] = [
			{ matchMode: "hashline", start: "1", newText: "x" },
			{ matchMode: "hashline", start: "0#abc", newText: "x" },
			{ matchMode: "hashline", start: "1#zzz", newText: "x" },
			{ matchMode: "hashline", start: b, end: a, newText: "x" },
			{ matchMode: "hashline", newText: "x" },
			{ matchMode: "hashline", start: a, oldText: "a", newText: "x" },
			{ start: a, newText: "x", oldText: "a" },
		];
		for (const e of bad) {
			const r = await edit("m.txt", [e]);
			expect(!r.ok && r.error.code, JSON.stringify(e)).toBe("INVALID_ARGS");
		}
		expect(await readFile(p("m.txt"), "utf8")).toBe("a\nb\n");
	});

	it("mixes with anchor edits in one query, all matched against the original", async () => {
		await writeFile(p("x.txt"), "alpha\nbeta\ngamma\n");
		const r = await edit("x.txt", [
			{ matchMode: "hashline", start: `1#${lineHash("alpha")}`, newText: "ALPHA" },
			{ oldText: "gamma", newText: "GAMMA" },
		]);
		expect(r.ok).toBe(true);
		expect(await readFile(p("x.txt"), "utf8")).toBe("ALPHA\nbeta\nGAMMA\n");
		const overlap = await edit("x.txt", [
			{ matchMode: "hashline", start: `2#${lineHash("beta")}`, newText: "B" },
			{ oldText: "beta", newText: "b" },
		]);
		expect(!overlap.ok && overlap.error.code).toBe("EDIT_OVERLAP");
	});
});
