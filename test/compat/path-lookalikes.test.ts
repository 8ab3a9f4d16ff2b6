/**
 * pi parity: read finds a file under the look-alike name a model types (pi's read does), but
 * the exact name always wins and always works, writes never use a look-alike, and a look-alike
 * never reaches outside the roots.
 */
import { readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

// Each test plants its files, then opens its session.
const ws = useWorkspace({ prefix: "keel-lookalike-", session: false });

const NNBSP = "\u202f";
const shot = `Screenshot 2024-05-01 at 10.00.00${NNBSP}AM.txt`;

async function read(s: Session, path: string) {
	const r = await s.call("read", { path });
	return r.ok ? { ok: true, text: r.content.map((c) => (c.type === "text" ? c.text : "")).join("") } : r;
}

describe("read: look-alike names", () => {
	it("reads a macOS screenshot name by its exact name and without its narrow no-break space", async () => {
		await writeFile(ws().path(shot), "shot\n");
		const s = await ws().open();
		expect(await read(s, shot)).toEqual({ ok: true, text: "shot" });
		expect(await read(s, shot.replace(NNBSP, " "))).toEqual({ ok: true, text: "shot" });
	});

	it("a straight apostrophe finds the curly one, NFC finds NFD and NFD finds NFC", async () => {
		const french = "Capture d\u2019\u00e9cran.txt".normalize("NFD");
		await writeFile(ws().path(french), "fr\n");
		await writeFile(ws().path("caf\u00e9.txt"), "nfc\n");
		await writeFile(ws().path("nai\u0308ve.txt"), "nfd\n");
		const s = await ws().open();
		expect(await read(s, "Capture d'\u00e9cran.txt")).toEqual({ ok: true, text: "fr" });
		expect(await read(s, "cafe\u0301.txt")).toEqual({ ok: true, text: "nfc" });
		expect(await read(s, "na\u00efve.txt")).toEqual({ ok: true, text: "nfd" });
	});

	it("the exact name wins over a look-alike that also exists", async () => {
		await writeFile(ws().path(shot), "nnbsp\n");
		await writeFile(ws().path(shot.replace(NNBSP, " ")), "plain\n");
		const s = await ws().open();
		expect(await read(s, shot)).toEqual({ ok: true, text: "nnbsp" });
		expect(await read(s, shot.replace(NNBSP, " "))).toEqual({ ok: true, text: "plain" });
	});

	it("a look-alike that leads outside the roots is not followed", async () => {
		await writeFile(ws().outside("secret.txt"), "TOP SECRET\n");
		await symlink(ws().outside("secret.txt"), ws().path("it\u2019s.txt"));
		const s = await ws().open();
		const r = await s.call("read", { path: "it's.txt" });
		expect(r.ok).toBe(false);
		expect(JSON.stringify(r)).not.toContain("TOP SECRET");
		if (!r.ok) expect(r.error.code).toBe("NOT_FOUND");
	});

	it("writes and edits take the exact name: never a look-alike, never a space folded", async () => {
		await writeFile(ws().path(shot), "original\n");
		const s = await ws().open();
		const plain = shot.replace(NNBSP, " ");
		expect((await s.call("write", { path: plain, content: "new\n" })).ok).toBe(true);
		expect(await readFile(ws().path(shot), "utf8")).toBe("original\n");
		expect(await readFile(ws().path(plain), "utf8")).toBe("new\n");
		// The exact NNBSP name is edited in place, not a space-folded twin.
		const e = await s.call("edit", { path: shot, edits: [{ oldText: "original", newText: "edited" }] });
		expect(e.ok).toBe(true);
		expect(await readFile(ws().path(shot), "utf8")).toBe("edited\n");
		expect((await readdir(ws().root)).sort()).toEqual([plain, shot].sort());
		const missing = await s.call("edit", {
			path: "it's.txt",
			edits: [{ oldText: "a", newText: "b" }],
		});
		expect(missing.ok).toBe(false);
	});
});
