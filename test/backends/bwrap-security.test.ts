import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
	type BwrapBackendOptions,
	createBwrapBackend,
	explainBwrapFailure,
} from "../../src/backend/bwrap.js";
import type { Backend, ExecResult } from "../../src/backend/types.js";
import { Session } from "../../src/session.js";
import { bwrapAvailable } from "../contract/backends.js";
import { processesWith, waitFor } from "../fixtures/processes.js";

const available = await bwrapAvailable();
const SECRET = "TOPSECRET";

let scratch: string;
let root: string;
let outside: string;

beforeEach(async () => {
	scratch = await realpath(await mkdtemp(join(tmpdir(), "keel-bwrap-sec-")));
	root = join(scratch, "root");
	outside = join(scratch, "outside");
	await mkdir(root);
	await mkdir(outside);
	await writeFile(join(outside, "secret.txt"), `${SECRET}\n`);
});
afterEach(async () => {
	await rm(scratch, { recursive: true, force: true });
});

async function run(
	backend: Backend,
	command: string,
	extra: { signal?: AbortSignal; timeoutMs?: number; onOutput?: (all: string) => void } = {},
): Promise<ExecResult & { output: string }> {
	let output = "";
	const r = await backend.exec.run({
		command,
		cwd: root,
		signal: extra.signal,
		timeoutMs: extra.timeoutMs,
		onData: (c) => {
			output += c.toString("utf8");
			extra.onOutput?.(output);
		},
	});
	return { ...r, output };
}

function bwrap(opts: Partial<BwrapBackendOptions> = {}): Backend {
	return createBwrapBackend({ roots: [root], ...opts });
}

const alive = processesWith;
const gone = (marker: string, ms = 5000) => waitFor(() => alive(marker).length === 0, ms);

describe.skipIf(available !== true)(
	`bwrap sandbox${available === true ? "" : ` (skipped: ${available})`}`,
	() => {
		it("writes reach the workspace and nothing else on the host", async () => {
			const b = bwrap();
			const marker = `keel-${randomBytes(4).toString("hex")}`;
			const r = await run(
				b,
				[
					`echo inside > ${root}/ok.txt`,
					`mkdir -p ${outside} && echo x > ${outside}/${marker}`, // lands in the private tmpfs
					`echo x > /usr/${marker}`,
					`echo x > /etc/${marker}`,
					`echo x > ${scratch}/${marker}`,
					`mkdir -p /root && echo x > /root/${marker}`,
					`echo x > /tmp/${marker}`,
					"true",
				].join("; "),
			);
			expect(r.exitCode).toBe(0);
			expect(await readFile(join(root, "ok.txt"), "utf8")).toBe("inside\n");
			for (const p of [
				join(outside, marker),
				`/usr/${marker}`,
				`/etc/${marker}`,
				join(scratch, marker),
				`/root/${marker}`,
				`/tmp/${marker}`,
			]) {
				expect(existsSync(p), p).toBe(false);
			}
			expect(r.output).toMatch(/Read-only file system/);
		});

		it("files outside the binds cannot be read: a temp dir beside the root, /root, secrets in /etc", async () => {
			const b = bwrap();
			const r = await run(
				b,
				`cat ${outside}/secret.txt; ls -a /root; cat /etc/shadow; cat /etc/ssh/ssh_host_*_key; ls /etc/ssl/private; ls /home; true`,
			);
			expect(r.output).not.toContain(SECRET);
			expect(r.output).not.toContain("PRIVATE KEY");
			expect(r.output).not.toMatch(/^root:/m);
			expect(r.output).toMatch(/No such file or directory/);
		});

		it("read-only binds are readable and not writable; system tools work", async () => {
			const ro = join(scratch, "ro");
			await mkdir(ro);
			await writeFile(join(ro, "r.txt"), "readable\n");
			const b = bwrap({ readOnly: [ro] });
			const r = await run(
				b,
				`cat ${ro}/r.txt; echo x > ${ro}/w.txt; ls /usr/bin/env >/dev/null && echo tools-ok`,
			);
			expect(r.output).toContain("readable");
			expect(r.output).toContain("Read-only file system");
			expect(r.output).toContain("tools-ok");
			expect(existsSync(join(ro, "w.txt"))).toBe(false);
		});

		it("runs without capabilities, in its own PID namespace", async () => {
			const r = await run(bwrap(), "grep CapEff /proc/self/status; ls /proc | grep -c '^[0-9]'");
			expect(r.output).toMatch(/CapEff:\s+0+\n/);
			const pids = Number(r.output.trim().split("\n").pop());
			expect(pids).toBeLessThan(10);
		});

		describe("network", () => {
			let server: Server;
			let port: number;
			let connections: number;
			beforeEach(async () => {
				connections = 0;
				server = createServer((s) => {
					connections++;
					s.on("error", () => {});
					s.destroy();
				});
				await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
				port = (server.address() as { port: number }).port;
			});
			afterEach(async () => {
				await new Promise((r) => server.close(r));
			});
			const knock = () => `bash -c 'echo hi > /dev/tcp/127.0.0.1/${port}' && echo CONNECTED`;

			it("the host's loopback is unreachable when network is off (default)", async () => {
				const r = await run(bwrap(), knock());
				expect(r.exitCode).not.toBe(0);
				expect(r.output).not.toContain("CONNECTED");
				expect(connections).toBe(0);
			});

			it("the host's loopback is reachable when network is on", async () => {
				const r = await run(bwrap({ network: true }), knock());
				expect(r.output).toContain("CONNECTED");
				expect(r.exitCode).toBe(0);
			});
		});

		describe("process lifetime", () => {
			/** A daemon that leaves the process group (setsid), a background job, and a foreground sleeper. */
			const forkers = (marker: string) =>
				`setsid sh -c 'sleep 299; :' ${marker} & nohup sh -c 'sleep 299; :' ${marker} >/dev/null 2>&1 & sh -c 'echo started; sleep 299; :' ${marker}`;

			it("abort kills everything the command forked, daemons included", async () => {
				const marker = `keel-sec-abort-${randomBytes(6).toString("hex")}`;
				const ac = new AbortController();
				const r = await run(bwrap(), forkers(marker), {
					signal: ac.signal,
					onOutput: (all) => {
						if (all.includes("started")) ac.abort();
					},
				});
				expect(r.aborted).toBe(true);
				expect(await gone(marker), alive(marker).join("\n")).toBe(true);
			});

			it("timeout kills everything the command forked", async () => {
				const marker = `keel-sec-timeout-${randomBytes(6).toString("hex")}`;
				const r = await run(bwrap(), forkers(marker), { timeoutMs: 1000 });
				expect(r.timedOut).toBe(true);
				expect(await gone(marker), alive(marker).join("\n")).toBe(true);
			});

			it("a daemon started by a command that ends is gone with the sandbox", async () => {
				const marker = `keel-sec-end-${randomBytes(6).toString("hex")}`;
				const r = await run(bwrap(), `setsid sh -c 'sleep 299; :' ${marker} >/dev/null 2>&1 & echo done`);
				expect(r.exitCode).toBe(0);
				expect(await gone(marker), alive(marker).join("\n")).toBe(true);
			});

			it("through Session.call: abort is ABORTED and the tree is gone", async () => {
				const marker = `keel-sec-session-${randomBytes(6).toString("hex")}`;
				const s = await Session.create({ root, backend: bwrap() });
				try {
					const ac = new AbortController();
					const r = await s.call(
						"bash",
						{ command: forkers(marker) },
						{
							signal: ac.signal,
							onUpdate: (p) => {
								if (p.content.some((c) => c.type === "text" && c.text.includes("started"))) ac.abort();
							},
						},
					);
					expect(r.ok ? "ok" : r.error.code).toBe("ABORTED");
					expect(await gone(marker), alive(marker).join("\n")).toBe(true);
				} finally {
					await s.close();
				}
			});
		});
	},
);

describe("bwrap unavailable", () => {
	it("a missing bwrap is BACKEND_UNAVAILABLE naming the install command, through the tools too", async () => {
		const b = createBwrapBackend({ roots: [root], bwrap: join(scratch, "no-such-bwrap") });
		await expect(b.ready()).rejects.toMatchObject({ code: "BACKEND_UNAVAILABLE" });
		await expect(b.ready()).rejects.toThrow(/apt-get install bubblewrap/);
		const s = await Session.create({ root, backend: b });
		try {
			const r = await s.call("bash", { command: "true" });
			expect(r.ok).toBe(false);
			if (!r.ok) {
				expect(r.error.code).toBe("BACKEND_UNAVAILABLE");
				expect(r.error.message).toContain("bubblewrap");
			}
			// Files still work: they are the local backend's.
			await writeFile(join(root, "f.txt"), "still here\n");
			const read = await s.call("read", { path: "f.txt" });
			expect(read.ok).toBe(true);
		} finally {
			await s.close();
		}
	});

	it("refused user namespaces are explained with the sysctl to fix them", () => {
		const msg = explainBwrapFailure(
			"bwrap: No permissions to creat new namespace, likely because the kernel does not allow non-privileged user namespaces.",
		);
		expect(msg).toContain("kernel.unprivileged_userns_clone=1");
		expect(explainBwrapFailure("bwrap: setting up uid map: Permission denied")).toContain("sysctl");
	});

	it("a root that does not exist is refused before anything runs", async () => {
		const b = createBwrapBackend({ roots: [join(scratch, "missing")] });
		await expect(b.ready()).rejects.toMatchObject({ code: "NOT_FOUND" });
	});
});
