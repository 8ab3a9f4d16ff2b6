/**
 * `read` on the ssh backend against another writer on the host that atomically replaces the file
 * (temp file + rename) right after every stat the tool makes. The ssh backend reads a file as
 * opened (FileOps.readCurrent through the file helper's k_readc): the bytes come with the stat of
 * the handle they were read from, so the newer file is read and recorded, not refused. Files over
 * the size the guard's look keeps (256 KiB) go to k_readc; smaller ones are served by that look,
 * one handle's stat and bytes too. What is not a newer regular file is refused (a FIFO never
 * waited on). The sshd is this machine, so the rival works on the same files.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Backend } from "../../src/backend/types.js";
import { Session } from "../../src/session.js";
import {
	afterStatOf,
	contentOf,
	expectOnlyTheNewestEdited,
	lineRange,
	rival,
	versionText,
} from "../fixtures/rival.js";
import { pythonMissing, useSshBackend } from "../fixtures/ssh-backend.js";
import { sshdMissing } from "../fixtures/sshd.js";

const missing = sshdMissing() ?? pythonMissing();
if (missing) console.warn(`skipping the ssh read-rival tests: ${missing}`);
const live = useSshBackend(missing);

let scratch: string;
let dir: string;
let path: string;
beforeEach(async () => {
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-ssh-rival-")));
	dir = join(scratch, "root");
	path = join(dir, "f.txt");
	await mkdir(dir);
});
afterEach(async () => {
	await rm(scratch, { recursive: true, force: true });
});

/** ~400 KB: over what the guard's look keeps, so the read is k_readc's. */
const large = (n: number) => versionText(n, 4000);
const small = (n: number) => versionText(n, 40);

/** The ssh backend, with `act` run after every stat of `path` while on. */
function afterStat(act: () => Promise<void>): { backend: Backend; off: () => void } {
	const { backend, off } = afterStatOf(live.backend, path, act);
	// close() is the file's (useSshBackend): the sessions here must not close the shared backend.
	return { backend: { ...backend, close: async () => {} }, off };
}

describe.skipIf(missing)("ssh: read against a rival replacing the file after every stat", () => {
	it("a large file: the newer one is read as opened and recorded; an edit of its lines lands, of the old is refused", async () => {
		await writeFile(path, large(0));
		const r0 = rival(path, large);
		const { backend, off } = afterStat(r0.replace);
		const s = await Session.create({ root: dir, backend, profile: "unified" });
		try {
			const part = contentOf(await s.call("read", { path: "f.txt", offset: 7, limit: 3 }));
			const n = r0.count();
			expect(n).toBeGreaterThan(0); // the trap fired
			const lines = large(n).split("\n").slice(0, -1);
			expect(part).toBe(
				`${lines.slice(6, 9).join("\n")}\n\n[${lines.length - 9} more lines in file. Use offset=10 to continue.]`,
			);
			off();
			await expectOnlyTheNewestEdited(s, path, large, r0.count());
		} finally {
			await s.close();
		}
	});

	it("a small file: one version read whole, and an edit lands only on the version on disk", async () => {
		await writeFile(path, small(0));
		const r0 = rival(path, small);
		const { backend, off } = afterStat(r0.replace);
		const s = await Session.create({ root: dir, backend, profile: "unified" });
		try {
			const whole = contentOf(await s.call("read", { path: "f.txt" }));
			const shown = Number(/^v(\d+) /.exec(whole)?.[1]);
			// Whichever version was read, it was read whole: no mix of two.
			expect(whole).toBe(small(shown).slice(0, -1));
			off();
			const last = r0.count();
			const r = await lineRange(s, small(shown).split("\n")[6], "ours 7");
			if (shown === last) {
				contentOf(r);
				expect(await readFile(path, "utf8")).toBe(small(last).replace(/^v\d+ line 7; x+$/m, "ours 7"));
			} else {
				expect(r.ok).toBe(false);
				expect(await readFile(path, "utf8")).toBe(small(last));
			}
		} finally {
			await s.close();
		}
	});

	it.each([
		["small", small(0)],
		["large", large(0)],
	])("a FIFO renamed over the %s file after the stat: refused at once", async (_, text) => {
		await writeFile(path, text);
		let fired = 0;
		const { backend } = afterStat(async () => {
			if (fired++ > 0) return;
			execFileSync("mkfifo", [join(dir, ".fifo")]);
			await rename(join(dir, ".fifo"), path);
		});
		const s = await Session.create({ root: dir, backend });
		try {
			const r = await s.call("read", { path: "f.txt" });
			expect(fired).toBe(1);
			// The small file's look was taken before the swap: it is that version, whole.
			if (text.length <= 256 * 1024 && r.ok) expect(contentOf(r)).toBe(text.slice(0, -1));
			else expect(r.ok ? "" : r.error.code).toMatch(/^(CHANGED_ON_DISK|NOT_A_FILE)$/);
		} finally {
			await s.close();
		}
	});
});
