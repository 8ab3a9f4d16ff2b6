/**
 * A SIGKILLed keel leaves none of its process handles behind: the CLI (a child node process running
 * a session) starts a background server and a terminal program, then dies by SIGKILL while a
 * foreground command runs; the session's watchdog kills them all.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runKeel } from "../fixtures/keel-cli.js";
import { processesWith, waitFor } from "../fixtures/processes.js";

let dir: string;
let m = "";
beforeEach(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-handles-kill-")));
	m = `keelproc${randomBytes(5).toString("hex")}`;
});
afterEach(async () => {
	for (const line of processesWith(m)) process.kill(Number(line.split(" ")[0]), "SIGKILL");
	await rm(dir, { recursive: true, force: true });
});

describe("local: keel killed with SIGKILL", () => {
	it("its background and terminal processes are killed by the watchdog", async () => {
		const calls = [
			{ tool: "bash", args: { command: `sleep 1000; : ${m}-bg`, background: true } },
			{
				tool: "bash",
				args: { command: `setsid sh -c 'sleep 1000; : ${m}-loose' & sleep 1000; : ${m}-yield`, yield: 0.1 },
			},
			{ tool: "bash", args: { command: `sleep 1000; : ${m}-tty`, tty: true } },
			{ tool: "bash", args: { command: `sleep 1000; : ${m}-fg` } },
		];
		const run = await runKeel(dir, ["batch", "--root", dir, "--profile", "unified"], {
			input: `${calls.map((c) => JSON.stringify(c)).join("\n")}\n`,
			during: async (child) => {
				const all = () =>
					["bg", "loose", "yield", "tty", "fg"].every((k) => processesWith(`${m}-${k}`).length > 0);
				expect(await waitFor(all, 15_000), processesWith(m).join("\n")).toBe(true);
				child.kill("SIGKILL");
			},
		});
		expect(run.code).toBe(null);
		expect(await waitFor(() => processesWith(m).length === 0, 10_000), processesWith(m).join("\n")).toBe(
			true,
		);
	}, 30_000);
});
