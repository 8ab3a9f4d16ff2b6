/**
 * A kill sent to a child's process group after the child is gone must not reach whoever took the
 * number since (group-kill.ts). The reuse is made certain, not waited for: in a fresh PID
 * namespace (unshare, as root) nothing else starts processes, so after the child exits the test
 * sets the namespace's last pid so that the next process, a stranger in its own session, gets the
 * child's old pid, which is then also its group's id. Then the child's kill() is called, as a reset
 * or a close would call it late. The stranger must live.
 */
import { execFileSync } from "node:child_process";
import { existsSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildKeel, REPO } from "../durability/build-keel.js";

function unshareMissing(): string | undefined {
	if (process.getuid?.() !== 0) return "needs root (a PID namespace and its ns_last_pid)";
	try {
		execFileSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { stdio: "ignore" });
		return undefined;
	} catch {
		return "unshare --pid cannot run here";
	}
}

const CHILD = `
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
const { createLocalBackend } = await import(process.argv[2]);
const backend = createLocalBackend();
// "warm": a first child before, so that the one under test starts through posix_spawn (spawner.ts).
if (process.argv[3] === "warm") (await import("node:module")).createRequire(process.argv[2])("koffi"); // must load
if (process.argv[3] === "warm") await backend.process.spawn({ argv: ["true"], cwd: "/" }).exited;
const child = backend.process.spawn({ argv: ["sh", "-c", "exit 0"], cwd: "/" });
await child.exited;
// The next pid this namespace hands out is the child's old one.
writeFileSync("/proc/sys/kernel/ns_last_pid", String(child.pid - 1));
const stranger = spawn("setsid", ["sleep", "30"], { stdio: "ignore" });
await new Promise((r) => setTimeout(r, 200));
const stat = readFileSync("/proc/" + child.pid + "/stat", "utf8").split(" ");
const strangerPid = Number(stat[0]);
const cmd = readFileSync("/proc/" + child.pid + "/cmdline", "utf8").replace(/\\0/g, " ");
child.kill();
await new Promise((r) => setTimeout(r, 200));
// Killed, the stranger is a zombie (its parent, this script, has not reaped it) or gone.
let state = "gone";
try { state = readFileSync("/proc/" + strangerPid + "/stat", "utf8").split(" ")[2]; } catch {}
const alive = state !== "gone" && state !== "Z";
process.stdout.write(JSON.stringify({ childPid: child.pid, strangerPid, pgrp: Number(stat[4]), cmd, alive, state }) + "\\n");
stranger.kill("SIGKILL");
await backend.close();
process.exit(0);
`;

function runInPidNamespace(argv: string[]): { code: number | null; stdout: string; stderr: string } {
	try {
		const stdout = execFileSync("unshare", ["--pid", "--fork", "--mount-proc", ...argv], {
			encoding: "utf8",
			stdio: ["ignore", "pipe", "pipe"],
			timeout: 60_000,
		});
		return { code: 0, stdout, stderr: "" };
	} catch (e) {
		const err = e as { status: number | null; stdout?: string; stderr?: string };
		return { code: err.status, stdout: err.stdout ?? "", stderr: err.stderr ?? "" };
	}
}

const why = unshareMissing();
let work = "";
let bundle = "";
let script = "";

beforeAll(async () => {
	if (why) return;
	work = await mkdtemp(join(tmpdir(), "keel-stale-kill-"));
	bundle = await buildKeel(work);
	// The bundle loads koffi (posix_spawn) from beside it.
	if (!existsSync(join(work, "node_modules")))
		symlinkSync(join(REPO, "node_modules"), join(work, "node_modules"));
	script = join(work, "child.mjs");
	writeFileSync(script, CHILD);
}, 120_000);

afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

describe.skipIf(why !== undefined)(
	`a late kill of a finished child's group${why ? ` (skipped: ${why})` : ""}`,
	() => {
		it.each([
			["Node's spawn", "cold"],
			["posix_spawn", "warm"],
		])(
			"leaves alone the stranger that now holds the child's pid as its group (%s)",
			async (_, start) => {
				// The whole child runs inside a new PID namespace with its own /proc.
				const { code, stdout, stderr } = runInPidNamespace([process.execPath, script, bundle, start]);
				expect(code, stderr).toBe(0);
				const r = JSON.parse(stdout.trim()) as {
					childPid: number;
					strangerPid: number;
					pgrp: number;
					cmd: string;
					alive: boolean;
				};
				// The reuse really happened: the stranger holds the child's old pid and leads its group.
				expect(r.strangerPid).toBe(r.childPid);
				expect(r.pgrp).toBe(r.childPid);
				expect(r.cmd).toContain("sleep 30");
				expect(r.alive).toBe(true);
			},
			120_000,
		);
	},
);
