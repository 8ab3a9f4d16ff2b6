/**
 * The host programs that are not part of the ssh or exec backends' file operations, run directly
 * on this machine as they are sent, without bwrap, a container or a sandbox SDK: the bwrap
 * sandbox's server as the init of a bare PID namespace (unshare), the watchdog's sweep, the two
 * sandbox SDK wrappers and the python finder. Hostile cases: a daemon a command leaves behind,
 * processes whose tag only resembles the session's, a "." and every byte value in the input, a
 * candidate interpreter that is not executable or too old.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serverCode } from "../../src/backend/bwrap/server-code.js";
import { aiSdkWrapperScript } from "../../src/backend/container/ai-sdk.js";
import { SESSION_TAG, watchdogScript } from "../../src/backend/leftovers.js";
import { readHostFile } from "../../src/backend/remote/host-programs.js";
import { processesWith, waitFor } from "../fixtures/processes.js";

let dir: string;
const children: ChildProcess[] = [];
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "keel-standalone-"));
});
afterEach(() => {
	for (const c of children.splice(0)) c.kill("SIGKILL");
	rmSync(dir, { recursive: true, force: true });
});

/** Every byte value, a "." line and a "#3" line: what the wrappers must carry untouched. */
const EVERY_BYTE = Buffer.concat([
	Buffer.from(".\n#3\n"),
	Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
]);

const exited = (c: ChildProcess) =>
	new Promise<NodeJS.Signals | number | null>((resolve) => {
		if (c.exitCode !== null || c.signalCode !== null) resolve(c.signalCode ?? c.exitCode);
		else c.once("exit", (code, signal) => resolve(signal ?? code));
	});

/** unshare(1) can make a PID namespace with its own /proc here (root, or user namespaces allowed). */
const UNSHARE = (() => {
	for (const flags of [
		["--pid", "--fork", "--mount-proc"],
		["--user", "--map-root-user", "--pid", "--fork", "--mount-proc"],
	]) {
		if (spawnSync("unshare", [...flags, "true"], { stdio: "ignore" }).status === 0) return flags;
	}
	return undefined;
})();
if (!UNSHARE)
	console.log("host-programs-standalone: bwrap server part skipped (unshare cannot make a PID namespace)");

describe.skipIf(!UNSHARE)("the bwrap sandbox's server, as init of a bare PID namespace", () => {
	it("runs a command, then kills the daemon it left before it says clean, and takes the next", async () => {
		const marker = `keelstandalone${process.pid}x${Date.now()}`;
		const server = spawn("unshare", [...UNSHARE!, "/usr/bin/python3", "-I", "-S", "-c", serverCode()], {
			stdio: ["pipe", "pipe", "inherit"],
		});
		children.push(server);
		const messages: Record<string, unknown>[] = [];
		let text = "";
		server.stdout.setEncoding("utf8").on("data", (d: string) => {
			text += d;
			const lines = text.split("\n");
			text = lines.pop() ?? "";
			for (const l of lines) messages.push(JSON.parse(l));
		});
		const env = { PATH: "/usr/bin:/bin" };
		const request = (id: number, command: string) =>
			server.stdin.write(`${JSON.stringify({ run: id, argv: ["sh", "-c", command], cwd: dir, env })}\n`);
		const done = (id: number) => () => messages.some((m) => m.i === id && "exit" in m);
		expect(await waitFor(() => messages.some((m) => m.ready), 10_000)).toBe(true);

		request(1, `setsid sh -c 'sleep 1000; : ${marker}' & echo "$PWD"; exit 7`);
		expect(await waitFor(done(1), 10_000)).toBe(true);
		const out = messages.filter((m) => m.i === 1 && typeof m.o === "string");
		expect(Buffer.concat(out.map((m) => Buffer.from(m.o as string, "base64"))).toString()).toBe(`${dir}\n`);
		expect(messages.find((m) => m.i === 1 && "exit" in m)).toMatchObject({
			exit: 7,
			sig: null,
			clean: true,
		});
		// The reply goes out only once everything else in the namespace is dead.
		expect(processesWith(marker)).toEqual([]);

		request(2, "echo again");
		expect(await waitFor(done(2), 10_000)).toBe(true);
		expect(messages.some((m) => m.tainted)).toBe(false);
		server.stdin.end();
		expect(await exited(server)).toBe(0);
	});
});

describe("the watchdog's sweep (host/watchdog.sh)", () => {
	it("once keel's end of its stdin closes, kills the session's processes and no lookalike", async () => {
		const tag = `${SESSION_TAG}=${process.pid.toString(16)}abc`;
		const [key, value] = tag.split("=");
		const sleeper = (env: Record<string, string>) => {
			const c = spawn("sleep", ["1000"], { env: { PATH: process.env.PATH, ...env }, stdio: "ignore" });
			children.push(c);
			return c;
		};
		const tagged = [sleeper({ [key]: value }), sleeper({ OTHER: "1", [key]: value })];
		const lookalikes = [
			sleeper({ [key]: `${value}d` }), // a longer value
			sleeper({ [`X${key}`]: value }), // a longer name
			sleeper({ OTHER: tag }), // the whole tag inside another variable
		];
		const watchdog = spawn("/bin/sh", ["-c", watchdogScript(), "keel-watchdog", tag], {
			stdio: ["pipe", "ignore", "inherit"],
		});
		children.push(watchdog);
		watchdog.stdin.end();
		expect(await exited(watchdog)).toBe(0);
		for (const c of tagged) expect(await exited(c)).toBe("SIGKILL");
		for (const c of lookalikes) expect([c.exitCode, c.signalCode]).toEqual([null, null]);
	});

	it("a tagged process that appears just after a pass that found nothing is still killed", async () => {
		// What a process in the middle of execve looks like to a pass: its environment reads empty
		// for a moment. Here the stand-in appears 0.3 s after the watchdog killed the only tagged
		// process, well inside its quiet passes (4, a quarter second apart): a watchdog that ended on
		// the first empty pass has left by then, and the stand-in runs on.
		const tag = `${SESSION_TAG}=${process.pid.toString(16)}def`;
		const [key, value] = tag.split("=");
		const env = { PATH: process.env.PATH, [key]: value };
		const first = spawn("sleep", ["1000"], { env, stdio: "ignore" });
		children.push(first);
		const watchdog = spawn("/bin/sh", ["-c", watchdogScript(), "keel-watchdog", tag], {
			stdio: ["pipe", "ignore", "inherit"],
		});
		children.push(watchdog);
		watchdog.stdin.end();
		expect(await exited(first)).toBe("SIGKILL");
		await sleep(300);
		const late = spawn("sleep", ["1000"], { env, stdio: "ignore" });
		children.push(late);
		const outcome = await Promise.race([exited(late), sleep(5000).then(() => "still running after 5 s")]);
		expect(outcome).toBe("SIGKILL");
		expect(await exited(watchdog)).toBe(0);
	});
});

describe("the sandbox SDK wrappers (sdk_wrapper.sh: sdk-wrapper.test.ts)", () => {
	it("ai_sdk_wrapper.sh: stdin from KEEL_IN or a staged file (removed after), stdout in base64", () => {
		const b64 = EVERY_BYTE.toString("base64");
		const viaEnv = spawnSync("sh", ["-c", aiSdkWrapperScript(), "keel", "env", "sh", "-c", "cat; exit 3"], {
			env: { PATH: process.env.PATH, KEEL_IN: b64 },
			timeout: 10_000,
		});
		expect(viaEnv.status).toBe(3);
		expect(Buffer.from(viaEnv.stdout.toString(), "base64").equals(EVERY_BYTE)).toBe(true);

		const staged = join(dir, "in");
		writeFileSync(staged, b64);
		const viaFile = spawnSync("sh", ["-c", aiSdkWrapperScript(), "keel", staged, "cat"], { timeout: 10_000 });
		expect(viaFile.status).toBe(0);
		expect(Buffer.from(viaFile.stdout.toString(), "base64").equals(EVERY_BYTE)).toBe(true);
		expect(spawnSync("test", ["-e", staged]).status).toBe(1);
	});
});

describe("the python finder (host/find_python.sh)", () => {
	const find = (candidates: string[]) =>
		spawnSync("sh", ["-c", readHostFile("find_python.sh"), "keel", ...candidates], {
			encoding: "utf8",
			timeout: 10_000,
		});

	it("skips a candidate that is not executable or too old, and prints the first that is Python 3.8+", () => {
		const plain = join(dir, "python-plain");
		writeFileSync(plain, "#!/bin/sh\nexit 0\n"); // not executable
		const old = join(dir, "python-old");
		writeFileSync(old, "#!/bin/sh\nexit 1\n"); // answers the version check with "too old"
		chmodSync(old, 0o755);
		const r = find([plain, old, join(dir, "missing"), "python3"]);
		expect(r.status).toBe(0);
		const wanted = spawnSync("sh", ["-c", "command -v python3"], { encoding: "utf8" }).stdout.trim();
		expect(r.stdout).toBe(`${wanted}\n`);
	});

	it("exits 3 and prints nothing when no candidate will do", () => {
		const r = find([join(dir, "missing"), "keel-no-such-python"]);
		expect(r.status).toBe(3);
		expect(r.stdout).toBe("");
	});
});
