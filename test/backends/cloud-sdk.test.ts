/**
 * keel's sandbox-SDK modules (E2B, Daytona, Modal, Vercel Sandbox) against local stand-ins of each
 * SDK's object (test/fixtures/sdk-standins: real processes on this machine, the output decoded to
 * strings as each SDK decodes it). No SDK service runs here. The contract suite and the python
 * battery also run on these (test/contract/backends.ts, test/python/backends.test.ts).
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, symlinkSync } from "node:fs";
import { mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDaytonaBackend } from "../../src/backend/container/daytona.js";
import { createE2bBackend, type E2bSandbox } from "../../src/backend/container/e2b.js";
import { createModalBackend } from "../../src/backend/container/modal.js";
import type { SdkBackend } from "../../src/backend/container/sdk-backend.js";
import { createVercelSandboxBackend } from "../../src/backend/container/vercel-sandbox.js";
import { KeelError } from "../../src/boundary/errors.js";
import { localDaytonaSandbox } from "../fixtures/sdk-standins/daytona.js";
import { localE2bSandbox } from "../fixtures/sdk-standins/e2b.js";
import { localModalSandbox } from "../fixtures/sdk-standins/modal.js";
import { localVercelSandbox } from "../fixtures/sdk-standins/vercel.js";

/** Every byte value, and the wrapper's own line forms, as file content. */
const HOSTILE = Buffer.concat([
	Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
	Buffer.from("\n:AAAA\n!0\n.\n\xff\xfe", "latin1"),
	randomBytes(200_000),
]);

const collect = () => {
	const chunks: Buffer[] = [];
	return { onData: (c: Buffer) => chunks.push(c), text: () => Buffer.concat(chunks).toString("utf8") };
};

let dir: string;
beforeAll(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-cloud-")));
});
afterAll(async () => {
	await rm(dir, { recursive: true, force: true });
});

const makers: [string, () => SdkBackend][] = [
	["e2b", () => createE2bBackend(localE2bSandbox())],
	["daytona", () => createDaytonaBackend(localDaytonaSandbox())],
	["modal", () => createModalBackend(localModalSandbox())],
	["vercel-sandbox", () => createVercelSandboxBackend(localVercelSandbox())],
];

for (const [name, make] of makers) {
	describe(`${name} (local stand-in)`, { timeout: 60_000 }, () => {
		it("binary bytes and protocol-looking lines survive the SDK's text channel, both ways", async () => {
			const b = make();
			try {
				const file = join(dir, `${name}-hostile.bin`);
				await b.fs.writeFile(file, HOSTILE);
				expect((await b.fs.readFile(file)).equals(HOSTILE)).toBe(true);
				// A command printing the wrapper's own line forms gets them back as they were printed.
				const out = collect();
				const r = await b.exec.run({
					command: "printf '\\n:QUJD\\n!7\\n.\\n'; printf ':x\\n' >&2; exit 5",
					cwd: dir,
					onData: out.onData,
				});
				expect(r.exitCode).toBe(5);
				expect(out.text()).toContain("\n:QUJD\n!7\n.\n");
				expect(out.text()).toContain(":x\n");
			} finally {
				await b.close();
			}
		});
	});
}

describe("input over a text channel where `head -c` reads ahead (busybox)", { timeout: 60_000 }, () => {
	it("the wrapper checks head once and falls back to the shell's read: every byte still arrives", async () => {
		// A head that swallows all its input and records that it ran: the worst read-ahead there is.
		// No python3 on the PATH: with it the run is relayed by sdk_relay.py, which needs no head.
		const bin = join(dir, "greedy-bin");
		const ran = join(dir, "greedy-head-ran");
		await mkdir(bin);
		await writeFile(join(bin, "head"), `#!/bin/sh\ncat >/dev/null\n: > '${ran}'\n`, { mode: 0o755 });
		for (const from of ["/usr/bin", "/bin"]) {
			for (const name of readdirSync(from)) {
				if (!name.startsWith("python") && !existsSync(join(bin, name)))
					symlinkSync(join(from, name), join(bin, name));
			}
		}
		const inner = localE2bSandbox();
		const sandbox: E2bSandbox = {
			commands: { run: (cmd, o) => inner.commands.run(`PATH='${bin}' ${cmd}`, o) },
		};
		const b = createE2bBackend(sandbox);
		try {
			const file = join(dir, "greedy-hostile.bin");
			await b.fs.writeFile(file, HOSTILE);
			expect((await b.fs.readFile(file)).equals(HOSTILE)).toBe(true);
			expect(existsSync(ran), "the wrapper never asked the greedy head").toBe(true);
		} finally {
			await b.close();
		}
	});
});

describe("persistent shells on the SDKs with a long-lived process", { timeout: 60_000 }, () => {
	it("E2B: sequential operations reuse one background command; no command per operation", async () => {
		const sandbox = localE2bSandbox();
		const b = createE2bBackend(sandbox);
		try {
			await b.connect();
			const file = join(dir, "e2b-seq.txt");
			for (let i = 0; i < 8; i++) {
				await b.fs.writeFile(file, Buffer.from(`round ${i}\n`));
				expect((await b.fs.readFile(file)).toString()).toBe(`round ${i}\n`);
			}
			expect(b.shellsOpened).toBe(1);
			expect(sandbox.started).toHaveLength(1);
		} finally {
			await b.close();
		}
	});

	it("Daytona: each carrier is its own session, deleted when the backend closes", async () => {
		const sandbox = localDaytonaSandbox();
		const b = createDaytonaBackend(sandbox);
		await b.connect();
		const out = collect();
		await b.exec.run({ command: "echo one; echo two", cwd: dir, onData: out.onData });
		expect(out.text()).toBe("one\ntwo\n"); // the session's input echo is off: no request text leaks
		expect(sandbox.sessions.size).toBe(1);
		await b.close();
		const gone = async () => {
			for (let i = 0; i < 50 && sandbox.sessions.size > 0; i++) await new Promise((r) => setTimeout(r, 100));
			return sandbox.sessions.size;
		};
		expect(await gone()).toBe(0);
	});

	it("a carrier killed under a running command: BACKEND_UNAVAILABLE, then the next call opens a new one", async () => {
		const base = localE2bSandbox();
		const handles: { pid: number }[] = [];
		const sandbox: E2bSandbox = {
			sandboxId: "flaky",
			commands: {
				run: async (cmd, opts) => {
					const h = await base.commands.run(cmd, opts);
					handles.push(h);
					return h;
				},
			},
		};
		const b = createE2bBackend(sandbox);
		try {
			await b.connect();
			const pending = b.exec.run({ command: "sleep 30", cwd: dir, onData() {} });
			await new Promise((r) => setTimeout(r, 300));
			process.kill(-handles[0].pid, "SIGKILL"); // every process of the carrier, as a sandbox restart would
			await expect(pending).rejects.toMatchObject({ code: "BACKEND_UNAVAILABLE" });
			const out = collect();
			const r = await b.exec.run({ command: "echo back", cwd: dir, onData: out.onData });
			expect(r.exitCode).toBe(0);
			expect(out.text()).toBe("back\n");
		} finally {
			await b.close();
		}
	});

	it("a program that exits before its streamed stdin ends still ends the call", async () => {
		for (const b of [createE2bBackend(localE2bSandbox()), createDaytonaBackend(localDaytonaSandbox())]) {
			try {
				const never = new PassThrough(); // never ended
				never.write("some input\n");
				const r = await b.transport(["sh", "-c", "head -c 3; exit 4"], { stdin: never });
				expect(r.exitCode).toBe(4);
			} finally {
				await b.close();
			}
		}
	});
});

describe("Vercel Sandbox 3.5: one command per call, no stdin", { timeout: 60_000 }, () => {
	it("a large write is staged in pieces and its temp file removed; python is unavailable", async () => {
		const sandbox = localVercelSandbox();
		const b = createVercelSandboxBackend(sandbox);
		const before = (await readdir("/tmp")).filter((n) => n.startsWith(".keel-in-"));
		const file = join(dir, "vercel-big.bin");
		const big = randomBytes(300_000);
		await b.fs.writeFile(file, big);
		expect((await b.fs.readFile(file)).equals(big)).toBe(true);
		const after = (await readdir("/tmp")).filter((n) => n.startsWith(".keel-in-"));
		expect(after).toEqual(before);
		expect(sandbox.commands.length).toBeGreaterThan(4); // the staging pieces, each a command
		expect(b.process).toBeUndefined();
		expect(b.shellsOpened).toBe(0);
		await b.close();
	});

	it("a sandbox that refuses to run anything is a clear BACKEND_UNAVAILABLE", async () => {
		const b = createVercelSandboxBackend({
			name: "stopped",
			runCommand: async () => {
				throw new Error("Sandbox is stopped");
			},
		});
		const e = await b.connect().catch((x: unknown) => x);
		expect(e).toBeInstanceOf(KeelError);
		expect((e as KeelError).code).toBe("BACKEND_UNAVAILABLE");
		expect((e as KeelError).message).toContain("Vercel sandbox stopped");
		expect((e as KeelError).message).toContain("Sandbox is stopped");
	});
});
