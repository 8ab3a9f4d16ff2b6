/** Contract: large and binary files are byte-exact on every backend. */
import { readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { readFileBytes } from "../../src/index.js";
import { publicSession } from "../../src/session.js";
import { expectCode, expectOk, forEachBackend, sha256 } from "./harness.js";

/** ~5 MB of lines mixing ASCII and multi-byte characters, with one marked line in the middle. */
function bigText(): string {
	const lines: string[] = [];
	for (let i = 0; i < 90_000; i++) {
		lines.push(
			i === 45_000
				? "MIDDLE value = 41"
				: `${String(i).padStart(6, "0")} ünïcødé ✓ 日本語 lorem ipsum dolor sit amet`,
		);
	}
	return `${lines.join("\n")}\n`;
}

/** Every byte value, many times, in a shuffled-looking but fixed order. */
function allBytes(): Buffer {
	const b = Buffer.alloc(256 * 257);
	for (let i = 0; i < b.length; i++) b[i] = (i * 7 + Math.floor(i / 256)) & 0xff;
	return b;
}

forEachBackend((x) => {
	it("a 5 MB text file round trips byte-exact through write, read and edit", async () => {
		const { root } = x();
		const text = bigText();
		expect(Buffer.byteLength(text)).toBeGreaterThan(5_000_000);
		const s = await x().open();
		expectOk(await s.call("write", { path: "big.txt", content: text }));
		const onDisk = await readFile(join(root, "big.txt"));
		expect(sha256(onDisk)).toBe(sha256(Buffer.from(text)));
		expect(expectOk(await s.call("read", { path: "big.txt", offset: 45_001, limit: 1 }))).toContain(
			"MIDDLE value = 41",
		);
		expectOk(
			await s.call("edit", {
				path: "big.txt",
				edits: [{ oldText: "MIDDLE value = 41", newText: "MIDDLE value = 42" }],
			}),
		);
		const edited = await readFile(join(root, "big.txt"));
		expect(sha256(edited)).toBe(sha256(Buffer.from(text.replace("value = 41", "value = 42"))));
		const back = await s.backend.fs.readFile(join(root, "big.txt"));
		expect(back.equals(edited)).toBe(true);
	});

	it("a binary file with all 256 byte values is byte-exact through the backend's file operations", async () => {
		const { root } = x();
		const bytes = allBytes();
		const s = await x().open();
		const fs = s.backend.fs;
		const p = join(root, "all.bin");
		const st = await fs.writeFile(p, bytes, { expect: "absent" });
		expect(st.size).toBe(bytes.length);
		expect((await readFile(p)).equals(bytes)).toBe(true);
		expect((await fs.readFile(p, st)).equals(bytes)).toBe(true);
		expect(await fs.hashFile(p)).toBe(sha256(bytes));
		const copy = await fs.copyFile(p, join(root, "copy.bin"), {
			sourceStat: st,
			sha256: sha256(bytes),
			expect: "absent",
		});
		expect(copy.size).toBe(bytes.length);
		expect((await readFile(join(root, "copy.bin"))).equals(bytes)).toBe(true);
		// The same bytes seen by a command on the backend.
		const sum = expectOk(await s.call("bash", { command: "sha256sum all.bin" }));
		expect(sum).toContain(sha256(bytes));
		expectCode(await s.call("read", { path: "all.bin" }), "BINARY_FILE");
		// Overwrite by compare-and-swap, then the directory holds no temp files.
		const flipped = Buffer.from(bytes.map((b) => 255 - b));
		await fs.writeFile(p, flipped, { expect: { stat: st, sha256: sha256(bytes) } });
		expect((await readFile(p)).equals(flipped)).toBe(true);
		expect((await readdir(root)).filter((n) => n.startsWith(".keel-tmp-"))).toEqual([]);
	});

	it("readFileBytes gives the bytes on disk exactly, and refuses a link to the outside", async () => {
		const { root, outside } = x();
		const s = await x().open();
		const bytes = allBytes();
		await writeFile(join(root, "all.bin"), bytes);
		await writeFile(join(root, "crlf.txt"), "a\r\nb\r\n");
		await writeFile(join(outside, "secret.txt"), "outside\n");
		await symlink(join(outside, "secret.txt"), join(root, "planted"));
		const all = await readFileBytes(publicSession(s), "all.bin");
		expect(all.ok && Buffer.from(all.details?.bytes ?? []).equals(bytes)).toBe(true);
		const crlf = await readFileBytes(publicSession(s), "crlf.txt");
		expect(crlf.ok && Buffer.from(crlf.details?.bytes ?? []).toString("latin1")).toBe("a\r\nb\r\n");
		const planted = await readFileBytes(publicSession(s), "planted");
		expect(planted.ok ? "ok" : planted.error.code).toBe("PATH_OUTSIDE_ROOTS");
	});

	it("file stats agree with the file: size, mode, type, and identity changes on rewrite", async () => {
		const { root } = x();
		await writeFile(join(root, "m.sh"), "#!/bin/sh\n", { mode: 0o750 });
		const s = await x().open();
		const fs = s.backend.fs;
		const a = await fs.stat(join(root, "m.sh"));
		expect(a).toMatchObject({ type: "file", size: 10, mode: 0o750 });
		const l = await fs.lstat(root);
		expect(l.type).toBe("dir");
		const b = await fs.writeFile(join(root, "m.sh"), Buffer.from("#!/bin/sh\necho\n"), {
			expect: { stat: a, sha256: sha256(Buffer.from("#!/bin/sh\n")) },
		});
		expect(b.mode).toBe(0o750);
		expect(b.ino === a.ino && b.mtimeNs === a.mtimeNs && b.size === a.size).toBe(false);
		expect(await fs.realpath(join(root, "."))).toBe(root);
		const entries = await fs.readdir(root);
		expect(entries).toEqual([{ name: "m.sh", type: "file" }]);
	});
});
