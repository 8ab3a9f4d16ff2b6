/**
 * The streamed read (src/backend/read-window.ts) against a file that changes under it. The pass
 * reads the bytes the file had at the open, by offset; what it shows, the line count and the hash
 * the read state records are all of those bytes. A file appended to meanwhile is read as it was
 * opened (and the pass ends: a file that keeps growing cannot keep it going); a file truncated or
 * rewritten in place during the pass fails the read (CHANGED_ON_DISK) and records nothing.
 *
 * The change is made by this process at a turn of the event loop at which it holds the file open
 * (seen in /proc/self/fd): the pass is then between two chunk reads, before its last fstat.
 */

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
	appendFileSync,
	closeSync,
	openSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	truncateSync,
	utimesSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { describe, expect, it } from "vitest";
import { createLocalFs } from "../../src/backend/local/fs.js";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { CallResult, Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

const LINES = 80_000;
/** ~8 MB: eight 1 MiB chunks, so the pass has turns of the event loop in the middle. */
const ORIGINAL = Buffer.from(
	`${Array.from({ length: LINES }, (_, i) => `${String(i).padStart(7, "0")} ${"lorem ipsum ".repeat(7)}`).join("\n")}\n`,
);

// One workspace for the file; each test plants its own files and opens its sessions.
const ws = useWorkspace({ prefix: "keel-read-races-", shared: true, session: false });

function session(): Promise<Session> {
	return ws().open({ backend: createLocalBackend() });
}

/** A fresh copy of ORIGINAL, its times an hour back (so a rewrite now surely moves them). */
function plant(name: string): string {
	const path = ws().path(name);
	writeFileSync(path, ORIGINAL);
	const past = new Date(Date.now() - 3600_000);
	utimesSync(path, past, past);
	return path;
}

/** Runs `act` once, at the first turn of the event loop at which this process holds `path` open. */
function whenOpen(path: string, act: () => void): { fired: () => boolean; stop: () => void } {
	let fired = false;
	let stopped = false;
	const tick = () => {
		if (stopped || fired) return;
		for (const fd of readdirSync("/proc/self/fd")) {
			let target = "";
			try {
				target = readlinkSync(`/proc/self/fd/${fd}`);
			} catch {
				continue; // the descriptor readdir itself used, closed by now
			}
			if (target === path) {
				fired = true;
				act();
				return;
			}
		}
		setImmediate(tick);
	};
	setImmediate(tick);
	return { fired: () => fired, stop: () => (stopped = true) };
}

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const textOf = (r: CallResult) => (r.ok ? r.content.map((c) => ("text" in c ? c.text : "")).join("") : "");
const codeOf = (r: CallResult) => (r.ok ? "ok" : r.error.code);

describe("a file that changes while read streams it", () => {
	it("appended to: the window, the line count and the recorded hash are the file as opened", async () => {
		const path = plant("grown.txt");
		const s = await session();
		const extra = Buffer.from("appended while it was read\n".repeat(40_000)); // ~1 MB, 40,000 lines
		const race = whenOpen(path, () => appendFileSync(path, extra));
		const r = await s.call("read", { path: "grown.txt" });
		race.stop();
		expect(race.fired()).toBe(true);
		expect(codeOf(r)).toBe("ok");
		// The count is the opened file's, not the grown one's (80,000 + 40,000).
		expect(textOf(r)).toContain(`of ${LINES} (50.0KB limit)`);
		expect(textOf(r).startsWith(`0000000 lorem`)).toBe(true);
		const rec = s.readState.get(path);
		expect(rec?.stat.size).toBe(ORIGINAL.length);
		expect(rec?.sha256).toBe(sha256(ORIGINAL));
		// keel changed nothing; the file is the original with the append after it.
		expect(readFileSync(path).equals(Buffer.concat([ORIGINAL, extra]))).toBe(true);
		// The read was of the file before the append: an overwrite now needs a new read.
		const w = await s.call("write", { path: "grown.txt", content: "x\n" });
		expect(codeOf(w)).toBe("STALE_READ");
		expect(readFileSync(path).length).toBe(ORIGINAL.length + extra.length);
	});

	it("truncated: CHANGED_ON_DISK, nothing recorded, the file left as the truncation made it", async () => {
		const path = plant("truncated.txt");
		const s = await session();
		const race = whenOpen(path, () => truncateSync(path, 1000));
		const r = await s.call("read", { path: "truncated.txt" });
		race.stop();
		expect(race.fired()).toBe(true);
		expect(codeOf(r)).toBe("CHANGED_ON_DISK");
		expect(r.ok ? "" : r.error.message).toContain("changed while it was being read");
		expect(s.readState.get(path)).toBeUndefined();
		// Never read: an overwrite is refused as one of a file not read.
		expect(codeOf(await s.call("write", { path: "truncated.txt", content: "x\n" }))).toBe("NOT_READ");
		expect(readFileSync(path).equals(ORIGINAL.subarray(0, 1000))).toBe(true);
		// Read again, it is the 1000-byte file.
		const again = await s.call("read", { path: "truncated.txt" });
		expect(textOf(again)).toBe(ORIGINAL.subarray(0, 1000).toString());
	});

	it("rewritten in place (same size): CHANGED_ON_DISK, nothing recorded", async () => {
		const path = plant("rewritten.txt");
		const s = await session();
		const race = whenOpen(path, () => {
			const fd = openSync(path, "r+");
			try {
				writeSync(fd, Buffer.from("X"), 0, 1, ORIGINAL.length - 10);
			} finally {
				closeSync(fd);
			}
		});
		const r = await s.call("read", { path: "rewritten.txt" });
		race.stop();
		expect(race.fired()).toBe(true);
		expect(codeOf(r)).toBe("CHANGED_ON_DISK");
		expect(s.readState.get(path)).toBeUndefined();
		const now = readFileSync(path);
		expect(now.length).toBe(ORIGINAL.length);
		expect(now[ORIGINAL.length - 10]).toBe(0x58);
	});

	it("unchanged: the same read succeeds and records the file's hash (the control)", async () => {
		const path = plant("control.txt");
		const s = await session();
		const r = await s.call("read", { path: "control.txt" });
		expect(textOf(r)).toContain(`of ${LINES} (50.0KB limit)`);
		expect(s.readState.get(path)?.sha256).toBe(sha256(ORIGINAL));
	});
});

describe("streamed reads at once on one session (one chunk arena: a read that finds it busy has its own buffers)", () => {
	it("each read shows and records its own file", async () => {
		const other = Buffer.from(
			`${Array.from({ length: 50_000 }, (_, i) => `other ${i} ${"x".repeat(60)}`).join("\n")}\n`,
		);
		const paths = [plant("one.txt"), ws().path("two.txt"), plant("three.txt")];
		writeFileSync(paths[1], other);
		const s = await session();
		const alone = [];
		for (const p of ["one.txt", "two.txt", "three.txt", "two.txt"])
			alone.push(textOf(await s.call("read", { path: p, offset: 7 })));
		const together = await Promise.all(
			["one.txt", "two.txt", "three.txt", "two.txt"].map((p) => s.call("read", { path: p, offset: 7 })),
		);
		expect(together.map(textOf)).toEqual(alone);
		expect(alone[1]).toContain("other 6 x");
		expect(alone[1]).toContain("of 50000");
		expect(alone[0]).toContain(`of ${LINES}`);
		expect(s.readState.get(paths[1])?.sha256).toBe(sha256(other));
		expect(s.readState.get(paths[2])?.sha256).toBe(sha256(ORIGINAL));
	});
});

describe("a file of one chunk: its hash is taken after the reply, of the bytes that were read", () => {
	/** ~600 KB: one chunk, large enough that the read defers its hash (read-window.ts). */
	const ONE_CHUNK = ORIGINAL.subarray(0, 600_000);
	const RIVAL = Buffer.from(ONE_CHUNK.toString().replaceAll("lorem", "LOREM"));

	it("rewritten the moment the reply is back: the record is the bytes shown, and an overwrite is refused", async () => {
		const path = ws().path("deferred.txt");
		writeFileSync(path, ONE_CHUNK);
		const s = await session();
		const r = await s.call("read", { path: "deferred.txt", limit: 5 });
		// Same size, before any idle turn of the event loop: the hash is not yet taken.
		writeFileSync(path, RIVAL);
		expect(codeOf(r)).toBe("ok");
		expect(textOf(r).startsWith("0000000 lorem")).toBe(true);
		expect(s.readState.get(path)?.sha256).toBe(sha256(ONE_CHUNK));
		expect(codeOf(await s.call("write", { path: "deferred.txt", content: "x\n" }))).toBe("STALE_READ");
		expect(readFileSync(path).equals(RIVAL)).toBe(true);
	});

	it("rewritten during the hash's delay, hashed unasked after it: still the bytes shown", async () => {
		const path = ws().path("delayed.txt");
		writeFileSync(path, ONE_CHUNK);
		const s = await session();
		expect(codeOf(await s.call("read", { path: "delayed.txt", limit: 5 }))).toBe("ok");
		writeFileSync(path, RIVAL); // inside the 20 ms before the hash is taken unasked
		await new Promise((r) => setTimeout(r, 60)); // the delay passes: the hash is taken now
		expect(s.readState.get(path)?.sha256).toBe(sha256(ONE_CHUNK));
		expect(codeOf(await s.call("write", { path: "delayed.txt", content: "x\n" }))).toBe("STALE_READ");
		expect(readFileSync(path).equals(RIVAL)).toBe(true);
	});

	it("read again before the delay passes, by a rival's hand in between: the newer record holds", async () => {
		const path = ws().path("reread.txt");
		writeFileSync(path, ONE_CHUNK);
		const s = await session();
		const first = await s.call("read", { path: "reread.txt", limit: 5 });
		const firstRecord = s.readState.get(path);
		writeFileSync(path, RIVAL);
		const second = await s.call("read", { path: "reread.txt", limit: 5 });
		expect([codeOf(first), codeOf(second)]).toEqual(["ok", "ok"]);
		await new Promise((r) => setTimeout(r, 60));
		// The replaced record still answers its own bytes (a call holding it); the map has the new.
		expect(firstRecord?.sha256).toBe(sha256(ONE_CHUNK));
		expect(s.readState.get(path)?.sha256).toBe(sha256(RIVAL));
		expect(codeOf(await s.call("write", { path: "reread.txt", content: "x\n" }))).toBe("ok");
		expect(readFileSync(path, "utf8")).toBe("x\n");
	});

	it("the chunk buffer is reused by the next read: each record keeps its own file's hash", async () => {
		const paths = ["a.txt", "b.txt", "c.txt"].map((n) => ws().path(n));
		const bodies = [ONE_CHUNK, RIVAL, Buffer.from(ONE_CHUNK.toString().replaceAll("ipsum", "IPSUM"))];
		for (const [i, p] of paths.entries()) writeFileSync(p, bodies[i]);
		const s = await session();
		// One after another in one turn of the loop's idle phase: none hashed before the next read.
		for (const p of paths) expect(codeOf(await s.call("read", { path: p, limit: 2 }))).toBe("ok");
		for (const [i, p] of paths.entries()) expect(s.readState.get(p)?.sha256).toBe(sha256(bodies[i]));
		// An edit through the records works on each (the hash matches what is on disk).
		const e = await s.call("edit", {
			path: "b.txt",
			edits: [{ oldText: "0000000 LOREM", newText: "0000000 edited" }],
		});
		expect(codeOf(e)).toBe("ok");
		expect(readFileSync(paths[1]).toString().startsWith("0000000 edited")).toBe(true);
	});
});

describe("readWindow refuses what is not a regular file", () => {
	it("a FIFO is NOT_A_FILE, at once (the open does not wait for a writer)", async () => {
		const fifo = ws().path("pipe");
		execFileSync("mkfifo", [fifo]);
		const fs = createLocalFs();
		fs.pinRoots([ws().root]);
		try {
			const window = { startLine: 1, maxLines: 10, maxBytes: 4096, maxLineBytes: 4096 };
			await expect(fs.readWindow(fifo, undefined, window)).rejects.toMatchObject({ code: "NOT_A_FILE" });
		} finally {
			fs.close();
		}
	});
});
