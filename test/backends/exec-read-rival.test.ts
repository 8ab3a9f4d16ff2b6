/**
 * The exec backend reads a file as opened (FileOps.readCurrent, src/backend/exec/read-current.ts):
 * the bytes come with the stat of the descriptor they were read from, in one transport call. A
 * rival's replace between the tool's stat and the read is the newer file read and recorded, not
 * CHANGED_ON_DISK. What is not a regular file is refused: a link renamed over the file (pointing
 * out of the root) is never read through, checked against the descriptor after the open; a FIFO
 * already at the name is not opened. The target is this machine through a plain spawn per call.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, realpath, rename, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scriptError } from "../../src/backend/exec/errors.js";
import { createExecBackend } from "../../src/backend/exec/index.js";
import { readCurrentScript } from "../../src/backend/exec/read-current.js";
import { statFormat } from "../../src/backend/exec/scripts.js";
import { runScript } from "../../src/backend/exec/transport.js";
import { parseReadCurrentReply } from "../../src/backend/remote/read-current-reply.js";
import { Session } from "../../src/session.js";
import { afterStatOf, contentOf, expectOnlyTheNewestEdited, rival, versionText } from "../fixtures/rival.js";
import { PY, spawnTransport } from "../fixtures/xattrs.js";

const transport = spawnTransport();
let scratch: string;
let dir: string;
let path: string;
beforeEach(async () => {
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-exec-rival-")));
	dir = join(scratch, "root");
	path = join(dir, "f.txt");
	await mkdir(dir);
});
afterEach(async () => {
	await rm(scratch, { recursive: true, force: true });
});

const version = (n: number) => versionText(n, 400);

/** readCurrent's script run directly. */
async function readCurrentVia(p: string, bound?: number) {
	const r = await runScript(transport, readCurrentScript(statFormat(true)), [
		p,
		bound === undefined ? "" : String(bound),
	]);
	if (r.exitCode !== 0) throw scriptError(r, p);
	return parseReadCurrentReply(r.stdout, p, bound);
}

describe("exec: read against a rival replacing the file after every stat", () => {
	it("the newer file is read as opened and recorded; an edit of its lines lands, of the old is refused", async () => {
		await writeFile(path, version(0));
		const r0 = rival(path, version);
		const { backend, off } = afterStatOf(createExecBackend({ transport }), path, r0.replace);
		const s = await Session.create({ root: dir, backend, profile: "unified" });
		try {
			const part = contentOf(await s.call("read", { path: "f.txt", offset: 7, limit: 3 }));
			const n = r0.count();
			expect(n).toBeGreaterThan(0); // the trap fired
			const lines = version(n).split("\n").slice(0, -1);
			expect(part).toBe(
				`${lines.slice(6, 9).join("\n")}\n\n[${lines.length - 9} more lines in file. Use offset=10 to continue.]`,
			);
			off();
			await expectOnlyTheNewestEdited(s, path, version, r0.count());
		} finally {
			await s.close();
		}
	});
});

describe("exec readCurrent's script", () => {
	it("reads the file whole, or bounded exactly to its size at the open; larger than the bound: no bytes", async () => {
		await writeFile(path, version(1));
		const whole = await readCurrentVia(path);
		expect(whole.bytes?.toString()).toBe(version(1));
		expect(whole.stat.size).toBe(version(1).length);
		expect(whole.stat.type).toBe("file");
		const bounded = await readCurrentVia(path, version(1).length);
		expect(bounded.bytes?.toString()).toBe(version(1));
		const big = await readCurrentVia(path, 100);
		expect(big.bytes).toBeNull();
		expect(big.stat.size).toBe(version(1).length);
	});

	it("a link in the last component is refused, a directory is EISDIR, a missing file ENOENT", async () => {
		const secret = join(scratch, "secret.txt");
		await writeFile(secret, "outside the root\n");
		await symlink(secret, path);
		await expect(readCurrentVia(path)).rejects.toMatchObject({ code: "ELOOP" });
		await expect(readCurrentVia(dir)).rejects.toMatchObject({ code: "EISDIR" });
		await expect(readCurrentVia(join(dir, "none"))).rejects.toMatchObject({ code: "ENOENT" });
	});

	it("a rival renaming a link to a file outside the root over the name, again and again: no read shows the outside file", async () => {
		const secret = join(scratch, "secret.txt");
		await writeFile(secret, "outside the root\n");
		await writeFile(path, "inside\n");
		// The rival alternates the name between a regular file and a link out, by rename (atomic).
		const swapper = spawn(PY, [
			"-c",
			"import os,sys,time,random\nd,s=sys.argv[1],sys.argv[2]\nwhile True:\n try:\n  os.symlink(s,d+'/l'); os.rename(d+'/l',d+'/f.txt'); time.sleep(random.random()*0.001)\n  open(d+'/r','w').write('inside\\n'); os.rename(d+'/r',d+'/f.txt'); time.sleep(random.random()*0.003)\n except OSError: pass",
			dir,
			secret,
		]);
		let read = 0;
		let refused = 0;
		try {
			for (let i = 0; i < 300; i++) {
				try {
					const r = await readCurrentVia(path);
					expect(r.bytes?.toString()).toBe("inside\n");
					read++;
				} catch (e) {
					expect((e as { code?: string }).code).toMatch(/^(ELOOP|CHANGED_ON_DISK|ENOENT)$/);
					refused++;
				}
			}
		} finally {
			swapper.kill("SIGKILL");
		}
		console.log(`exec readCurrent against a link swapper: ${read} read, ${refused} refused`);
		expect(read + refused).toBe(300);
	}, 60_000);
});

describe("exec readCurrent's script: a FIFO", () => {
	it("renamed over the file before the read: CHANGED_ON_DISK at once", async () => {
		await writeFile(path, "inside\n");
		execFileSync("mkfifo", [join(dir, "pipe")]);
		await rename(join(dir, "pipe"), path);
		await expect(readCurrentVia(path)).rejects.toMatchObject({ code: "CHANGED_ON_DISK" });
	});
});
