/**
 * The compare-and-swap of a small local file compares the bytes the edit was planned on with the
 * file's, directly, instead of hashing both; the hash of what was read is computed only
 * when a backend asks for it. The attack these tests play: another writer rewrites the file in
 * place with bytes of the same size inside one timestamp tick, so its identity (dev, inode, size,
 * mtime, ctime) is exactly what the edit planned on and only the bytes differ. The test gives the
 * commit that identity directly (a real same-tick rewrite cannot be forced from a test), and the
 * commit must still refuse, leaving the other writer's bytes and no temp file.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local.js";
import { KeelError } from "../../src/boundary/errors.js";
import { expectBytes } from "../../src/safety/read-state.js";
import { Session } from "../../src/session.js";

let root: string;
const sessions: Session[] = [];

beforeEach(async () => {
	root = await realpath(await mkdtemp(join(tmpdir(), "keel-cas-bytes-")));
});
afterEach(async () => {
	await Promise.all(sessions.splice(0).map((s) => s.close()));
	await rm(root, { recursive: true, force: true });
	await rm(state(), { recursive: true, force: true });
});

/** keel's state beside the root, not in it (there keel would move it and say so). */
const state = () => `${root}.state`;

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

function body(bytes: number, mark: string): Buffer {
	const line = `${mark} lorem ipsum dolor sit amet\n`;
	return Buffer.from(line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes));
}

async function session(): Promise<Session> {
	const s = await Session.create({ root, stateDir: state() });
	sessions.push(s);
	return s;
}

async function tempsLeft(): Promise<string[]> {
	return (await readdir(root)).filter((n) => n.startsWith(".keel-tmp-"));
}

describe.each([
	["small (2 KB: compared byte for byte)", 2000],
	["above the synchronous limit (200 KB: hashed)", 200_000],
])("compare-and-swap when only the bytes differ, %s", (_label, size) => {
	it("a same-size rewrite whose identity is the planned one is refused and kept", async () => {
		const s = await session();
		const path = join(root, "f.txt");
		const planned = body(size, "AAAA");
		const theirs = body(size, "BBBB");
		expect(theirs.length).toBe(planned.length);
		await writeFile(path, theirs);
		// The identity as the other writer left it: what a same-tick rewrite would leave unchanged.
		const identity = await s.backend.fs.stat(path);
		let error: unknown;
		try {
			await s.backend.fs.writeFile(path, body(size, "CCCC"), { expect: expectBytes(identity, planned) });
		} catch (e) {
			error = e;
		}
		expect(error).toBeInstanceOf(KeelError);
		expect((error as KeelError).code).toBe("CHANGED_ON_DISK");
		expect(await readFile(path)).toEqual(theirs);
		expect(await tempsLeft()).toEqual([]);
	});

	it("the file still holding the planned bytes is replaced", async () => {
		const s = await session();
		const path = join(root, "f.txt");
		const planned = body(size, "AAAA");
		await writeFile(path, planned);
		const identity = await s.backend.fs.stat(path);
		const ours = body(size, "CCCC");
		await s.backend.fs.writeFile(path, ours, { expect: expectBytes(identity, planned) });
		expect(await readFile(path)).toEqual(ours);
	});

	it("one byte changed in the middle is enough to refuse", async () => {
		const s = await session();
		const path = join(root, "f.txt");
		const planned = body(size, "AAAA");
		const theirs = Buffer.from(planned);
		theirs[size >> 1] ^= 1;
		await writeFile(path, theirs);
		const identity = await s.backend.fs.stat(path);
		await expect(
			s.backend.fs.writeFile(path, body(size, "CCCC"), { expect: expectBytes(identity, planned) }),
		).rejects.toMatchObject({ code: "CHANGED_ON_DISK" });
		expect(await readFile(path)).toEqual(theirs);
	});
});

describe("the hash of what was read, on demand", () => {
	it("is the SHA-256 of the bytes, computed once, for backends that compare hashes", () => {
		const bytes = body(3000, "AAAA");
		const stat = { type: "file" as const, size: 3000n } as never;
		const e = expectBytes(stat, bytes);
		expect(e.sha256).toBe(sha(bytes));
		expect(e.sha256).toBe(e.sha256);
		expect(e.bytes).toBe(bytes);
	});

	it("a 1.2 MB file (its read buffer reused for the new bytes) is still checked by hash: a concurrent in-place write is kept and the edit re-planned on top", async () => {
		const path = join(root, "big.txt");
		const lines = Array.from({ length: 40_000 }, (_, i) =>
			i === 5 ? "ANCHOR = 1" : `line ${i} lorem ipsum dolor`,
		);
		const original = `${lines.join("\n")}\n`;
		expect(original.length).toBeGreaterThan(1024 * 1024);
		await writeFile(path, original);
		const theirs = original.replace("line 9000 lorem", "LINE 9000 LOREM");
		let fired = false;
		const backend = createLocalBackend({
			hooks: {
				beforeCommit: async (t) => {
					if (fired || t !== path) return;
					fired = true;
					await writeFile(path, theirs); // same inode, same size
				},
			},
		});
		const s = await Session.create({ root, backend, stateDir: state() });
		sessions.push(s);
		const r = await s.call("edit", {
			path: "big.txt",
			edits: [{ oldText: "ANCHOR = 1", newText: "ANCHOR = 2" }],
		});
		expect(r.ok).toBe(true);
		expect(fired).toBe(true);
		expect(await readFile(path, "utf8")).toBe(theirs.replace("ANCHOR = 1", "ANCHOR = 2"));
		expect(await tempsLeft()).toEqual([]);
	});
});
