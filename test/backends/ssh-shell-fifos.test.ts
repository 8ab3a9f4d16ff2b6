/**
 * The persistent remote shell's job FIFOs (remote-lib.ts, k_run: a host without python3) go with
 * the shell: closed with a command in flight, cut off by a dropped connection, or ended idle, it
 * leaves no `.keel-*` FIFO in the remote TMPDIR. A real sshd whose sessions get a TMPDIR of this
 * test's own, so only this file's FIFOs are looked at.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
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

/** The host processes of this file's ssh sessions (their environment carries its TMPDIR). */
async function sessionProcesses(): Promise<string[]> {
	const mark = Buffer.from(`\0TMPDIR=${remoteTmp}\0`);
	const found: string[] = [];
	for (const pid of (await readdir("/proc")).filter((e) => /^\d+$/.test(e))) {
		try {
			const env = Buffer.concat([Buffer.from([0]), await readFile(`/proc/${pid}/environ`)]);
			if (env.includes(mark))
				found.push(`${pid} ${(await readFile(`/proc/${pid}/cmdline`, "utf8")).replaceAll("\0", " ")}`);
		} catch {
			// gone meanwhile, or a kernel thread
		}
	}
	return found;
}

/**
 * Waits for the remote shells and their jobs to end (on a loaded machine sshd and the shell take
 * their time; up to 60 s, longer than a job nobody reaped would never take: it sleeps 300 s), then
 * says what they left: FIFOs and processes.
 */
async function settled(): Promise<{ fifos: string[]; processes: string[] }> {
	for (let i = 0; i < 1200 && (await sessionProcesses()).length > 0; i++) await sleep(50);
	return { fifos: await fifos(), processes: await sessionProcesses() };
}
const NONE = { fifos: [], processes: [] };

/** Starts `sleep` through the shell's job path and resolves once it runs (its FIFOs exist). */
async function inFlight(b: SshBackend): Promise<{ running: Promise<unknown> }> {
	let out = "";
	const running = b.exec.run({ command: "echo started; sleep 300", cwd: work, onData: (c) => (out += c) });
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
		expect(await settled()).toEqual(NONE);
	});

	it("a dropped connection with a command in flight leaves none once the job is reaped", async () => {
		const b = shellOnly();
		const { running } = await inFlight(b);
		await sshd.dropConnections();
		await expect(running).rejects.toMatchObject({ code: "BACKEND_UNAVAILABLE" });
		// The next call reconnects and reaps the job; the cut-off shell then ends.
		await b.exec.run({ command: "true", cwd: work, onData: () => undefined });
		await b.close();
		expect(await settled()).toEqual(NONE);
	});

	it("commands run to their end, then the backend closed: none left", async () => {
		const b = shellOnly();
		for (let i = 0; i < 3; i++) await b.exec.run({ command: "echo hi", cwd: work, onData: () => undefined });
		await b.close();
		expect(await settled()).toEqual(NONE);
	});
});
