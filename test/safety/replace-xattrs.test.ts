/**
 * Extended attributes survive a replace: `user.*` attributes
 * (binary values, a name that is not UTF-8), POSIX ACLs and `trusted.*` are on the replacement
 * after edit, the file tool, apply_patch and write; file capabilities are dropped, as the kernel
 * drops them on a write in place. An attribute changed between the plan and the commit fails the
 * swap (nothing lost), a rival swapping the name for a file with other attributes never gets its
 * attributes onto the replacement, and an attribute the caller cannot set makes the write refuse.
 * Attributes are set and read with python3's os.setxattr/os.getxattr, not with keel's own FFI.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { beforeEach, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { Session } from "../../src/session.js";
import { editTools, ok } from "../fixtures/edit-via.js";
import { BIN, runKeel, SETPRIV } from "../fixtures/keel-cli.js";
import { useWorkspace } from "../fixtures/workspace.js";
import {
	type Attrs,
	acl,
	attrsOf,
	expectOriginsMatchContents,
	hex,
	PY,
	py,
	setAttrs,
	xattrSupport,
} from "../fixtures/xattrs.js";

const AS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

/** user.* on this file system, through real python3: the whole file is skipped without it. */
const support = xattrSupport(tmpdir());

const USER_ATTRS: Attrs = {
	[hex("user.note")]: hex("keep me"),
	// Binary, with NULs, 3000 bytes: fits one ext4 block.
	[hex("user.blob")]: Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256)).toString("hex"),
	// A name that is not UTF-8.
	[Buffer.concat([Buffer.from("user.raw-"), Buffer.from([0xff, 0xfe])]).toString("hex")]: hex("x"),
};
const ACL_NAME = hex("system.posix_acl_access");

const ws = useWorkspace({ prefix: "keel-xattr-", session: false });
beforeEach(async () => {
	// The non-root caller below must reach the root through its parent.
	await chmod(ws().outside("."), 0o755);
});

function open(profile: "pi" | "unified", backend = createLocalBackend()): Promise<Session> {
	return ws().open({ profile, backend });
}

async function put(name: string, attrs: Attrs, mode = 0o640): Promise<string> {
	const p = ws().path(name);
	await writeFile(p, "value = 41\n");
	await chmod(p, mode);
	setAttrs(p, attrs);
	return p;
}

describe.skipIf(support !== "")(
	`extended attributes on replace${support ? ` (skipped: ${support})` : ""}`,
	() => {
		describe.each(editTools((profile) => open(profile)))("through %s", (_tool, via) => {
			it("user attributes and a POSIX ACL are on the replacement, with the mode", async () => {
				const p = await put("f.txt", { ...USER_ATTRS, [ACL_NAME]: acl(NOBODY) });
				const before = await stat(p);
				ok(await via("f.txt", "value = 41", "value = 42"));
				const after = await stat(p);
				expect(after.ino).not.toBe(before.ino); // replaced by rename, not written in place
				expect(await readFile(p, "utf8")).toBe("value = 42\n");
				expect(attrsOf(p)).toEqual({ ...USER_ATTRS, [ACL_NAME]: acl(NOBODY) });
				expect(after.mode & 0o7777).toBe(before.mode & 0o7777);
			});
		});

		it("write over a read file keeps them too", async () => {
			const p = await put("w.txt", USER_ATTRS, 0o600);
			const s = await open("pi");
			ok(await s.call("read", { path: "w.txt" }));
			ok(await s.call("write", { path: "w.txt", content: "new\n" }));
			expect(await readFile(p, "utf8")).toBe("new\n");
			expect(attrsOf(p)).toEqual(USER_ATTRS);
		});

		/** A session whose backend runs `strike` (default: set `user.late`) once, right before the commit of `name`. */
		async function rivalAtCommit(name: string, strike = (t: string) => setAttrs(t, LATE)): Promise<Session> {
			const target = ws().path(name);
			let fired = false;
			const backend = createLocalBackend({
				hooks: {
					beforeCommit: (t) => {
						if (fired || t !== target) return;
						fired = true;
						strike(t);
					},
				},
			});
			return open("pi", backend);
		}
		const LATE: Attrs = { [hex("user.late")]: hex("added by a rival") };

		it("an attribute added between the plan and the commit fails a write's swap; nothing is lost", async () => {
			const p = await put("late.txt", USER_ATTRS);
			const s = await rivalAtCommit("late.txt");
			ok(await s.call("read", { path: "late.txt" }));
			const r = await s.call("write", { path: "late.txt", content: "mine\n" });
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.error.code).toBe("CHANGED_ON_DISK");
			expect(await readFile(p, "utf8")).toBe("value = 41\n");
			expect(attrsOf(p)).toEqual({ ...USER_ATTRS, ...LATE });
			expect(readdirSync(ws().root).filter((n) => n.startsWith(".keel-tmp"))).toEqual([]);
		});

		it("a chmod between the plan and the commit fails a write's swap, even within one clock tick", async () => {
			const p = await put("mode.txt", USER_ATTRS, 0o640);
			const s = await rivalAtCommit("mode.txt", (t) => py("import os,sys; os.chmod(sys.argv[1], 0o600)", t));
			ok(await s.call("read", { path: "mode.txt" }));
			const r = await s.call("write", { path: "mode.txt", content: "mine\n" });
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.error.code).toBe("CHANGED_ON_DISK");
			expect((await stat(p)).mode & 0o777).toBe(0o600);
			expect(await readFile(p, "utf8")).toBe("value = 41\n");
		});

		it("an edit re-planned after that rival keeps the rival's attribute too", async () => {
			const p = await put("late.txt", USER_ATTRS);
			const r = ok(
				await (await rivalAtCommit("late.txt")).call("edit", {
					path: "late.txt",
					edits: [{ oldText: "41", newText: "42" }],
				}),
			);
			expect((r.details as { replanned?: number }).replanned).toBe(1);
			expect(await readFile(p, "utf8")).toBe("value = 42\n");
			expect(attrsOf(p)).toEqual({ ...USER_ATTRS, ...LATE });
		});

		it("a rival swapping the name for its own file never gets its attributes onto the replacement", async () => {
			const a = await put("a.txt", { [hex("user.origin")]: hex("A") });
			const b = ws().path("b.txt");
			await writeFile(b, "the rival's file\n");
			setAttrs(b, { [hex("user.origin")]: hex("B") });
			// a.txt → hold, b.txt → a.txt, a.txt → b.txt, hold → a.txt, as fast as it can.
			const swapper = spawn(PY, [
				"-c",
				"import os,sys,time\nd=sys.argv[1]\nend=time.time()+60\nwhile time.time()<end:\n try:\n  os.rename(d+'/a.txt',d+'/hold'); os.rename(d+'/b.txt',d+'/a.txt'); os.rename(d+'/a.txt',d+'/b.txt'); os.rename(d+'/hold',d+'/a.txt')\n except OSError: pass",
				ws().root,
			]);
			const s = await open("pi");
			let done = 0;
			try {
				for (let i = 0; i < 300; i++) {
					const r = await s.call("edit", {
						path: "a.txt",
						edits: [{ oldText: "value = ", newText: "value = 1" }],
					});
					if (r.ok) done++;
				}
			} finally {
				swapper.kill("SIGKILL");
				await new Promise((r) => swapper.once("close", r));
			}
			// Each name that exists holds a file carrying its own origin.
			expectOriginsMatchContents(ws().root);
			expect(existsSync(a) || existsSync(ws().path("hold"))).toBe(true);
			// How many edits won the race depends on the scheduler: reported, not asserted.
			console.log(`rival swap: ${done} of 300 edits committed`);
		});

		describe.skipIf(!AS_ROOT)("as root (skipped unless root)", () => {
			it("trusted.* attributes are kept", async () => {
				const p = await put("t.txt", { [hex("trusted.mark")]: hex("root only") });
				ok(
					await (await open("pi")).call("edit", { path: "t.txt", edits: [{ oldText: "41", newText: "42" }] }),
				);
				expect(attrsOf(p)).toEqual({ [hex("trusted.mark")]: hex("root only") });
			});

			it("file capabilities are dropped, as a write in place drops them", async () => {
				// VFS_CAP_REVISION_2 with CAP_NET_RAW permitted.
				const cap = Buffer.alloc(20);
				cap.writeUInt32LE(0x02000000, 0);
				cap.writeUInt32LE(1 << 13, 4);
				const attrs = { ...USER_ATTRS, [hex("security.capability")]: cap.toString("hex") };
				const inPlace = await put("inplace.bin", attrs, 0o755);
				py("import sys\nf=open(sys.argv[1],'r+b'); f.write(b'v'); f.close()", inPlace);
				expect(attrsOf(inPlace)).toEqual(USER_ATTRS); // the kernel's own rule on this machine
				const p = await put("tool.bin", attrs, 0o755);
				ok(
					await (await open("pi")).call("edit", {
						path: "tool.bin",
						edits: [{ oldText: "41", newText: "42" }],
					}),
				);
				expect(attrsOf(p)).toEqual(USER_ATTRS);
			});
		});

		const canRunAsNobody = AS_ROOT && SETPRIV !== undefined && existsSync(BIN);
		describe.skipIf(!canRunAsNobody)(
			`a non-root caller (nobody via setpriv)${canRunAsNobody ? "" : " (skipped: needs root, setpriv and a build)"}`,
			() => {
				beforeEach(async () => {
					await chown(ws().root, NOBODY, NOBODY);
				});
				const editAsNobody = async (name: string) => {
					const args = [
						"call",
						"edit",
						JSON.stringify({ path: name, edits: [{ oldText: "41", newText: "42" }] }),
					];
					const r = await runKeel(ws().root, args, {
						asUser: NOBODY,
						env: { ...process.env, HOME: ws().outside(".") },
					});
					return { code: r.code, out: r.stdout + r.stderr };
				};

				it("its own file keeps its user attributes and ACL", async () => {
					const p = await put("mine.txt", { ...USER_ATTRS, [ACL_NAME]: acl(0) }, 0o660);
					await chown(p, NOBODY, NOBODY);
					const r = await editAsNobody("mine.txt");
					expect(r.out).not.toContain('"ok":false');
					expect(r.code).toBe(0);
					expect(await readFile(p, "utf8")).toBe("value = 42\n");
					expect(attrsOf(p)).toEqual({ ...USER_ATTRS, [ACL_NAME]: acl(0) });
					expect((await stat(p)).uid).toBe(NOBODY);
				});

				it("an attribute it cannot set (security.*, set by root) makes the edit refuse; the file is left alone", async () => {
					const p = await put("labelled.txt", { [hex("security.keel-test")]: hex("label") }, 0o660);
					await chown(p, NOBODY, NOBODY);
					const before = await stat(p);
					const r = await editAsNobody("labelled.txt");
					expect(r.code).not.toBe(0);
					expect(r.out).toContain("PERMISSION_DENIED");
					expect(r.out).toContain("security.keel-test");
					const after = await stat(p);
					expect(after.ino).toBe(before.ino);
					expect(await readFile(p, "utf8")).toBe("value = 41\n");
					expect(attrsOf(p)).toEqual({ [hex("security.keel-test")]: hex("label") });
					expect(readdirSync(ws().root).filter((n) => n.startsWith(".keel-tmp"))).toEqual([]);
				});
			},
		);
	},
);
