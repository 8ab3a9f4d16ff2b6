/**
 * Shared helpers for the bad-input and behaviour suites: a throwaway tree on disk, a session over
 * it, and a snapshot of the whole tree (paths, types, modes, bytes) to prove a failing call left
 * everything as it was.
 */

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
	chmodSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { ERROR_CATALOGUE, type ErrorCode } from "../../src/boundary/errors.js";
import type { CallResult } from "../../src/session.js";

/** A 1x1 PNG. */
export const PNG_1x1 = Buffer.from(
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
	"base64",
);

/** Bytes with NUL in them: what rg and git call binary. */
export const BINARY_BYTES = Buffer.from([
	0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00, 0x00, 0x00, 0xff, 0xfe, 0x0a, 0x41,
]);

/** "café\n" in Latin-1: no NUL, but not valid UTF-8. */
export const LATIN1_BYTES = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]);

export interface Entry {
	type: "file" | "dir" | "symlink" | "fifo" | "other";
	mode: number;
	/** sha256 and size of a file's bytes. */
	sha256?: string;
	size?: number;
	/** A file's inode and mtime: a rewrite with identical bytes still shows. */
	ino?: bigint;
	mtimeNs?: bigint;
	/** A symlink's target. */
	target?: string;
}

/**
 * Every entry below `dir` (not following links), keyed by relative path. Trees are made, walked
 * and removed with synchronous calls: each test makes one, snapshots it twice and removes it, and
 * the promise API's hop through the thread pool costs more than these small operations.
 */
export async function snapshotTree(dir: string): Promise<Record<string, Entry>> {
	const out: Record<string, Entry> = {};
	const walk = (abs: string, rel: string) => {
		const st = lstatSync(abs, { bigint: true });
		const mode = Number(st.mode) & 0o7777;
		if (st.isDirectory()) {
			out[rel || "."] = { type: "dir", mode };
			const names = readdirSync(abs).sort();
			for (const name of names) walk(join(abs, name), rel ? `${rel}/${name}` : name);
		} else if (st.isFile()) {
			const bytes = readFileSync(abs);
			out[rel] = {
				type: "file",
				mode,
				size: bytes.length,
				sha256: createHash("sha256").update(bytes).digest("hex"),
				ino: st.ino,
				mtimeNs: st.mtimeNs,
			};
		} else if (st.isSymbolicLink()) {
			out[rel] = { type: "symlink", mode, target: readlinkSync(abs) };
		} else if (st.isFIFO()) {
			out[rel] = { type: "fifo", mode };
		} else {
			out[rel] = { type: "other", mode };
		}
	};
	walk(dir, "");
	return out;
}

export async function makeTempDir(prefix = "keel-bad-input-"): Promise<string> {
	return mkdtempSync(join(tmpdir(), prefix));
}

export async function removeDir(dir: string | undefined): Promise<void> {
	if (dir) rmSync(dir, { recursive: true, force: true });
}

export interface Tree {
	/** Holds root/, outside/ and ro/: the snapshot covers all three. */
	base: string;
	root: string;
	outside: string;
	ro: string;
	spill: string;
}

/**
 * The standard tree:
 *   root/  a.txt dup.txt empty.txt exec.sh(755) image.png blob.bin latin1.txt dir/nested.txt
 *          .git/config link-out -> ../outside/secret.txt link-outdir -> ../outside
 *          dangling -> ../outside/nothing.txt
 *   outside/secret.txt          (not a root; also the session's home)
 *   ro/ro.txt                   (a read-only root)
 */
export async function makeTree(opts: { special?: boolean } = {}): Promise<Tree> {
	const base = await makeTempDir();
	const root = join(base, "root");
	const outside = join(base, "outside");
	const ro = join(base, "ro");
	const spill = await makeTempDir("keel-bad-input-spill-");
	mkdirSync(join(root, "dir"), { recursive: true });
	mkdirSync(join(root, ".git"));
	mkdirSync(outside);
	mkdirSync(ro);
	writeFileSync(join(root, "a.txt"), "alpha\nbeta\ngamma\n");
	writeFileSync(join(root, "dup.txt"), "same\nother\nsame\n");
	writeFileSync(join(root, "empty.txt"), "");
	writeFileSync(join(root, "exec.sh"), "#!/bin/sh\necho hi\n");
	chmodSync(join(root, "exec.sh"), 0o755);
	writeFileSync(join(root, "image.png"), PNG_1x1);
	writeFileSync(join(root, "blob.bin"), BINARY_BYTES);
	writeFileSync(join(root, "latin1.txt"), LATIN1_BYTES);
	writeFileSync(join(root, "dir", "nested.txt"), "nested\n");
	writeFileSync(join(root, ".git", "config"), "[core]\n");
	writeFileSync(join(outside, "secret.txt"), "secret\n");
	writeFileSync(join(ro, "ro.txt"), "read only\n");
	symlinkSync("../outside/secret.txt", join(root, "link-out"));
	symlinkSync("../outside", join(root, "link-outdir"));
	symlinkSync("../outside/nothing.txt", join(root, "dangling"));
	if (opts.special) {
		execFileSync("mkfifo", [join(root, "fifo")]);
		symlinkSync("loop", join(root, "loop"));
	}
	return { base, root, outside, ro, spill };
}

/** The tree is unchanged: first the list of paths (a readable diff), then every entry. */
export function expectSameTree(after: Record<string, Entry>, before: Record<string, Entry>): void {
	expect(Object.keys(after), "paths on disk changed").toEqual(Object.keys(before));
	for (const [path, entry] of Object.entries(before)) expect(after[path], `${path} changed`).toEqual(entry);
}

/** Asserts a structured failure: the code, a non-empty bounded message and the catalogue's retry class. */
export function expectFailure(r: CallResult, code: ErrorCode): void {
	if (r.ok) {
		expect.fail(`expected ${code}, got ok: ${JSON.stringify(r.content).slice(0, 500)}`);
		return;
	}
	expect({ code: r.error.code, message: r.error.message.slice(0, 400) }).toMatchObject({ code });
	expect(r.error.message.trim().length).toBeGreaterThan(0);
	// One or two sentences a model can act on: never an echo of a megabyte-sized argument. A command's
	// failure carries its (bounded, 50KB) output, as in pi.
	const bound = ["COMMAND_FAILED", "TIMEOUT", "ABORTED"].includes(code) ? 56 * 1024 : 2000;
	expect(r.error.message.length).toBeLessThan(bound);
	expect(["retry", "change-approach", "retarget"]).toContain(r.error.retry);
	expect(r.error.retry).toBe(ERROR_CATALOGUE[code]);
}

/** The text parts of a successful result, joined. */
export function textOf(r: CallResult): string {
	if (!r.ok) {
		expect.fail(`expected ok, got ${r.error.code}: ${r.error.message.slice(0, 500)}`);
		return "";
	}
	return r.content
		.filter((c) => c.type === "text")
		.map((c) => (c as { text: string }).text)
		.join("\n");
}
