/**
 * The read state hashes small recorded data only when asked (safety/read-state.ts). What
 * must hold: the hash answered is the hash of the bytes recorded, for every record (replaced or not,
 * asked early or late); the buffers waiting for a hash stay within their bound however many files
 * are recorded; and a write after an edit still refuses a file another writer changed meanwhile.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FileStat } from "../../src/backend/types.js";
import { ReadState } from "../../src/safety/read-state.js";
import { Session } from "../../src/session.js";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const stat: FileStat = { type: "file", size: 0, mode: 0o644, dev: 1n, ino: 1n, mtimeNs: 0n, ctimeNs: 0n };
/** Data in a buffer of its own of `size` bytes (not a slice of Node's shared pool). */
const own = (size: number, fill: number) => Buffer.from(new Uint8Array(size).fill(fill).buffer);

describe("read state: hashes asked for later", () => {
	it("answers the hash of the recorded bytes, early or late, replaced or not", () => {
		const rs = new ReadState();
		const first = rs.record("/w/a", stat, Buffer.from("one\n"));
		const second = rs.record("/w/a", stat, Buffer.from("two\n"));
		expect(rs.get("/w/a")).toBe(second);
		// The replaced record still answers for what it recorded (a call in flight may hold it).
		expect(first.sha256).toBe(sha(Buffer.from("one\n")));
		expect(second.sha256).toBe(sha(Buffer.from("two\n")));
		expect(rs.pendingSize).toBe(0);
		// Spreading a record (as a compare-and-swap's expectation may) carries the hash.
		const copy = { ...rs.record("/w/b", stat, Buffer.from("three\n")) };
		expect(copy.sha256).toBe(sha(Buffer.from("three\n")));
	});

	it("keeps at most 1 MiB of buffers waiting, over 2,000 files, and every hash stays right", () => {
		const rs = new ReadState();
		const recs = [];
		for (let i = 0; i < 2000; i++) {
			const data = own(4096 + (i % 7), i % 251);
			recs.push({ rec: rs.record(`/w/f${i}`, stat, data), want: sha(data) });
			expect(rs.pendingSize).toBeLessThanOrEqual(1024 * 1024);
		}
		expect(rs.pendingSize).toBeGreaterThan(512 * 1024); // it did wait, up to the bound
		for (const { rec, want } of recs) expect(rec.sha256).toBe(want);
		expect(rs.pendingSize).toBe(0);
	});

	it("the same file recorded again and again holds one buffer, not one per record", () => {
		const rs = new ReadState();
		for (let i = 0; i < 1000; i++) rs.record("/w/same", stat, own(2048, i % 256));
		expect(rs.pendingSize).toBe(2048);
		rs.forget("/w/same");
		expect(rs.pendingSize).toBe(0);
	});

	it("data in a large buffer is hashed at once (a small view must not keep a large buffer)", () => {
		const rs = new ReadState();
		const big = own(1024 * 1024, 7);
		const view = big.subarray(10, 110);
		const rec = rs.record("/w/view", stat, view);
		expect(rs.pendingSize).toBe(0);
		big.fill(9); // changing the large buffer afterwards cannot change what was recorded
		expect(rec.sha256).toBe(sha(Buffer.alloc(100, 7)));
	});
});

describe("read state: hashes a backend takes later", () => {
	/** A LaterDigest that counts what the read state asks of it. */
	const later = (bytes: Buffer) => {
		const seen = { hex: 0, superseded: 0 };
		return {
			seen,
			digest: {
				get hex() {
					seen.hex++;
					return sha(bytes);
				},
				superseded() {
					seen.superseded++;
				},
			},
		};
	};

	it("tells a replaced or forgotten record's digest, and still answers a caller holding it", () => {
		const state = new ReadState();
		const a = later(own(100, 1));
		const b = later(own(100, 2));
		const first = state.recordHash("/r/f", stat, a.digest);
		expect(a.seen).toEqual({ hex: 0, superseded: 0 });
		state.recordHash("/r/f", stat, b.digest);
		expect(a.seen.superseded).toBe(1);
		expect(b.seen.superseded).toBe(0);
		// A call in flight holding the first record still gets that record's own hash.
		expect(first.sha256).toBe(sha(own(100, 1)));
		expect(state.get("/r/f")?.sha256).toBe(sha(own(100, 2)));
		state.forget("/r/f");
		expect(b.seen.superseded).toBe(1);
		expect(a.seen.superseded).toBe(1);
	});
});

describe("read state: a write after an edit", () => {
	let root: string;
	let s: Session;
	beforeEach(async () => {
		root = await realpath(await mkdtemp(join(tmpdir(), "keel-read-state-")));
		// keel's state beside the root, not in it (there keel would move it and say so).
		s = await Session.create({ root, stateDir: `${root}.state` });
	});
	afterEach(async () => {
		await s.close();
		await rm(root, { recursive: true, force: true });
		await rm(`${root}.state`, { recursive: true, force: true });
	});

	it("overwrites the file it edited, and refuses once another writer changed it", async () => {
		const path = join(root, "f.txt");
		await writeFile(path, "value = 41\n");
		expect((await s.call("edit", { path: "f.txt", edits: [{ oldText: "41", newText: "42" }] })).ok).toBe(
			true,
		);
		// The edit's record answers the hash of the bytes it wrote.
		expect(s.readState.get(path)?.sha256).toBe(sha(Buffer.from("value = 42\n")));
		expect((await s.call("write", { path: "f.txt", content: "written\n" })).ok).toBe(true);
		expect(await readFile(path, "utf8")).toBe("written\n");
		expect(
			(await s.call("edit", { path: "f.txt", edits: [{ oldText: "written", newText: "edited" }] })).ok,
		).toBe(true);
		// Another writer, after the edit: the write planned on the edit's record must not land.
		await writeFile(path, "theirs, longer than before\n");
		const w = await s.call("write", { path: "f.txt", content: "mine\n" });
		expect(w.ok).toBe(false);
		expect(w.ok ? "" : w.error.code).toBe("STALE_READ");
		expect(await readFile(path, "utf8")).toBe("theirs, longer than before\n");
	});
});
