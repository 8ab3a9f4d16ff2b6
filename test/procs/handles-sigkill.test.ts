/**
 * A SIGKILLed keel leaves none of its process handles behind: the CLI (a child node process running
 * a session) starts a background server and a terminal program, then dies by SIGKILL while a
 * foreground command runs; the session's watchdog (local) or bwrap's --die-with-parent (each
 * handle's sandbox, a terminal's made by the sandbox's command server) kills them all.
 */
import { describe, expect, it } from "vitest";
import { bwrapAvailable } from "../contract/backends.js";
import { runKeel } from "../fixtures/keel-cli.js";
import { handleTests, processesWith, waitFor } from "../fixtures/processes.js";

const t = handleTests("handles-kill");
const bwrap = await bwrapAvailable();
if (!bwrap) console.log("handles-sigkill.test: the bwrap case is skipped (bwrap cannot run here)");

/** Starts every kind of handle through the CLI on `backend`, SIGKILLs it mid-call, and checks that nothing is left. */
async function killedMidCall(backend: "local" | "bwrap") {
	const m = t.marker();
	const calls = [
		{ tool: "bash", args: { command: `sleep 1000; : ${m}-bg`, background: true } },
		{
			tool: "bash",
			args: { command: `setsid sh -c 'sleep 1000; : ${m}-loose' & sleep 1000; : ${m}-yield`, yield: 0.1 },
		},
		{ tool: "bash", args: { command: `sleep 1000; : ${m}-tty`, tty: true } },
		{ tool: "bash", args: { command: `sleep 1000; : ${m}-fg` } },
	];
	const run = await runKeel(t.dir, ["batch", "--root", t.dir, "--profile", "unified", "--backend", backend], {
		input: `${calls.map((c) => JSON.stringify(c)).join("\n")}\n`,
		during: async (child) => {
			// Every command itself runs, not just a bwrap whose argv names it: bwrap arms its
			// --die-with-parent only some way into its start, a window no keel can close.
			const running = (k: string) => processesWith(`${m}-${k}`).some((l) => !/^\d+ bwrap /.test(l));
			const all = () => ["bg", "loose", "yield", "tty", "fg"].every(running);
			expect(await waitFor(all, 15_000), processesWith(m).join("\n")).toBe(true);
			child.kill("SIGKILL");
		},
	});
	expect(run.code).toBe(null);
	expect(await waitFor(() => processesWith(m).length === 0, 10_000), processesWith(m).join("\n")).toBe(true);
}

describe("keel killed with SIGKILL", () => {
	it("local: its background and terminal processes are killed by the watchdog", async () => {
		await killedMidCall("local");
	}, 30_000);

	it.skipIf(!bwrap)(
		"bwrap: its background and terminal sandboxes die with it",
		async () => {
			await killedMidCall("bwrap");
		},
		30_000,
	);
});
