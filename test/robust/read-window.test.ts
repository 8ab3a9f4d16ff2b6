/**
 * read streams a window of any file above 256 KiB (src/tools/read.ts, src/backend/read-window.ts):
 * one pass hashes the whole file and counts its lines, and only the shown lines are decoded. The
 * answer must be exactly the whole-file read's on every file that could tell them apart (line
 * endings, a BOM, UTF-8 cut by the 1 MiB chunk edge, invalid bytes, long lines, NULs, images),
 * and the hash taken on the way must still refuse an overwrite of a file changed since.
 */
import { readFile, writeFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Backend } from "../../src/backend/types.js";
import type { CallResult, Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

const MiB = 1024 * 1024;
// One workspace for the file, its files written once; two sessions on different backends read them.
const ws = useWorkspace({ prefix: "keel-read-window-", shared: true, session: false });
let windowed: Session;
let whole: Session;

/** The same local backend without readWindow: read then takes the whole-file path. */
function wholeReadBackend(): Backend {
	const b = createLocalBackend();
	return { ...b, fs: { ...b.fs, readWindow: undefined } };
}

async function open(backend: Backend, profile?: "unified"): Promise<Session> {
	return ws().open({ backend, ...(profile ? { profile } : {}) });
}

/** `n` lines of ~100 bytes joined by `eol`. */
const lines = (n: number, eol = "\n", from = 0) =>
	Array.from(
		{ length: n },
		(_, i) => `${String(from + i).padStart(7, "0")} ${"lorem ipsum ".repeat(7)}`,
	).join(eol);

/** ASCII filler of exactly `bytes` bytes, in lines. */
const filler = (bytes: number) => {
	const line = `${"f".repeat(99)}\n`;
	return line.repeat(Math.floor(bytes / 100)) + "g".repeat(bytes % 100);
};

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const FILES: Record<string, Buffer> = {
	plain: Buffer.from(`${lines(30_000)}\n`),
	"300 KB, one chunk": Buffer.from(`${lines(3000, "\r\n")}\r\n`),
	"no final newline": Buffer.from(lines(30_000)),
	crlf: Buffer.from(`${lines(30_000, "\r\n")}\r\n`),
	"bom and crlf": Buffer.concat([
		Buffer.from([0xef, 0xbb, 0xbf]),
		Buffer.from(`${lines(30_000, "\r\n")}\r\n`),
	]),
	// A 4-byte character cut 1, 2 and 3 bytes before the first 1 MiB chunk ends.
	...Object.fromEntries(
		[1, 2, 3].map((k) => [
			`emoji cut by the chunk edge (${k})`,
			Buffer.concat([Buffer.from(filler(MiB - k)), Buffer.from(`😀 é ü\n${lines(5000)}\n`)]),
		]),
	),
	"a sequence cut by the chunk edge, never completed": Buffer.concat([
		Buffer.from(filler(MiB - 1)),
		Buffer.from([0xe2]),
		Buffer.from(`A\n${lines(100)}\n`),
	]),
	"an invalid byte deep in the file": Buffer.concat([
		Buffer.from(filler(MiB + 500_000)),
		Buffer.from([0xff]),
		Buffer.from(`\n${lines(100)}\n`),
	]),
	"an incomplete sequence at the very end": Buffer.concat([
		Buffer.from(filler(2 * MiB)),
		Buffer.from([0xe2, 0x82]),
	]),
	"a 60 KB first line, BOM and CRLF": Buffer.concat([
		Buffer.from([0xef, 0xbb, 0xbf]),
		Buffer.from(`${"é".repeat(30_000)}\r\n${lines(20_000, "\r\n")}\r\n`),
	]),
	"a 60 KB line in the middle": Buffer.from(`${lines(100)}\n${"x".repeat(60_000)}\n${lines(20_000)}\n`),
	"a NUL in the first 8 KiB": Buffer.from(`abc\0${lines(20_000)}\n`),
	"a NUL past the first 8 KiB": Buffer.from(`${lines(200)}\n\0\n${lines(20_000)}\n`),
	"a 2 MB PNG": Buffer.concat([PNG, Buffer.alloc(2 * MiB, 7)]),
	"empty lines only": Buffer.from("\n".repeat(MiB + 10)),
	// Classic Mac line endings: no "\n" at all, so one 3 MB line (its final "\r" not counted).
	"CR-only line endings": Buffer.from(`${lines(30_000, "\r")}\r`),
	// 51,251 bytes before the "\r\n": shown as 50.0KB by the whole read; 51,252 would be 50.1KB.
	"a 51,251-byte first line before CRLF": Buffer.from(`${"a".repeat(51_251)}\r\n${lines(3000, "\r\n")}\r\n`),
	// The shown window ends about 50 KB in; the bad byte is in the same first chunk, past it.
	"an invalid byte right after the shown window": Buffer.concat([
		Buffer.from(filler(100_000)),
		Buffer.from([0xc3, 0x28]),
		Buffer.from(`\n${lines(3000)}\n`),
	]),
	// The last line has no "\n" and ends exactly at the second chunk's end.
	"no final newline, the file ends at the chunk edge": Buffer.from(filler(2 * MiB)),
	"a final newline exactly at the chunk edge": Buffer.from(`${filler(2 * MiB - 1)}\n`),
	// 20,001 lines without a final "\n": offset 19,999 with limit 3 ends the selection at the last byte.
	"no final newline, the last line ends the selection": Buffer.from(lines(20_001)),
};

const ARGS: Record<string, unknown>[] = [
	{},
	{ limit: 1 },
	{ offset: 2, limit: 3 },
	{ offset: 101 },
	{ offset: 5000, limit: 3000 },
	{ offset: 19_999 },
	{ offset: 19_999, limit: 3 },
	{ offset: 2_000_000 },
];

beforeAll(async () => {
	for (const [name, data] of Object.entries(FILES)) await writeFile(ws().path(`${name}.txt`), data);
	windowed = await open(createLocalBackend());
	whole = await open(wholeReadBackend());
});

/** What the model sees, and the error code when there is one. */
const seen = (r: CallResult) => (r.ok ? { content: r.content, details: r.details } : { error: r.error });

/**
 * As `seen`, with the truncation's totalBytes taken out where the streamed window counts the
 * file's raw bytes and the whole read its decoded text: a "\r" before "\n", invalid UTF-8 (each
 * bad byte is a 3-byte U+FFFD once decoded), hashline prefixes.
 */
function seenWithoutRawBytes(r: CallResult) {
	const v = seen(r) as { details?: { truncation?: { totalBytes?: number } } };
	if (v.details?.truncation) v.details.truncation.totalBytes = -1;
	return v;
}
const RAW_BYTES_DIFFER = /crlf|CRLF|CR-only|sequence|invalid|one chunk/;

describe("read of a file above 256 KiB: the streamed window is the whole read's answer", () => {
	for (const name of Object.keys(FILES)) {
		it(name, async () => {
			const path = `${name}.txt`;
			for (const args of ARGS) {
				const a = await windowed.call("read", { path, ...args });
				const b = await whole.call("read", { path, ...args });
				if (RAW_BYTES_DIFFER.test(name))
					expect(seenWithoutRawBytes(a), JSON.stringify(args)).toEqual(seenWithoutRawBytes(b));
				else expect(seen(a), JSON.stringify(args)).toEqual(seen(b));
			}
		});
	}

	it("hashline refs are the same", async () => {
		const w = await open(createLocalBackend(), "unified");
		const h = await open(wholeReadBackend(), "unified");
		for (const path of ["crlf.txt", "bom and crlf.txt", "emoji cut by the chunk edge (2).txt"]) {
			for (const args of [{}, { offset: 9000, limit: 5 }]) {
				const a = await w.call("read", { path, hashline: true, ...args });
				const b = await h.call("read", { path, hashline: true, ...args });
				expect(a.ok).toBe(true);
				expect(seenWithoutRawBytes(a)).toEqual(seenWithoutRawBytes(b));
			}
		}
	});

	it("the invalid-UTF-8 notice comes from the whole file, not the window", async () => {
		const r = await windowed.call("read", { path: "an invalid byte deep in the file.txt", limit: 2 });
		expect(r.ok && JSON.stringify(r.content)).toContain("not valid UTF-8");
		const ok = await windowed.call("read", { path: "emoji cut by the chunk edge (3).txt", limit: 2 });
		expect(ok.ok && JSON.stringify(ok.content)).not.toContain("not valid UTF-8");
	});
});

describe("the read state of a 10 MB file read through the window", () => {
	const big = () => Buffer.from(`${lines(100_000)}\n`);

	it("an edit right after the read passes the read check (the streamed hash is the file's)", async () => {
		await writeFile(ws().path("ten.txt"), big());
		const s = await open(createLocalBackend());
		const r = await s.call("read", { path: "ten.txt" });
		expect(r.ok && JSON.stringify(r.content)).toContain("of 100000");
		const e = await s.call("edit", {
			path: "ten.txt",
			edits: [{ oldText: "0050000 lorem", newText: "0050000 LOREM" }],
		});
		expect(e.ok).toBe(true);
		// The overwrite compares the file with the read's hash (a compare-and-swap): a wrong
		// streamed hash would refuse it.
		expect((await s.call("read", { path: "ten.txt", offset: 99_000 })).ok).toBe(true);
		const w = await s.call("write", { path: "ten.txt", content: "replaced\n" });
		expect(w.ok ? "ok" : w.error.code).toBe("ok");
		expect(await readFile(ws().path("ten.txt"), "utf8")).toBe("replaced\n");
	});

	it("a change by another process since the read refuses the overwrite, and changes nothing", async () => {
		await writeFile(ws().path("ten-stale.txt"), big());
		const s = await open(createLocalBackend());
		expect((await s.call("read", { path: "ten-stale.txt" })).ok).toBe(true);
		// Another process rewrites one byte far past the shown window (same size).
		const changed = big();
		changed[9_000_000] = 0x58;
		await writeFile(ws().path("ten-stale.txt"), changed);
		const w = await s.call("write", { path: "ten-stale.txt", content: "overwritten\n" });
		expect(w.ok ? "ok" : w.error.code).toBe("STALE_READ");
		expect((await readFile(ws().path("ten-stale.txt"))).equals(changed)).toBe(true);
	});
});
