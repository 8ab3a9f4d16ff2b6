/**
 * What the ssh backend keeps after a call: nothing of its result. Every call runs on the live
 * connection while watching for the connection to go (SshConnection.use); a watch that outlived
 * the call held its result, so a session that read many files held every byte it ever read until
 * the connection closed. Attacked with many reads of a 1 MB file and of a small one (which comes
 * back with the resolution, peek.ts), then a full garbage collection.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SshBackend } from "../../src/backend/ssh/index.js";
import { useSshBackend } from "../fixtures/ssh-backend.js";
import { sshdMissing } from "../fixtures/sshd.js";

const missing = sshdMissing();
if (missing) console.warn(`skipping the ssh retention tests: ${missing}`);

const live = useSshBackend(missing);
let b: SshBackend;
let dir: string;

beforeAll(async () => {
	if (missing) return;
	b = live.backend;
	dir = await mkdtemp(join(tmpdir(), "keel-ssh-retain-"));
});

afterAll(async () => {
	if (dir) await rm(dir, { recursive: true, force: true });
});

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

async function bytesHeld(): Promise<number> {
	for (let i = 0; i < 3; i++) {
		await sleep(10);
		gc();
	}
	return process.memoryUsage().arrayBuffers;
}

describe.skipIf(missing)("ssh: a call keeps nothing of its result", () => {
	it("150 reads of a 1 MB file and 2,000 of a small one leave under 32 MB held afterwards", async () => {
		const big = join(dir, "big.bin");
		const small = join(dir, "small.txt");
		await writeFile(big, Buffer.alloc(1024 * 1024, 7));
		await writeFile(small, "x".repeat(64 * 1024));
		const before = await bytesHeld();
		for (let i = 0; i < 150; i++) {
			const real = await b.fs.realpath(big);
			expect((await b.fs.readFile(real)).length).toBe(1024 * 1024);
		}
		for (let i = 0; i < 2000; i++) {
			const real = await b.fs.realpath(small);
			const st = await b.fs.stat(real);
			expect((await b.fs.readFile(real, st)).length).toBe(64 * 1024);
		}
		// Held, the results would be 150 MB + 128 MB.
		expect((await bytesHeld()) - before).toBeLessThan(32 * 1024 * 1024);
	}, 120_000);
});
