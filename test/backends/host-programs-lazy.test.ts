/**
 * Importing keel reads no host program: every module that sends one (the exec scripts, the ssh
 * helpers, the bwrap sandbox's server, the watchdog, the sandbox SDK wrappers, the python finder)
 * reads its files on first use, once. Every readFileSync is recorded (and passed through) while
 * the library entry is imported, then while programs are asked for, twice.
 */
import { relative } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";

const reads = vi.hoisted(() => ({ paths: [] as string[] }));

vi.mock("node:fs", async (importOriginal) => {
	const fs = await importOriginal<typeof import("node:fs")>();
	const readFileSync = ((path: Parameters<typeof fs.readFileSync>[0], ...rest: unknown[]) => {
		reads.paths.push(String(path));
		return (fs.readFileSync as (...a: unknown[]) => unknown)(path, ...rest);
	}) as typeof fs.readFileSync;
	return { ...fs, default: { ...fs, readFileSync }, readFileSync };
});

const { HOST_DIR } = await import("../../src/backend/remote/host-programs.js");

/** Host files read since the last call, by name, in order. */
function hostReads(): string[] {
	const names = reads.paths.filter((p) => p.startsWith(HOST_DIR)).map((p) => relative(HOST_DIR, p));
	reads.paths.length = 0;
	return names;
}

afterAll(() => vi.doUnmock("node:fs"));

describe("host programs are read on first use", () => {
	it("importing the library and every module that sends a program reads none of them", async () => {
		reads.paths.length = 0;
		await import("../../src/index.js");
		await import("../../src/backend/bwrap/server-code.js");
		await import("../../src/backend/exec/scripts.js");
		await import("../../src/backend/exec/run.js");
		await import("../../src/backend/exec/fallback-list.js");
		await import("../../src/backend/exec/read-current.js");
		await import("../../src/backend/ssh/remote-lib.js");
		await import("../../src/backend/ssh/remote-py.js");
		await import("../../src/backend/ssh/remote-run.js");
		await import("../../src/backend/container/sdk-process.js");
		await import("../../src/backend/container/ai-sdk.js");
		await import("../../src/backend/leftovers.js");
		await import("../../src/python/launcher.js");
		await import("../../src/backend/relay-process.js");
		await import("../../src/backend/exec/search.js");
		await import("../../src/extensions/child-run.js");
		expect(hostReads()).toEqual([]);
	});

	it("a program is read on its first use, and only then", async () => {
		const { serverCode } = await import("../../src/backend/bwrap/server-code.js");
		const { writeScript, statFormat } = await import("../../src/backend/exec/scripts.js");
		const { runnerSource } = await import("../../src/backend/ssh/remote-run.js");
		const { watchdogScript } = await import("../../src/backend/leftovers.js");
		hostReads();

		const server = serverCode();
		expect(server).toContain("import os");
		expect(serverCode()).toBe(server);
		expect(hostReads()).toEqual(["bwrap_server.py"]);

		// Both stat formats are filled on the first call; the quoted replace program goes in then.
		const precise = writeScript(statFormat(true), true);
		expect(writeScript(statFormat(false), false)).not.toBe(precise);
		expect(writeScript(statFormat(true), true)).toBe(precise);
		expect(hostReads().sort()).toEqual(["durable.py", "exec_replace.py", "exec_write.sh", "host_lib.sh"]);

		runnerSource();
		runnerSource();
		expect(hostReads()).toEqual(["runner_head.py", "runner_procs.py", "runner_live.py", "runner.py"]);

		expect(watchdogScript()).not.toContain("@@");
		watchdogScript();
		expect(hostReads()).toEqual(["watchdog.sh"]);

		const { startShell } = await import("../../src/backend/ssh/remote-lib.js");
		const { inDirArgv } = await import("../../src/backend/relay-process.js");
		hostReads();
		expect(startShell()).toBe(startShell());
		inDirArgv({ argv: ["true"], cwd: "/" });
		inDirArgv({ argv: ["true"], cwd: "/" });
		expect(hostReads()).toEqual(["start_shell.sh", "in_dir.sh"]);
	});
});
