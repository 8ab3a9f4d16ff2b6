import { existsSync } from "node:fs";
import { chmod, chown, readFile, stat, writeFile } from "node:fs/promises";
import { beforeEach, describe, expect, it } from "vitest";
import { BIN, runKeel, SETPRIV } from "../fixtures/keel-cli.js";
import { useWorkspace } from "../fixtures/workspace.js";

const AS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;
const USER = 1000;

// Each test opens its session itself (or runs keel as another user).
const ws = useWorkspace({ prefix: "keel-owner-", session: false });
beforeEach(async () => {
	// The non-root caller below must reach the root through its parent.
	await chmod(ws().outside("."), 0o755);
});

async function put(name: string, mode: number, uid: number, gid: number): Promise<string> {
	const p = ws().path(name);
	await writeFile(p, "value = 1\n");
	await chown(p, uid, gid);
	await chmod(p, mode);
	return p;
}

describe.skipIf(!AS_ROOT)("root replacing another user's file (skipped unless root)", () => {
	it("an edit keeps the owner, group and a 0640 mode", async () => {
		const p = await put("user.txt", 0o640, USER, USER);
		const s = await ws().open();
		const r = await s.call("edit", { path: "user.txt", edits: [{ oldText: "1", newText: "2" }] });
		expect(r.ok).toBe(true);
		const st = await stat(p);
		expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([USER, USER, 0o640]);
		expect(await readFile(p, "utf8")).toBe("value = 2\n");
	});

	it("a user's setuid file stays the user's (never a setuid-root file)", async () => {
		const p = await put("tool.sh", 0o4755, USER, USER);
		const s = await ws().open();
		expect((await s.call("read", { path: "tool.sh" })).ok).toBe(true);
		const r = await s.call("write", { path: "tool.sh", content: "value = 3\n" });
		expect(r.ok).toBe(true);
		const st = await stat(p);
		expect([st.uid, st.gid, st.mode & 0o7777]).toEqual([USER, USER, 0o4755]);
	});
});

async function keelAsNobody(args: string[]): Promise<{ code: number | null; stdout: string }> {
	const r = await runKeel(ws().root, args, {
		asUser: NOBODY,
		env: { ...process.env, HOME: ws().outside(".") },
	});
	return { code: r.code, stdout: r.stdout + r.stderr };
}

const canRunAsNobody = AS_ROOT && SETPRIV !== undefined && existsSync(BIN);
describe.skipIf(!canRunAsNobody)(
	`a non-root caller (nobody via setpriv)${canRunAsNobody ? "" : " (skipped: needs root, setpriv and a build)"}`,
	() => {
		beforeEach(async () => {
			await chown(ws().root, NOBODY, NOBODY); // nobody may create files (temp files) here
		});
		const edit = (name: string) =>
			keelAsNobody([
				"call",
				"edit",
				JSON.stringify({ path: name, edits: [{ oldText: "1", newText: "2" }] }),
				"--root",
				ws().root,
			]);

		it("its own 0444 file, which it could not write in place, is refused and left alone", async () => {
			const p = await put("ro.txt", 0o444, NOBODY, NOBODY);
			const before = await stat(p);
			const r = await edit("ro.txt");
			expect(r.code).not.toBe(0);
			expect(r.stdout).toContain("PERMISSION_DENIED");
			expect(r.stdout).toContain("change-approach");
			const after = await stat(p);
			expect(after.ino).toBe(before.ino);
			expect(await readFile(p, "utf8")).toBe("value = 1\n");
		});

		it("a root-owned file it may write (0666) is refused: the owner could not be kept", async () => {
			const p = await put("roots.txt", 0o666, 0, 0);
			const before = await stat(p);
			const r = await edit("roots.txt");
			expect(r.code).not.toBe(0);
			expect(r.stdout).toContain("PERMISSION_DENIED");
			const after = await stat(p);
			expect([after.ino, after.uid, after.gid]).toEqual([before.ino, 0, 0]);
			expect(await readFile(p, "utf8")).toBe("value = 1\n");
		});

		it("its own file is edited as before", async () => {
			const p = await put("mine.txt", 0o600, NOBODY, NOBODY);
			const r = await edit("mine.txt");
			expect(r.stdout).not.toContain("PERMISSION_DENIED");
			expect(r.code).toBe(0);
			expect(await readFile(p, "utf8")).toBe("value = 2\n");
			expect((await stat(p)).uid).toBe(NOBODY);
		});
	},
);
