/**
 * readFileBytes: a file's bytes exactly, through the session's roots. Each row: what is on disk,
 * what is asked, and the bytes or the error code that must come back; then the attacks: a link
 * planted to the outside, a directory swapped for a link while reads run, a FIFO (must not hang),
 * a 2 GB sparse file (refused by size, nothing read), and the read not counting as a read for a
 * later overwrite.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readFileBytes } from "../../src/index.js";
import { publicSession } from "../../src/session.js";
import { DIR_LINK_SWAPPER, swapsDone } from "../fixtures/dir-link-swapper.js";
import { useWorkspace, type Workspace } from "../fixtures/workspace.js";
import { NO_PYTHON, PYTHON } from "../python/helpers.js";

const ALL_BYTES = new Uint8Array(Array.from({ length: 256 }, (_, i) => i));

interface Row {
	name: string;
	/** Files made outside keel before the read (path in the root → bytes). */
	onDisk?: Record<string, string | Uint8Array>;
	/** Set up what a row needs beyond files (links, FIFOs). */
	setup?: (ws: Workspace) => void;
	path: (ws: Workspace) => string;
	maxBytes?: number;
	/** The bytes that must come back, or the error code. */
	bytes?: string | Uint8Array;
	code?: string;
}

const ROWS: Row[] = [
	{
		name: "a final newline stays",
		onDisk: { "f.txt": "one\ntwo\n" },
		path: () => "f.txt",
		bytes: "one\ntwo\n",
	},
	{
		name: "CRLF line ends stay",
		onDisk: { "f.txt": "a\r\nb\r\n" },
		path: () => "f.txt",
		bytes: "a\r\nb\r\n",
	},
	{ name: "an empty file", onDisk: { "f.txt": "" }, path: () => "f.txt", bytes: "" },
	{
		name: "Latin-1 bytes, not decoded",
		onDisk: { "f.txt": new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]) },
		path: () => "f.txt",
		bytes: new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]),
	},
	{ name: "every byte value", onDisk: { "f.dat": ALL_BYTES }, path: () => "f.dat", bytes: ALL_BYTES },
	{
		name: "a UTF-16 file with its BOM",
		onDisk: { "f.txt": Buffer.from("\ufeffhi\n", "utf16le") },
		path: () => "f.txt",
		bytes: Buffer.from("\ufeffhi\n", "utf16le"),
	},
	{
		name: "an absolute path inside the root",
		onDisk: { "d/f.txt": "x" },
		path: (ws) => ws.path("d/f.txt"),
		bytes: "x",
	},
	{
		name: "a link inside the root to a file inside",
		onDisk: { "f.txt": "in" },
		setup: (ws) => symlinkSync("f.txt", ws.path("l")),
		path: () => "l",
		bytes: "in",
	},
	{ name: "a missing file", path: () => "absent.txt", code: "NOT_FOUND" },
	{
		name: "no look-alike name instead",
		onDisk: { "notes.md": "x" },
		path: () => "Notes.md",
		code: "NOT_FOUND",
	},
	{ name: "a directory", onDisk: { "d/f.txt": "x" }, path: () => "d", code: "IS_DIRECTORY" },
	{ name: "a path outside the roots", path: (ws) => ws.outside("secret.txt"), code: "PATH_OUTSIDE_ROOTS" },
	{ name: "a climb out with ..", path: () => "../secret.txt", code: "PATH_OUTSIDE_ROOTS" },
	{
		name: "a planted link to a file outside",
		setup: (ws) => symlinkSync(ws.outside("secret.txt"), ws.path("planted")),
		path: () => "planted",
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "a planted link to a directory outside, read through",
		setup: (ws) => symlinkSync(ws.outside(""), ws.path("out")),
		path: () => "out/secret.txt",
		code: "PATH_OUTSIDE_ROOTS",
	},
	{
		name: "a FIFO is refused, not waited on",
		setup: (ws) => spawnSync("mkfifo", [ws.path("fifo")]),
		path: () => "fifo",
		code: "NOT_A_FILE",
	},
	{
		name: "larger than maxBytes",
		onDisk: { "f.txt": "0123456789" },
		path: () => "f.txt",
		maxBytes: 9,
		code: "TOO_LARGE",
	},
	{
		name: "exactly maxBytes",
		onDisk: { "f.txt": "0123456789" },
		path: () => "f.txt",
		maxBytes: 10,
		bytes: "0123456789",
	},
	{
		name: "a 2 GB sparse file, past the default bound: refused by its size",
		setup: (ws) => {
			writeFileSync(ws.path("big.dat"), "");
			truncateSync(ws.path("big.dat"), 2 * 1024 ** 3);
		},
		path: () => "big.dat",
		code: "TOO_LARGE",
	},
	{
		name: "maxBytes that is not a positive number",
		onDisk: { "f.txt": "x" },
		path: () => "f.txt",
		maxBytes: -1,
		code: "INVALID_ARGS",
	},
];

describe("readFileBytes", () => {
	const ws = useWorkspace({ prefix: "keel-read-bytes-" });

	it.each(ROWS)("$name", async (row) => {
		const w = ws();
		writeFileSync(w.outside("secret.txt"), "outside secret\n");
		for (const [rel, content] of Object.entries(row.onDisk ?? {})) await w.write(rel, content);
		row.setup?.(w);
		const r = await readFileBytes(
			publicSession(w.session),
			row.path(w),
			row.maxBytes === undefined ? {} : { maxBytes: row.maxBytes },
		);
		if (row.code) {
			expect(r.ok ? "ok" : r.error.code, JSON.stringify(r)).toBe(row.code);
			return;
		}
		expect(r.ok, JSON.stringify(r)).toBe(true);
		const want = typeof row.bytes === "string" ? Buffer.from(row.bytes) : Buffer.from(row.bytes ?? []);
		expect(Buffer.from(r.ok ? (r.details?.bytes ?? []) : []).equals(want)).toBe(true);
	});

	it("is not a read: a write over the file afterwards is still refused until read", async () => {
		const w = ws();
		await w.write("theirs.txt", "keep me\n");
		const r = await readFileBytes(publicSession(w.session), "theirs.txt");
		expect(r.ok).toBe(true);
		const write = await w.session.call("write", { path: "theirs.txt", content: "clobbered\n" });
		expect(write.ok ? "ok" : write.error.code).toBe("NOT_READ");
		expect(await w.read("theirs.txt")).toBe("keep me\n");
	});

	it.skipIf(NO_PYTHON)(
		"a directory swapped for a link to the outside while reads run: no outside byte",
		async () => {
			const w = ws();
			mkdirSync(w.outside("out"));
			writeFileSync(w.outside("out/f.txt"), "outside secret\n");
			await w.write("inner/f.txt", "inside\n");
			const stop = w.outside("stop");
			const swapper: ChildProcess = spawn(
				PYTHON!,
				["-c", DIR_LINK_SWAPPER, w.path("inner"), w.outside("out"), stop],
				{
					stdio: ["ignore", "pipe", "inherit"],
				},
			);
			let printed = "";
			swapper.stdout!.on("data", (c) => {
				printed += c;
			});
			const done = new Promise((resolve) => swapper.on("close", resolve));
			const seen = new Map<string, number>();
			try {
				for (let i = 0; i < 400; i++) {
					const r = await readFileBytes(publicSession(w.session), "inner/f.txt");
					const what = r.ok ? Buffer.from(r.details?.bytes ?? []).toString() : r.error.code;
					seen.set(what, (seen.get(what) ?? 0) + 1);
				}
			} finally {
				writeFileSync(stop, "");
			}
			await done;
			expect([...seen.keys()].filter((k) => k.includes("outside"))).toEqual([]);
			expect(seen.get("inside\n") ?? 0).toBeGreaterThan(0);
			expect(swapsDone(printed)).toBeGreaterThan(0);
		},
		60_000,
	);
});
