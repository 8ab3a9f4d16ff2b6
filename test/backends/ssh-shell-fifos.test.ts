/**
 * The persistent remote shell's job FIFOs (remote-lib.ts, k_run: a host without python3) go with
 * the shell: closed with a command in flight, cut off by a dropped connection, or ended idle, it
 * leaves no `.keel-*` FIFO in the remote TMPDIR. A real sshd whose sessions get a TMPDIR of this
 * test's own, so only this file's FIFOs are looked at.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSshBackend, type SshBackend } from "../../src/backend/ssh/index.js";
import { type Sshd, sshdMissing, sshOptions, startSshd, usrBinWithout } from "../fixtures/sshd.js";

const missing = sshdMissing();
let sshd: Sshd;
let bin: string;
let remoteTmp: string;
let work: string;

beforeAll(async () => {
	if (missing) return;
	bin = await usrBinWithout((name) => name.startsWith("python"));
	remoteTmp = await mkdtemp(join(tmpdir(), "keel-ssh-fifos-tmp-"));
	work = await mkdtemp(join(tmpdir(), "keel-ssh-fifos-"));
	sshd = await startSshd({ setEnv: { TMPDIR: remoteTmp } });
}, 60_000);
afterAll(async () => {
	await sshd?.stop();
	for (const d of [bin, remoteTmp, work]) if (d) await rm(d, { recursive: true, force: true });
});

const shellOnly = (): SshBackend => createSshBackend({ ...sshOptions(sshd), remotePath: `${bin}:/usr/sbin` });
const fifos = async () => (await readdir(remoteTmp)).filter((n) => n.startsWith(".keel-")).sort();

/** Waits up to 10 s for the remote shells to have removed their FIFOs; what is left. */
async function settled(): Promise<string[]> {
	for (let i = 0; i < 200 && (await fifos()).length > 0; i++) await sleep(50);
	return fifos();
}

/** Starts `sleep` through the shell's job path and resolves once it runs (its FIFOs exist). */
async function inFlight(b: SshBackend): Promise<{ running: Promise<unknown> }> {
	let out = "";
	const running = b.exec.run({ command: "echo started; sleep 30", cwd: work, onData: (c) => (out += c) });
	running.catch(() => undefined);
	for (let i = 0; i < 3000 && !out.includes("started"); i++) await sleep(10);
	expect(out).toContain("started");
	// The check below looks at the right place: the job's FIFO pair is there now.
	expect((await fifos()).length).toBeGreaterThanOrEqual(2);
	return { running };
}

// Each test connects anew (seconds on a loaded machine slow to start processes).
describe.skipIf(missing)("the remote shell's job FIFOs", { timeout: 120_000 }, () => {
	it("closing the backend with a command in flight leaves none", async () => {
		const b = shellOnly();
		await inFlight(b);
		await b.close();
		expect(await settled()).toEqual([]);
	});

	it("a dropped connection with a command in flight leaves none once the job is reaped", async () => {
		const b = shellOnly();
		const { running } = await inFlight(b);
		await sshd.dropConnections();
		await expect(running).rejects.toMatchObject({ code: "BACKEND_UNAVAILABLE" });
		// The next call reconnects and reaps the job; the cut-off shell then ends.
		await b.exec.run({ command: "true", cwd: work, onData: () => undefined });
		await b.close();
		expect(await settled()).toEqual([]);
	});

	it("commands run to their end, then the backend closed: none left", async () => {
		const b = shellOnly();
		for (let i = 0; i < 3; i++) await b.exec.run({ command: "echo hi", cwd: work, onData: () => undefined });
		await b.close();
		expect(await settled()).toEqual([]);
	});
});
