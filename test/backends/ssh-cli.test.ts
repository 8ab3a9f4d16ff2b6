/** `keel call --backend ssh://user@host:port/path` against the test sshd, through the real CLI. */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sshd, sshdMissing, startSshd } from "../fixtures/sshd.js";

const BIN = join(import.meta.dirname, "../../bin/keel.js");
const missing = sshdMissing();

function keel(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
	return new Promise((resolve) => {
		execFile("node", [BIN, ...args], (err, stdout, stderr) => {
			resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
		});
	});
}

describe.skipIf(missing)(`keel call --backend ssh://${missing ? ` (skipped: ${missing})` : ""}`, () => {
	let sshd: Sshd;
	let dir: string;
	beforeAll(async () => {
		sshd = await startSshd();
		dir = await mkdtemp(join(tmpdir(), "keel-ssh-cli-"));
		await writeFile(join(dir, "remote.txt"), "over ssh\n");
	});
	afterAll(async () => {
		await sshd?.stop();
		await rm(dir, { recursive: true, force: true });
	});
	const spec = () => `ssh://${sshd.username}@127.0.0.1:${sshd.port}${dir}`;

	it("reads and edits in the remote directory named by the spec", async () => {
		const base = ["--backend", spec(), "--identity", sshd.keyPath, "--insecure-host-key"];
		const read = await keel(["call", "read", `{"path":"remote.txt"}`, ...base]);
		expect(read.stdout + read.stderr).not.toContain("ENOENT");
		expect(read.code).toBe(0);
		expect(JSON.parse(read.stdout)).toMatchObject({ ok: true, content: "over ssh" });
		const edit = await keel([
			"call",
			"edit",
			'{"path":"remote.txt","edits":[{"oldText":"over","newText":"via"}]}',
			...base,
		]);
		expect(JSON.parse(edit.stdout)).toMatchObject({ ok: true });
		expect(await readFile(join(dir, "remote.txt"), "utf8")).toBe("via ssh\n");
	});

	it("an unknown host key is refused, never silently accepted", async () => {
		const r = await keel(["call", "ls", "{}", "--backend", spec(), "--identity", sshd.keyPath]);
		expect(r.code).toBe(1);
		expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: "BACKEND_UNAVAILABLE" } });
		expect(r.stdout).toMatch(/known_hosts|insecure-host-key/);
	});

	it("a spec without a remote directory is a usage error", async () => {
		const r = await keel(["call", "ls", "{}", "--backend", `ssh://root@127.0.0.1:${sshd.port}`]);
		expect(r.code).toBe(2);
	});
});
