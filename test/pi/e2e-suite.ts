/**
 * The scripted pi sessions, run against one pi installation: pi is a subprocess
 * in json or rpc mode, offline, HOME and the agent dir in a temp directory, the model a script.
 * Each test proves keel ran the tools by a behaviour only keel has (the [NOT_READ] refusal, keel's
 * elapsedMs, diff and contentRef details) and checks the files on disk.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Profile, toolsForProfile } from "../../src/tools/registry.js";
import { bwrapAvailable } from "../contract/backends.js";
import { sshdMissing, startSshd } from "../fixtures/sshd.js";
import {
	BUILT,
	BUILT_EXTENSION,
	BUILT_LAUNCHER,
	events,
	modelLog,
	NOT_BUILT,
	type PiInstall,
	REPO,
	removeSandbox,
	run,
	runPi,
	type Sandbox,
	sandbox,
	script,
	scriptArgs,
	scriptEnv,
	type Turn,
	textOf,
	toolEnds,
} from "./helpers.js";

const RESET_TOOLS = join(REPO, "test", "pi", "fixtures", "reset-tools.ts");

/** Why the bwrap and ssh sessions cannot run here (undefined: they can). */
const BWRAP = await bwrapAvailable().then((ok) => (ok === true ? undefined : ok));
const SSHD = sshdMissing();

/** The sorted tool names of a keel profile, less `off`. */
const palette = (profile: Profile, off: string[] = []) =>
	toolsForProfile(profile)
		.map((t) => t.name)
		.filter((n) => !off.includes(n))
		.sort();
const PI_TOOLS = palette("pi");

/** The pi-profile script: a refused blind overwrite, then read, edit, bash, grep. */
const PI_SCRIPT: Turn[] = [
	[{ name: "write", arguments: { path: "existing.txt", content: "clobbered\n" } }],
	[{ name: "read", arguments: { path: "notes.txt" } }],
	[{ name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "beta", newText: "gamma" }] } }],
	[{ name: "bash", arguments: { command: "echo made > made.txt && cat notes.txt" } }],
	[{ name: "grep", arguments: { pattern: "gamma" } }],
	"all done",
];

const FILES = { "notes.txt": "alpha\nbeta\n", "existing.txt": "keep me\n" };

/** Assertions shared by the direct and the launcher run of PI_SCRIPT. */
async function expectPiScriptRan(s: Sandbox, stdout: string) {
	const ends = toolEnds(stdout);
	expect(ends.map((e) => e.toolName)).toEqual(["write", "read", "edit", "bash", "grep"]);
	const [write, read, edit, bash, grep] = ends;
	// pi's own write would have overwritten the file; keel refuses a blind overwrite.
	expect(write.isError).toBe(true);
	expect(textOf(write)).toMatch(/^\[NOT_READ\] existing\.txt/);
	expect(write.result.details.error).toMatchObject({
		code: "NOT_READ",
		retry: "retry",
		path: "existing.txt",
	});
	expect(write.result.details.elapsedMs).toEqual(expect.any(Number));
	for (const ok of [read, edit, bash, grep]) {
		expect(ok.isError, textOf(ok)).toBe(false);
		expect(ok.result.details.elapsedMs).toEqual(expect.any(Number));
	}
	expect(textOf(read)).toBe("alpha\nbeta");
	expect(edit.result.details.diff).toContain("+2 gamma");
	expect(textOf(bash)).toBe("alpha\ngamma");
	expect(textOf(grep)).toContain("notes.txt:2: gamma");
	expect(await readFile(join(s.ws, "notes.txt"), "utf8")).toBe("alpha\ngamma\n");
	expect(await readFile(join(s.ws, "existing.txt"), "utf8")).toBe("keep me\n");
	expect(existsSync(join(s.ws, "made.txt"))).toBe(true);
	// The model saw keel's error text and was offered exactly the pi palette.
	const log = await modelLog(s);
	expect(log.length).toBe(6);
	for (const entry of log) expect(entry.tools).toEqual(PI_TOOLS);
	expect(JSON.stringify(log[1].results)).toContain("[NOT_READ]");
}

/** pi in rpc mode: send commands, wait for events. */
function rpc(pi: PiInstall, s: Sandbox, env: NodeJS.ProcessEnv, args: string[]) {
	const child = spawn(pi.node, [pi.cli, "--mode", "rpc", ...args], { cwd: s.ws, env });
	const seen: any[] = [];
	let buffer = "";
	let stderr = "";
	const waiters: { test: (e: any) => boolean; resolve: (e: any) => void }[] = [];
	child.stderr.on("data", (d) => {
		stderr += d;
	});
	child.stdout.on("data", (d) => {
		buffer += d;
		for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
			const line = buffer.slice(0, nl);
			buffer = buffer.slice(nl + 1);
			if (!line.startsWith("{")) continue;
			const e = JSON.parse(line);
			seen.push(e);
			for (const w of [...waiters]) {
				if (w.test(e)) {
					waiters.splice(waiters.indexOf(w), 1);
					w.resolve(e);
				}
			}
		}
	});
	const next = (test: (e: any) => boolean, label: string) =>
		new Promise<any>((resolveEvent, reject) => {
			const timer = setTimeout(() => reject(new Error(`timed out waiting for ${label}\n${stderr}`)), 30_000);
			waiters.push({
				test,
				resolve: (e) => {
					clearTimeout(timer);
					resolveEvent(e);
				},
			});
		});
	const send = (cmd: Record<string, unknown>) => child.stdin.write(`${JSON.stringify(cmd)}\n`);
	const close = () =>
		new Promise<void>((resolveClose) => {
			child.once("close", () => resolveClose());
			child.stdin.end();
			setTimeout(() => child.kill("SIGTERM"), 2_000).unref();
		});
	return { send, next, close, seen };
}

export function defineE2E(name: string, install: () => PiInstall | string) {
	const pi = install();
	const skip = !BUILT ? NOT_BUILT : typeof pi === "string" ? pi : undefined;
	if (skip) console.warn(`[keel pi e2e] ${name} skipped: ${skip}`);

	describe.skipIf(skip !== undefined)(`pi end to end: ${name}`, () => {
		const boxes: Sandbox[] = [];
		afterEach(async () => {
			await Promise.all(boxes.splice(0).map(removeSandbox));
		});
		const box = async (files: Record<string, string>) => {
			const s = await sandbox(files);
			boxes.push(s);
			return s;
		};
		const p = pi as PiInstall;

		it("profile pi: keel runs read, edit, bash and grep and refuses a blind overwrite", async () => {
			const s = await box(FILES);
			const r = await runPi(p, s, await scriptEnv(s, PI_SCRIPT), "--no-builtin-tools");
			expect(r.code, r.stderr).toBe(0);
			await expectPiScriptRan(s, r.stdout);
		});

		it("profile unified: the file tool replaces write and edit; disabled names stay off", async () => {
			const s = await box(FILES);
			const turns: Turn[] = [
				[{ name: "read", arguments: { path: "notes.txt" } }],
				[
					{
						name: "file",
						arguments: {
							queries: [
								{ type: "edit", path: "notes.txt", edits: [{ oldText: "beta", newText: "delta" }] },
								{ type: "write", path: "new/dir/x.txt", content: "hello\n" },
							],
						},
					},
				],
				"ok",
			];
			// No --no-builtin-tools: this is `pi -e keel`, where pi's own write and edit are registered.
			const r = await runPi(
				p,
				s,
				await scriptEnv(s, turns),
				"--keel-profile",
				"unified",
				"--keel-disable",
				"grep",
			);
			expect(r.code, r.stderr).toBe(0);
			const [read, file] = toolEnds(r.stdout);
			expect(read.isError).toBe(false);
			expect(file.isError, textOf(file)).toBe(false);
			const results = file.result.details.results;
			expect(results.map((q: any) => q.ok)).toEqual([true, true]);
			expect(results[0].diff).toContain("+2 delta");
			expect(results[1].contentRef).toMatch(/^cr_/);
			expect(await readFile(join(s.ws, "notes.txt"), "utf8")).toBe("alpha\ndelta\n");
			expect(await readFile(join(s.ws, "new/dir/x.txt"), "utf8")).toBe("hello\n");
			for (const entry of await modelLog(s)) expect(entry.tools).toEqual(palette("unified", ["grep"]));
		});

		it("settings and environment configure the extension", async () => {
			const s = await box(FILES);
			await writeFile(join(s.agent, "settings.json"), JSON.stringify({ keel: { profile: "unified" } }));
			const turns: Turn[] = ["ok"];
			const r = await runPi(p, s, await scriptEnv(s, turns, { KEEL_DISABLE: "find,ls" }));
			expect(r.code, r.stderr).toBe(0);
			const [entry] = await modelLog(s);
			expect(entry.tools).toEqual(palette("unified", ["find", "ls"]));
		});

		it("the policy is applied again when a new session starts (rpc new_session)", async () => {
			const s = await box(FILES);
			const turns: Turn[] = [[{ name: "read", arguments: { path: "notes.txt" } }], "ok"];
			const env = await scriptEnv(s, turns);
			// reset-tools turns every tool back on at each session start, before keel's handler runs.
			const args = scriptArgs(
				"-e",
				RESET_TOOLS,
				"-e",
				BUILT_EXTENSION,
				"--keel-profile",
				"unified",
				"--keel-disable",
				"grep",
			);
			const session = rpc(p, s, env, args);
			try {
				for (let round = 0; round < 2; round++) {
					session.send({ type: "prompt", message: `round ${round}` });
					await session.next((e) => e.type === "agent_end", `agent_end ${round}`);
					if (round === 0) {
						session.send({ id: "new", type: "new_session" });
						await session.next((e) => e.type === "response" && e.command === "new_session", "new_session");
					}
				}
			} finally {
				await session.close();
			}
			const log = await modelLog(s);
			expect(log.length).toBe(4);
			for (const entry of log) {
				// pi 1.x has tools of its own beyond the seven (codemode, tool_search, ...): keel leaves them be.
				expect(entry.tools).toEqual(expect.arrayContaining(palette("unified", ["grep"])));
				for (const off of ["write", "edit", "grep"]) expect(entry.tools).not.toContain(off);
			}
			const reads = session.seen.filter((e) => e.type === "tool_execution_end");
			expect(reads.map((e) => [e.toolName, e.isError])).toEqual([
				["read", false],
				["read", false],
			]);
		});

		if (BWRAP) console.warn(`[keel pi e2e] ${name}: --keel-backend bwrap skipped: ${BWRAP}`);
		it.skipIf(BWRAP !== undefined)(
			"--keel-backend bwrap: bash runs in the sandbox (its /tmp is private), unlike local",
			async () => {
				// Outside the workspace: in the sandbox this is on its private /tmp (or not writable at
				// all); on this machine it is a real file.
				const s = await box(FILES);
				const escaped = join(s.dir, "escaped.txt");
				const command = `echo inside > ${escaped}; echo made > made.txt; cat /etc/shadow 2>/dev/null | wc -c`;
				const turns: Turn[] = [[{ name: "bash", arguments: { command } }], "done"];

				const sandboxed = await runPi(p, s, await scriptEnv(s, turns), "--keel-backend", "bwrap");
				expect(sandboxed.code, sandboxed.stderr).toBe(0);
				const [inside] = toolEnds(sandboxed.stdout);
				expect(inside.toolName).toBe("bash");
				expect(inside.isError, textOf(inside)).toBe(false);
				expect(inside.result.details.elapsedMs).toEqual(expect.any(Number));
				// /etc/shadow is masked in the sandbox; the workspace is writable; nothing else reaches the host.
				expect(textOf(inside).trim().split("\n").at(-1)).toBe("0");
				expect(await readFile(join(s.ws, "made.txt"), "utf8")).toBe("made\n");
				expect(existsSync(escaped)).toBe(false);

				// The same call without --keel-backend runs on this machine: the file appears.
				const local = await runPi(p, s, await scriptEnv(s, turns));
				expect(local.code, local.stderr).toBe(0);
				expect(toolEnds(local.stdout)[0].isError).toBe(false);
				expect(await readFile(escaped, "utf8")).toBe("inside\n");
			},
			90_000, // two pi processes, one starting a sandbox: 11 s under CI's load
		);

		it("a bad --keel-backend refuses keel's tools instead of running them on this machine", async () => {
			const s = await box(FILES);
			const turns: Turn[] = [[{ name: "bash", arguments: { command: "echo ran > ran.txt" } }], "done"];
			const r = await runPi(p, s, await scriptEnv(s, turns), "--keel-backend", "sandbox-please");
			expect(r.code, r.stderr).toBe(0);
			expect(r.stderr).toMatch(/keel backend: unknown backend "sandbox-please"/);
			const [bash] = toolEnds(r.stdout);
			expect(bash.isError).toBe(true);
			expect(textOf(bash)).toMatch(/^\[BACKEND_UNAVAILABLE\] keel's backend setting is invalid/);
			expect(bash.result.details.error.code).toBe("BACKEND_UNAVAILABLE");
			expect(existsSync(join(s.ws, "ran.txt"))).toBe(false);
		});

		if (SSHD) console.warn(`[keel pi e2e] ${name}: --keel-backend ssh:// skipped: ${SSHD}`);
		it.skipIf(SSHD !== undefined)(
			"--keel-backend ssh://: the tools work in the spec's directory over ssh, host key from known_hosts",
			async () => {
				const sshd = await startSshd();
				try {
					const s = await box(FILES);
					const remote = join(s.dir, "remote");
					await mkdir(remote);
					await writeFile(join(remote, "notes.txt"), "over ssh\n");
					await mkdir(join(s.home, ".ssh"));
					await copyFile(sshd.knownHostsPath, join(s.home, ".ssh", "known_hosts"));
					const turns: Turn[] = [
						[{ name: "read", arguments: { path: "notes.txt" } }],
						[{ name: "write", arguments: { path: "made.txt", content: "remote\n" } }],
						// sshd gives its sessions SSH_CONNECTION; pi's own environment here has none.
						[{ name: "bash", arguments: { command: 'pwd; echo "via $SSH_CONNECTION"' } }],
						"done",
					];
					const spec = `ssh://${sshd.username}@127.0.0.1:${sshd.port}${remote}`;
					const r = await runPi(
						p,
						s,
						await scriptEnv(s, turns),
						"--keel-backend",
						spec,
						"--keel-identity",
						sshd.keyPath,
					);
					expect(r.code, r.stderr).toBe(0);
					const ends = toolEnds(r.stdout);
					expect(ends.map((e) => [e.toolName, e.isError])).toEqual([
						["read", false],
						["write", false],
						["bash", false],
					]);
					expect(textOf(ends[0])).toBe("over ssh");
					expect(textOf(ends[2]).trim().split("\n")).toEqual([
						remote,
						expect.stringMatching(/^via 127\.0\.0\.1 \d+ 127\.0\.0\.1 \d+$/),
					]);
					expect(await readFile(join(remote, "made.txt"), "utf8")).toBe("remote\n");
					expect(existsSync(join(s.ws, "made.txt"))).toBe(false);
				} finally {
					await sshd.stop();
				}
			},
		);

		it("keel agent (runAgent) runs the same scripted session", async () => {
			const s = await box(FILES);
			const bin = await script(join(s.dir, "pi"), `exec "${p.node}" "${p.cli}" "$@"`);
			const env = await scriptEnv(s, PI_SCRIPT, { KEEL_PI_BIN: bin });
			const main = `import { runAgent } from ${JSON.stringify(BUILT_LAUNCHER)}; process.exitCode = await runAgent(process.argv.slice(1));`;
			const r = await run(
				process.execPath,
				["--input-type=module", "-e", main, "--", "--mode", "json", ...scriptArgs("go")],
				{ cwd: s.ws, env },
			);
			expect(r.code, r.stderr).toBe(0);
			expect(events(r.stdout).some((e) => e.type === "agent_end")).toBe(true);
			await expectPiScriptRan(s, r.stdout);
		});
	});
}
