/**
 * CR-only line endings (old Mac files) are kept per line, like LF and CRLF: an
 * edit through edit, file and apply_patch leaves every untouched line's ending byte for byte, and
 * the lines it adds take the ending of the region they replace. Files are built to be awkward:
 * mixed `\r`, `\n` and `\r\n` endings, `\r\r\n` (a CR line end, then a CRLF one), a `\r` at EOF,
 * and an edit spanning endings of different kinds.
 */
import { describe, expect, it } from "vitest";
import type { Session } from "../../src/session.js";
import { editTools, ok } from "../fixtures/edit-via.js";
import { useWorkspace } from "../fixtures/workspace.js";

const ws = useWorkspace({ prefix: "keel-cr-" });
const open = (profile: "pi" | "unified"): Promise<Session> => ws().open({ profile });
const bytes = async (name: string) => (await ws().bytes(name)).toString("latin1");

const tools = editTools(open).map(
	([name, via]): [string, (f: string, o: string, n: string) => Promise<void>] => [
		name,
		async (f, o, n) => {
			ok(await via(f, o, n));
		},
	],
);

describe.each(tools)("CR endings through %s", (_tool, via) => {
	it("a CR-only file keeps every CR, and new lines end in CR", async () => {
		await ws().write("mac.txt", "one\rtwo\rthree\rfour\r");
		await via("mac.txt", "two", "TWO\nadded");
		expect(await bytes("mac.txt")).toBe("one\rTWO\radded\rthree\rfour\r");
	});

	it("mixed endings: untouched lines keep theirs; the new lines take the replaced line's", async () => {
		const before = "a\nb\r\nc\rd\r\r\ne\n\rf\rlast\r";
		await ws().write("mixed.txt", before);
		// `c` (with its line end) ends in a lone CR: the new lines do too.
		await via("mixed.txt", "c\n", "C1\nC2\n");
		expect(await bytes("mixed.txt")).toBe("a\nb\r\nC1\rC2\rd\r\r\ne\n\rf\rlast\r");
		// `b` ends in CRLF, in a file where CR dominates.
		await via("mixed.txt", "b\n", "B1\nB2\n");
		expect(await bytes("mixed.txt")).toBe("a\nB1\r\nB2\r\nC1\rC2\rd\r\r\ne\n\rf\rlast\r");
		// The last line ends in a CR at EOF: it stays there.
		await via("mixed.txt", "last", "LAST");
		expect(await bytes("mixed.txt")).toBe("a\nB1\r\nB2\r\nC1\rC2\rd\r\r\ne\n\rf\rLAST\r");
	});

	it("`\\r\\r\\n` is a CR line then a CRLF line; an edit next to it leaves both bytes alone", async () => {
		await ws().write("crcrlf.txt", "x\r\r\ny\r\nz\n");
		await via("crcrlf.txt", "y", "Y");
		expect(await bytes("crcrlf.txt")).toBe("x\r\r\nY\r\nz\n");
	});

	it("an edit spanning endings of different kinds keeps the lines around it", async () => {
		// a\r b\n c\r\n d\r: replacing b..c (an LF and a CRLF inside) takes the file's dominant
		// ending (CR: 3 of 5 lines) for its new lines; a, d, e keep theirs.
		await ws().write("span.txt", "a\rb\nc\r\nd\re\r");
		await via("span.txt", "b\nc", "B\nmid\nC");
		const after = await bytes("span.txt");
		expect(after.startsWith("a\r")).toBe(true);
		expect(after.endsWith("\r\nd\re\r") || after.endsWith("\rd\re\r")).toBe(true);
		expect(after.replace(/\r\n?/g, "\n")).toBe("a\nB\nmid\nC\nd\ne\n");
	});
});

describe("CR endings in the edit tool's own result", () => {
	it("the diff shows the CR file as lines, and the bytes elsewhere are untouched", async () => {
		const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`);
		await ws().write("long.txt", `${lines.join("\r")}\r`);
		const s = await open("pi");
		const r = ok(
			await s.call("edit", { path: "long.txt", edits: [{ oldText: "line 15", newText: "LINE 15" }] }),
		);
		expect((r.details as { diff: string }).diff).toContain("-16 line 15");
		expect((r.details as { diff: string }).diff).toContain("+16 LINE 15");
		expect(await bytes("long.txt")).toBe(`${lines.join("\r")}\r`.replace("line 15", "LINE 15"));
	});
});
