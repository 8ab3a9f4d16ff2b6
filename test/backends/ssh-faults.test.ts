/**
 * The ssh backend's faults, each against a real sshd: unreachable host, wrong key, unknown and
 * mismatched host keys, a missing remote root, and connections killed mid-write and mid-command.
 * Each must give a clear error, lose nothing, and the next call must reconnect.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSshBackend, type SshBackend } from "../../src/backend/ssh/index.js";
import { KeelError } from "../../src/boundary/errors.js";
import { Session } from "../../src/session.js";
import { processesWith, waitFor } from "../fixtures/processes.js";
import { freePort, NO_RC_FILES, type Sshd, sshdMissing, sshOptions, startSshd } from "../fixtures/sshd.js";

const missing = sshdMissing();
const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

let sshd: Sshd;
let dir: string;
const backends: SshBackend[] = [];

beforeAll(async () => {
	if (!missing) sshd = await startSshd(NO_RC_FILES);
}, 60_000);
afterAll(async () => {
	await sshd?.stop();
});
beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-faults-"));
});
afterEach(async () => {
	await Promise.all(backends.splice(0).map((b) => b.close()));
	await rm(dir, { recursive: true, force: true });
});

function backend(extra: Partial<Parameters<typeof createSshBackend>[0]> = {}): SshBackend {
	const b = createSshBackend({ ...sshOptions(sshd), ...extra });
	backends.push(b);
	return b;
}

async function failure(promise: Promise<unknown>): Promise<KeelError> {
	try {
		await promise;
	} catch (e) {
		expect(e).toBeInstanceOf(KeelError);
		return e as KeelError;
	}
	throw new Error("expected a failure");
}

describe.skipIf(missing)("ssh backend: connecting", () => {
	it("an unreachable host (closed port) is BACKEND_UNAVAILABLE naming the target", async () => {
		const port = await freePort();
		const e = await failure(backend({ port }).fs.stat("/"));
		expect(e.code).toBe("BACKEND_UNAVAILABLE");
		expect(e.message).toContain(`127.0.0.1:${port}`);
		expect(e.message).toContain("connection refused");
		// Through a session too: the first thing it does (canonicalizing the root) fails the same way.
		const s = await failure(Session.create({ root: "/", backend: backend({ port }) }));
		expect(s.code).toBe("BACKEND_UNAVAILABLE");
	});

	it("a wrong key fails authentication with the fix named", async () => {
		const key = join(dir, "other_key");
		execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
		const e = await failure(backend({ identityFile: key }).fs.stat("/"));
		expect(e.code).toBe("BACKEND_UNAVAILABLE");
		expect(e.message).toMatch(/Authentication .* failed/);
		expect(e.message).toContain("--identity");
		const e2 = await failure(backend({ identityFile: join(dir, "none") }).fs.stat("/"));
		expect(e2.message).toContain("Cannot read the identity file");
	});

	it("a host key mismatch is refused, never silently accepted", async () => {
		const other = join(dir, "other_host");
		execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", other]);
		const pub = (await readFile(`${other}.pub`, "utf8")).split(" ").slice(0, 2).join(" ");
		await writeFile(join(dir, "kh"), `# a comment\n[127.0.0.1]:${sshd.port} ${pub}\n`);
		const e = await failure(backend({ knownHostsFile: join(dir, "kh") }).fs.stat("/"));
		expect(e.code).toBe("BACKEND_UNAVAILABLE");
		expect(e.message).toContain("HOST KEY MISMATCH");
		expect(e.message).toContain(`${join(dir, "kh")}:2`);
	});

	it("an unknown host is refused with both fixes named; --insecure-host-key connects", async () => {
		await writeFile(
			join(dir, "kh"),
			`[127.0.0.1]:1 ${sshd.hostKeyPublic}\n127.0.0.1 ${sshd.hostKeyPublic}\n`,
		);
		const e = await failure(backend({ knownHostsFile: join(dir, "kh") }).fs.stat("/"));
		expect(e.message).toContain("is not in");
		expect(e.message).toContain("ssh-keyscan");
		expect(e.message).toContain("--insecure-host-key");
		const st = await backend({ knownHostsFile: join(dir, "kh"), insecureHostKey: true }).fs.stat("/");
		expect(st.type).toBe("dir");
	});

	it("hashed known_hosts entries and @revoked keys are honoured", async () => {
		const kh = join(dir, "kh");
		await writeFile(kh, `[127.0.0.1]:${sshd.port} ${sshd.hostKeyPublic}\n`);
		execFileSync("ssh-keygen", ["-H", "-f", kh], { stdio: "ignore" });
		expect(await readFile(kh, "utf8")).toMatch(/^\|1\|/);
		expect((await backend({ knownHostsFile: kh }).fs.stat("/")).type).toBe("dir");
		await writeFile(kh, `@revoked * ${sshd.hostKeyPublic}\n[127.0.0.1]:${sshd.port} ${sshd.hostKeyPublic}\n`);
		const e = await failure(backend({ knownHostsFile: kh }).fs.stat("/"));
		expect(e.message).toContain("@revoked");
	});

	it("a remote root that does not exist is a clear NOT_FOUND", async () => {
		const e = await failure(Session.create({ root: join(dir, "no", "such"), backend: backend() }));
		expect(e.code).toBe("NOT_FOUND");
		expect(e.message).toContain("Root does not exist");
	});
});

describe.skipIf(missing)("ssh backend: dropped connections", () => {
	it("an idle connection that dropped is reopened by the next call", async () => {
		const b = backend();
		await writeFile(join(dir, "f"), "x");
		expect((await b.fs.stat(join(dir, "f"))).size).toBe(1);
		expect(await sshd.dropConnections()).toBeGreaterThan(0);
		await sleep(200);
		expect((await b.fs.stat(join(dir, "f"))).size).toBe(1);
		let out = "";
		await b.exec.run({ command: "echo again", cwd: dir, onData: (c) => (out += c) });
		expect(out).toBe("again\n");
	});

	it("killed in the middle of a write: the file is the old or the new version, never partial", async () => {
		const b = backend();
		const target = join(dir, "data.bin");
		const old = randomBytes(1024 * 1024);
		await writeFile(target, old);
		let current = old;
		// Every version ever written: a commit cut off from its client may still land remotely
		// after the client saw the drop, so the file may be any whole version, never a mix.
		const versions = new Map([[sha(old), old]]);
		const outcomes: string[] = [];
		for (let round = 0; round < 4; round++) {
			const next = randomBytes(24 * 1024 * 1024);
			versions.set(sha(next), next);
			const st = await b.fs.stat(target);
			const writing = b.fs.writeFile(target, next, { expect: { stat: st, sha256: sha(current) } });
			writing.catch(() => {});
			// Kill once the temp file is growing (later each round), or right away in the last round.
			const minSize = [1, 4, 12, 0][round] * 1024 * 1024;
			for (let i = 0; i < 400; i++) {
				const temps = (await readdir(dir)).filter((n) => n.startsWith(".keel-tmp-"));
				const sizes = await Promise.all(
					temps.map((t) =>
						stat(join(dir, t)).then(
							(s) => s.size,
							() => 0,
						),
					),
				);
				if (sizes.some((s) => s >= minSize)) break;
				await sleep(5);
			}
			await sshd.dropConnections();
			try {
				await writing;
				outcomes.push("committed");
				current = next;
			} catch (e) {
				expect(e).toBeInstanceOf(KeelError);
				expect((e as KeelError).code).toBe("BACKEND_UNAVAILABLE");
				expect((e as KeelError).message).toContain("was lost");
				outcomes.push("lost");
			}
			await sleep(300); // let a commit that outlived its connection finish
			const now = await readFile(target);
			expect(versions.has(sha(now))).toBe(true);
			current = now;
		}
		expect(outcomes).toContain("lost");
		// The next call reconnects; a leftover temp file is swept once it is old.
		expect((await b.fs.readFile(target)).equals(current)).toBe(true);
		const temps = (await readdir(dir)).filter((n) => n.startsWith(".keel-tmp-"));
		const old2 = new Date(Date.now() - 2 * 3600_000);
		for (const t of temps) await utimes(join(dir, t), old2, old2);
		expect(await b.fs.sweepTemps(dir)).toBe(temps.length);
		expect((await readdir(dir)).filter((n) => n.startsWith(".keel-tmp-"))).toEqual([]);
	}, 120_000);

	async function gone(b: SshBackend, tag: string): Promise<boolean> {
		for (let i = 0; i < 50; i++) {
			let out = "";
			await b.exec.run({
				command: `pgrep -f "[s]leep ${tag}" || echo none`,
				cwd: dir,
				onData: (c) => (out += c),
			});
			if (out.trim() === "none") return true;
			await sleep(100);
		}
		return false;
	}

	it("a command in flight when the connection drops fails clearly; after reconnecting it is reaped", async () => {
		const b = backend();
		const tag = `${3000 + Math.floor(Math.random() * 1000)}.25`;
		let out = "";
		const running = b.exec.run({
			command: `echo started; sleep ${tag}`,
			cwd: dir,
			onData: (c) => (out += c),
		});
		running.catch(() => {});
		// The drop must find the command running: the first call also connects and starts the
		// runner, which takes seconds on a machine slow to start processes.
		for (let i = 0; i < 3000 && !out.includes("started"); i++) await sleep(10);
		expect(out).toContain("started");
		await sshd.dropConnections();
		const e = await failure(running);
		expect(e.code).toBe("BACKEND_UNAVAILABLE");
		expect(e.message).toContain("was lost");
		let again = "";
		await b.exec.run({ command: "echo ok", cwd: dir, onData: (c) => (again += c) });
		expect(again).toBe("ok\n");
		expect(await gone(b, tag)).toBe(true);
	});

	it("python: a job in flight when the connection drops ends once; the remote worker is gone; the next call reconnects", async () => {
		const b = backend();
		const session = await Session.create({ root: dir, backend: b, profile: "unified" });
		await session.call("python", { code: "kept = 1" });
		const tag = `keel-py-drop-${randomBytes(6).toString("hex")}`;
		const ends: string[] = [];
		session.python.onEvent((e) => {
			if (e.type === "end") ends.push(e.outcome.exitState);
		});
		const running = session.call("python", {
			code: `import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', '${tag}'])\ntime.sleep(300)`,
		});
		expect(await waitFor(() => processesWith(tag).length > 0, 3000)).toBe(true);
		await sshd.dropConnections();
		const r = await running;
		expect(!r.ok && r.error.code).toBe("COMMAND_FAILED");
		expect(!r.ok && r.error.message).toMatch(/worker was cut off/);
		expect(ends).toEqual(["crashed"]);
		expect(await waitFor(() => processesWith(tag).length === 0, 3000)).toBe(true);
		const next = await session.call("python", { code: "'kept' in globals()" });
		expect(next.ok && next.details).toMatchObject({ stateReset: true });
		await session.python.close();
	});

	it("closing the backend kills the commands still running", async () => {
		const b = createSshBackend(sshOptions(sshd));
		const tag = `${4000 + Math.floor(Math.random() * 1000)}.75`;
		let out = "";
		const running = b.exec.run({
			command: `echo started; sleep ${tag}`,
			cwd: dir,
			onData: (c) => (out += c),
		});
		running.catch(() => {});
		for (let i = 0; i < 3000 && !out.includes("started"); i++) await sleep(10);
		expect(out).toContain("started");
		await b.close();
		expect(await gone(backend(), tag)).toBe(true);
	});

	it("a closed backend refuses further calls", async () => {
		const b = createSshBackend(sshOptions(sshd));
		await b.fs.stat("/");
		await b.close();
		const e = await failure(b.fs.stat("/"));
		expect(e.code).toBe("BACKEND_UNAVAILABLE");
		expect(e.message).toContain("closed");
	});
});
