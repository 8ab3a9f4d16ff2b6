/**
 * ExecOps for this machine (REQUIREMENTS B6): the command runs in its own process group, output is
 * handed on as it arrives, and abort or timeout kills the whole group (run-group.ts).
 */
import { existsSync } from "node:fs";
import { runInGroup } from "./run-group.js";
import type { ExecOps } from "./types.js";

/** bash where installed, else sh. */
export function findShell(): string {
	for (const candidate of ["/bin/bash", "/usr/bin/bash", "/bin/sh"]) {
		if (existsSync(candidate)) return candidate;
	}
	return "sh";
}

export function createLocalExec(): ExecOps {
	const shell = findShell();
	return {
		run: (req) =>
			runInGroup({
				argv: [shell, "-c", req.command],
				cwd: req.cwd,
				env: req.env ?? process.env,
				timeoutMs: req.timeoutMs,
				signal: req.signal,
				onData: (chunk) => req.onData(chunk),
			}),
	};
}
