/**
 * Extended attributes survive a replace on ssh too: the host's python3 file
 * helper copies the target's attributes onto the temp file before the swap, for the small write
 * done in one request (k_put) and for the larger one written over SFTP first (k_swap). File
 * capabilities are dropped, as on local; an attribute changed between plan and commit fails the
 * swap. Attributes are set and read with python3 on this machine (the loopback host).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSshBackend, type SshBackend } from "../../src/backend/ssh/index.js";
import { Session } from "../../src/session.js";
import { type Sshd, sshdMissing, sshOptions, startSshd } from "../fixtures/sshd.js";

const PY = "/usr/bin/python3";
const missing = sshdMissing() ?? (existsSync(PY) ? undefined : "no /usr/bin/python3");
if (missing) console.warn(`skipping the ssh extended attribute tests: ${missing}`);

const py = (code: string, ...args: string[]) => execFileSync(PY, ["-c", code, ...args], { encoding: "utf8" });
const setAttr = (p: string, name: string, value: Buffer | string) =>
	py(
		"import os,sys; os.setxattr(sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3]))",
		p,
		name,
		Buffer.from(value).toString("hex"),
	);
const attrsOf = (p: string): Record<string, string> =>
	JSON.parse(
		py(
			"import os,sys,json; p=sys.argv[1]; print(json.dumps({n: os.getxattr(p, n).hex() for n in os.listxattr(p)}))",
			p,
		),
	);
const hex = (s: string | Buffer) => Buffer.from(s).toString("hex");

let sshd: Sshd;
let backend: SshBackend;
let dir: string;
let session: Session;

beforeAll(async () => {
	if (missing) return;
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-ssh-xattr-")));
	sshd = await startSshd();
	backend = createSshBackend(sshOptions(sshd));
	session = await Session.create({ root: dir, backend });
}, 60_000);

afterAll(async () => {
	if (missing) return;
	await session?.close();
	await sshd?.stop();
	await rm(dir, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)(
	`ssh: extended attributes on replace${missing ? ` (skipped: ${missing})` : ""}`,
	() => {
		it.each([
			["a small file (one request)", 200],
			["a 400 KB file (written over SFTP, then swapped)", 400_000],
		])("%s keeps user attributes; capabilities are dropped", async (_what, size) => {
			const name = `f-${size}.txt`;
			const p = join(dir, name);
			await writeFile(p, `${"x".repeat(size)}\nvalue = 41\n`);
			setAttr(p, "user.note", "keep me");
			setAttr(p, "user.blob", Buffer.from([0, 1, 2, 255, 0]));
			const cap = Buffer.alloc(20);
			cap.writeUInt32LE(0x02000000, 0);
			if (process.getuid?.() === 0) setAttr(p, "security.capability", cap);
			const r = await session.call("edit", {
				path: name,
				edits: [{ oldText: "value = 41", newText: "value = 42" }],
			});
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect((await readFile(p, "utf8")).endsWith("value = 42\n")).toBe(true);
			expect(attrsOf(p)).toEqual({ "user.note": hex("keep me"), "user.blob": "000102ff00" });
		});

		it.skipIf(process.getuid?.() !== 0)("trusted.* is kept when the host user is root", async () => {
			const p = join(dir, "t.txt");
			await writeFile(p, "value = 41\n");
			setAttr(p, "trusted.mark", "root only");
			const r = await session.call("edit", { path: "t.txt", edits: [{ oldText: "41", newText: "42" }] });
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect(attrsOf(p)).toEqual({ "trusted.mark": hex("root only") });
		});
	},
);
