/**
 * The entry point's backends whose code loads on first use (backend/deferred.ts, and ssh's parts):
 * each stand-in has exactly the members of the backend it stands for, with the same constant flags,
 * and works as that backend does: a session over it reads, writes, runs and searches; a process
 * starts once ready() resolved and not before; closing one never used still runs the caller's close.
 * The sandbox here is real: an AI SDK sandbox session that runs each command with sh on this machine.
 */
import { execFile, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import * as real from "../../src/backend/container/ai-sdk.js";
import { createContainerBackend as realContainer } from "../../src/backend/container/index.js";
import { engineTarget } from "../../src/backend/container/targets.js";
import * as deferred from "../../src/backend/deferred.js";
import { createExecBackend as realExec } from "../../src/backend/exec/index.js";
import type { ExecTransport } from "../../src/backend/exec/transport.js";
import { SshConnection } from "../../src/backend/ssh/connection.js";
import { createSshExec } from "../../src/backend/ssh/exec.js";
import { createSshFs } from "../../src/backend/ssh/fs.js";
import { createSshBackend } from "../../src/backend/ssh/index.js";
import { createSshSearch } from "../../src/backend/ssh/search.js";
import { createSshProcess } from "../../src/backend/ssh/spawn.js";
import type { Backend } from "../../src/backend/types.js";
import { useWorkspace } from "../fixtures/workspace.js";

/** An AI SDK sandbox session on this machine: each command runs with sh. */
const shSandbox: real.AiSdkSandboxSession = {
	run: ({ command, env }) =>
		new Promise((resolve) => {
			execFile(
				"sh",
				["-c", command],
				{ env: { ...process.env, ...env }, maxBuffer: 1 << 26 },
				(e, stdout, stderr) =>
					resolve({ exitCode: e ? Number((e as { code?: number }).code ?? 1) : 0, stdout, stderr }),
			);
		}),
};

/** An exec transport on this machine that streams stdin (the AI SDK's cannot). */
const localTransport: ExecTransport = (argv, opts) =>
	new Promise((resolve, reject) => {
		const child = spawn(argv[0], argv.slice(1), { signal: opts.signal });
		child.stdout.on("data", (c: Buffer) => opts.onData?.(c, "stdout"));
		child.stderr.on("data", (c: Buffer) => opts.onData?.(c, "stderr"));
		if (opts.stdin instanceof Uint8Array) child.stdin.end(opts.stdin);
		else if (opts.stdin) opts.stdin.pipe(child.stdin);
		else child.stdin.end();
		child.on("error", reject);
		child.on("close", (code) => resolve({ exitCode: code }));
	});

/** Members by name: "function", a constant's value, "getter", or the shape of a nested part. */
function shape(o: object): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(o))) {
		if (d.get) out[name] = "getter";
		else if (typeof d.value === "function") out[name] = "function";
		else if (d.value && typeof d.value === "object") out[name] = shape(d.value);
		else out[name] = d.value;
	}
	return out;
}

const noTransport = async () => ({ exitCode: 0 });
const sshOpts = { host: "example.invalid", sshConfigFile: false as const };

describe("a stand-in has the members of the backend it stands for", () => {
	const cases: [string, () => object, () => object][] = [
		[
			"exec",
			() => deferred.createExecBackend({ transport: noTransport }),
			() => realExec({ transport: noTransport }),
		],
		[
			"exec, kind given",
			() => deferred.createExecBackend({ transport: noTransport, kind: "docker" }),
			() => realExec({ transport: noTransport, kind: "docker" }),
		],
		[
			"container",
			() => deferred.createContainerBackend(engineTarget({ engine: "docker", container: "c1" })),
			() => realContainer(engineTarget({ engine: "docker", container: "c1" })),
		],
		[
			"AI SDK sandbox",
			() => deferred.createAiSdkSandboxBackend(shSandbox),
			() => real.createAiSdkSandboxBackend(shSandbox),
		],
		[
			"ssh (files, commands, search, processes)",
			() => createSshBackend(sshOpts),
			() => {
				const conn = new SshConnection(sshOpts);
				return {
					kind: "ssh",
					hostPrograms: true,
					target: conn.label,
					fs: createSshFs(conn, {}),
					exec: createSshExec(conn),
					search: createSshSearch(conn, {}),
					process: createSshProcess(conn, undefined),
					connect: () => {},
					remoteHome: () => {},
					close: () => {},
				};
			},
		],
	];
	it.each(cases)("%s", (_, standIn, theReal) => {
		expect(shape(standIn())).toEqual(shape(theReal()));
	});

	it("the AI SDK transport stand-in runs the command as the real one does", async () => {
		const out: Buffer[] = [];
		const r = await deferred.aiSdkSandboxTransport(shSandbox)(["sh", "-c", "cat; echo done"], {
			stdin: Buffer.from("in\n"),
			onData: (c) => out.push(c),
		});
		expect(r.exitCode).toBe(0);
		expect(Buffer.concat(out).toString()).toBe("in\ndone\n");
	});
});

describe("a session over a stand-in", () => {
	// One workspace for the describe; the session test opens its own on the deferred backend.
	const ws = useWorkspace({
		prefix: "keel-deferred-",
		shared: true,
		session: false,
		files: { "a.txt": "alpha\nbeta\n" },
	});

	it("reads, writes, runs and searches through the backend made on first use", async () => {
		const backend = deferred.createExecBackend({ transport: localTransport });
		const session = await ws().open({ backend });
		try {
			const read = await session.call("read", { path: "a.txt" });
			expect(read).toMatchObject({ ok: true, content: [{ text: "alpha\nbeta" }] });
			expect(
				await session.call("edit", { path: "a.txt", edits: [{ oldText: "beta", newText: "gamma" }] }),
			).toMatchObject({ ok: true });
			expect(await readFile(ws().path("a.txt"), "utf8")).toBe("alpha\ngamma\n");
			const bash = await session.call("bash", { command: "printf %s $((6 * 7))" });
			expect(bash).toMatchObject({ ok: true, content: [{ text: "42" }] });
			const grep = await session.call("grep", { pattern: "gam+a", path: "." });
			expect(grep).toMatchObject({ ok: true, content: [{ text: "a.txt:2: gamma" }] });
			const find = await session.call("find", { pattern: "*.txt" });
			expect(find).toMatchObject({ ok: true, content: [{ text: "a.txt" }] });
		} finally {
			await session.close();
		}
	});

	it("starts a process only once ready() resolved", async () => {
		const backend = deferred.createExecBackend({ transport: localTransport });
		const processes = backend.process as NonNullable<Backend["process"]>;
		expect(() => processes.spawn({ argv: ["true"], cwd: ws().root })).toThrow(
			/before process\.ready\(\) resolved/,
		);
		await processes.ready();
		const child = processes.spawn({ argv: ["sh", "-c", "echo started"], cwd: ws().root });
		const out: Buffer[] = [];
		child.stdout.on("data", (c: Buffer) => out.push(c));
		expect((await child.exited).code).toBe(0);
		expect(Buffer.concat(out).toString()).toContain("started");
		await backend.close();
	});

	it("a backend without processes says so, as the real one has none", async () => {
		const backend = deferred.createAiSdkSandboxBackend(shSandbox);
		expect(backend.process).toBeUndefined();
		await backend.close();
	});

	it("closing a stand-in never used still runs the caller's close", async () => {
		const closed: string[] = [];
		const backend = deferred.createExecBackend({
			transport: noTransport,
			close: async () => {
				closed.push("container stopped");
			},
		});
		await backend.close();
		expect(closed).toEqual(["container stopped"]);
	});
});
