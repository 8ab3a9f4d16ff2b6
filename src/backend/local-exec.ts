/**
 * ExecOps for this machine (REQUIREMENTS B6): the command runs in its own process group, output is
 * handed on as it arrives, and abort or timeout kills the whole group.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { ExecOps, ExecRequest, ExecResult } from "./types.js";

/** After the shell exits, how long to wait for pipes held open by background children. */
const PIPE_DRAIN_MS = 250;

function findShell(): string {
	for (const candidate of ["/bin/bash", "/usr/bin/bash", "/bin/sh"]) {
		if (existsSync(candidate)) return candidate;
	}
	return "sh";
}

function killGroup(pid: number | undefined): void {
	if (!pid) return;
	try {
		process.kill(-pid, "SIGKILL");
	} catch {
		// The group is already gone.
	}
}

export function createLocalExec(): ExecOps {
	const shell = findShell();
	return {
		run(req: ExecRequest): Promise<ExecResult> {
			return new Promise((resolve, reject) => {
				if (req.signal?.aborted) {
					resolve({ exitCode: null, signal: null, timedOut: false, aborted: true });
					return;
				}
				const child = spawn(shell, ["-c", req.command], {
					cwd: req.cwd,
					detached: true,
					env: req.env ?? process.env,
					stdio: ["ignore", "pipe", "pipe"],
				});
				let timedOut = false;
				let aborted = false;
				let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
				let settled = false;
				let drainTimer: NodeJS.Timeout | undefined;

				const onAbort = () => {
					aborted = true;
					killGroup(child.pid);
				};
				const timer =
					req.timeoutMs !== undefined && req.timeoutMs > 0
						? setTimeout(() => {
								timedOut = true;
								killGroup(child.pid);
							}, req.timeoutMs)
						: undefined;
				req.signal?.addEventListener("abort", onAbort, { once: true });

				const finish = () => {
					if (settled || !exit) return;
					settled = true;
					if (timer) clearTimeout(timer);
					if (drainTimer) clearTimeout(drainTimer);
					req.signal?.removeEventListener("abort", onAbort);
					if (aborted || timedOut) killGroup(child.pid);
					child.stdout?.destroy();
					child.stderr?.destroy();
					resolve({ exitCode: exit.code, signal: exit.signal, timedOut, aborted });
				};

				child.stdout?.on("data", req.onData);
				child.stderr?.on("data", req.onData);
				child.on("error", (err) => {
					if (settled) return;
					settled = true;
					if (timer) clearTimeout(timer);
					req.signal?.removeEventListener("abort", onAbort);
					reject(err);
				});
				child.on("exit", (code, signal) => {
					exit = { code, signal };
					// Background children may hold the pipes; do not wait for them forever.
					drainTimer = setTimeout(finish, aborted || timedOut ? 0 : PIPE_DRAIN_MS);
				});
				child.on("close", finish);
			});
		},
	};
}
