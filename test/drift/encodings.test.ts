/**
 * Text files in their own encoding, through the tools on real files: the file's bytes, the
 * request, the exact bytes expected afterwards (every byte outside the edited text as it was), or
 * the refusal with the file untouched. Covers UTF-8 with a BOM, UTF-16 LE/BE with a BOM,
 * Latin-1/CP1252, Shift-JIS, EUC-JP, GB18030, EUC-KR and Big5; text the encoding cannot hold is
 * refused naming the character; a file keel is not sure of, and binary data, stay refused; read
 * says which encoding it decoded.
 */
import { readFile, writeFile } from "node:fs/promises";
import iconv from "iconv-lite";
import { beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

let pi: Session;
let unified: Session;

const ws = useWorkspace({ prefix: "keel-encodings-", shared: true });
beforeAll(async () => {
	pi = ws().session;
	unified = await ws().open({ profile: "unified" });
});

const enc = (text: string, encoding: string, bom: number[] = []) =>
	Buffer.concat([Buffer.from(bom), iconv.encode(text, encoding)]);

const GERMAN = "Ça va? Voilà, naïve café. Größe über alles. résumé\nzweite Zeile mit Umlauten äöü\nende\n";
const QUOTES = "“Smart quotes” — and the euro € sign; naïve café\nline two\nend\n";
const JA = "こんにちは、世界。日本語のテキストです。\n二行目です。\n終わり\n";
const ZH = "你好，世界。这是中文文本。\n第二行。\n结束\n";
const KO = "안녕하세요 세계. 한국어 텍스트입니다.\n두 번째 줄.\n끝\n";
const TW = "你好，世界。這是繁體中文文本。\n第二行。\n結束\n";

interface Case {
	name: string;
	bytes: Buffer;
	tool: "edit" | "file" | "apply_patch";
	oldText: string;
	newText: string;
	expect: { bytes: Buffer } | { refuse: "ENCODING_UNSAFE"; mentions: string };
}

const edit = (name: string, bytes: Buffer, oldText: string, newText: string, expectBytes: Buffer): Case => ({
	name,
	bytes,
	tool: "edit",
	oldText,
	newText,
	expect: { bytes: expectBytes },
});

const CASES: Case[] = [
	edit(
		"UTF-8 with a BOM",
		enc("a = 1\nb = 2\n", "utf8", [0xef, 0xbb, 0xbf]),
		"b = 2",
		"b = 3",
		enc("a = 1\nb = 3\n", "utf8", [0xef, 0xbb, 0xbf]),
	),
	edit(
		"UTF-16 LE with a BOM, CRLF",
		enc("first\r\nsecond\r\n", "utf-16le", [0xff, 0xfe]),
		"second",
		"zweite",
		enc("first\r\nzweite\r\n", "utf-16le", [0xff, 0xfe]),
	),
	edit(
		"UTF-16 BE with a BOM",
		enc("alpha\nbeta\n", "utf-16be", [0xfe, 0xff]),
		"beta",
		"béta",
		enc("alpha\nbéta\n", "utf-16be", [0xfe, 0xff]),
	),
	edit(
		"Latin-1",
		enc(GERMAN, "latin1"),
		"zweite Zeile",
		"Zweite Zeile",
		enc(GERMAN.replace("zweite", "Zweite"), "latin1"),
	),
	edit(
		"CP1252 smart quotes",
		enc(QUOTES, "windows-1252"),
		"line two",
		"line 2 — €",
		enc(QUOTES.replace("line two", "line 2 — €"), "windows-1252"),
	),
	edit(
		"Shift-JIS",
		enc(JA, "Shift_JIS"),
		"二行目です。",
		"二行目でした。",
		enc(JA.replace("です。\n終", "でした。\n終"), "Shift_JIS"),
	),
	edit("EUC-JP", enc(JA, "EUC-JP"), "終わり", "おわり", enc(JA.replace("終わり", "おわり"), "EUC-JP")),
	edit(
		"GB18030",
		enc(ZH, "GB18030"),
		"第二行。",
		"第二行！",
		enc(ZH.replace("第二行。", "第二行！"), "GB18030"),
	),
	edit(
		"EUC-KR",
		enc(KO, "EUC-KR"),
		"두 번째 줄.",
		"둘째 줄.",
		enc(KO.replace("두 번째 줄.", "둘째 줄."), "EUC-KR"),
	),
	edit("Big5", enc(TW, "Big5"), "結束", "完", enc(TW.replace("結束", "完"), "Big5")),
	{
		name: "file tool on Shift-JIS",
		bytes: enc(JA, "Shift_JIS"),
		tool: "file",
		oldText: "終わり",
		newText: "おしまい",
		expect: { bytes: enc(JA.replace("終わり", "おしまい"), "Shift_JIS") },
	},
	{
		name: "apply_patch on CP1252",
		bytes: enc(QUOTES, "windows-1252"),
		tool: "apply_patch",
		oldText: "line two",
		newText: "line deux",
		expect: { bytes: enc(QUOTES.replace("line two", "line deux"), "windows-1252") },
	},
	{
		name: "a character Latin-1 cannot hold is refused, named",
		bytes: enc(GERMAN, "latin1"),
		tool: "edit",
		oldText: "ende",
		newText: "ende 日",
		expect: { refuse: "ENCODING_UNSAFE", mentions: "U+65E5" },
	},
	{
		name: "a character Shift-JIS cannot hold is refused, named",
		bytes: enc(JA, "Shift_JIS"),
		tool: "edit",
		oldText: "終わり",
		newText: "終わり 한",
		expect: { refuse: "ENCODING_UNSAFE", mentions: "U+D55C" },
	},
	{
		name: "a short Latin-1 file keel is not sure of is refused, saying what it saw",
		bytes: enc("café\n", "latin1"),
		tool: "edit",
		oldText: "caf",
		newText: "kaf",
		expect: { refuse: "ENCODING_UNSAFE", mentions: "not UTF-8" },
	},
	{
		name: "binary data stays refused",
		bytes: Buffer.from([0x61, 0x00, 0x62, 0x0a]),
		tool: "edit",
		oldText: "a",
		newText: "c",
		expect: { refuse: "ENCODING_UNSAFE", mentions: "NUL" },
	},
];

function call(c: Case, path: string) {
	if (c.tool === "edit")
		return pi.call("edit", { path, edits: [{ oldText: c.oldText, newText: c.newText }] });
	if (c.tool === "file")
		return unified.call("file", {
			queries: [{ type: "edit", path, edits: [{ oldText: c.oldText, newText: c.newText }] }],
		});
	return unified.call("apply_patch", {
		input: `*** Begin Patch\n*** Update File: ${path}\n@@\n-${c.oldText}\n+${c.newText}\n*** End Patch\n`,
	});
}

describe("edits in the file's own encoding", () => {
	it.each(CASES.map((c, i) => [c.name, i] as const))("%s", async (_, i) => {
		const c = CASES[i];
		const path = `enc-${i}.txt`;
		await writeFile(ws().path(path), c.bytes);
		const r = await call(c, path);
		const after = await readFile(ws().path(path));
		if ("refuse" in c.expect) {
			expect(r.ok, JSON.stringify(r)).toBe(false);
			if (!r.ok) {
				expect(r.error.code).toBe(c.expect.refuse);
				expect(r.error.message).toContain(c.expect.mentions);
			}
			expect(after.equals(c.bytes)).toBe(true);
			return;
		}
		expect(r.ok, JSON.stringify(r)).toBe(true);
		expect(after.toString("hex")).toBe(c.expect.bytes.toString("hex"));
	});
});

describe("read says which encoding it decoded", () => {
	it.each([
		["Shift_JIS", enc(JA, "Shift_JIS"), "二行目です。"],
		["utf-16le", enc("first\r\nsecond\r\n", "utf-16le", [0xff, 0xfe]), "first\nsecond"],
		["windows-1252", enc(GERMAN, "latin1"), "Größe über alles"],
	] as const)("%s", async (encoding, bytes, shows) => {
		const path = `read-${encoding}.txt`;
		await writeFile(ws().path(path), bytes);
		const r = await pi.call("read", { path });
		expect(r.ok, JSON.stringify(r)).toBe(true);
		if (!r.ok) return;
		const said = (r.content[0] as { text: string }).text;
		expect(said).toContain(shows);
		expect(said).toContain(`[Decoded from ${encoding}`);
		expect((r.details as { encoding?: string }).encoding).toBe(encoding);
	});
});
