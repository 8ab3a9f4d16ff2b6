/**
 * ExecOps for this machine: the command runs in its own process group, output
 * is handed on as it arrives, abort or timeout kills the whole group (run-group.ts), and when the
 * command ends whatever it started is killed too, `setsid` and `nohup` included (leftovers.ts),
 * unless the call asked to keep it running until the session closes.
 */
import { existsSync } from "node:fs";
import type { ProcessTracker } from "../leftovers.js";
import { runInGroup } from "../run-group.js";
import type { Spawner } from "../spawn/spawner.js";
import type { ExecOps } from "../types.js";
import { lazyPty, startLocal } from "./live.js";

/** bash where installed, else sh. */
export function findShell(): string {
	for (const candidate of ["/bin/bash", "/usr/bin/bash", "/bin/sh"]) {
		if (existsSync(candidate)) return candidate;
	}
	return "sh";
}

export function createLocalExec(tracker?: ProcessTracker, spawner?: Spawner): ExecOps {
	const shell = findShell();
	const loadPty = lazyPty();
	return {
		background: tracker !== undefined,
		...(tracker ? { start: (req) => startLocal(req, shell, tracker, spawner, loadPty) } : {}),
		async run(req) {
			const tags = tracker?.tagCall();
			const result = await runInGroup({
				argv: [shell, "-c", req.command],
				cwd: req.cwd,
				env: { ...(req.env ?? process.env), ...tags?.env },
				timeoutMs: req.timeoutMs,
				signal: req.signal,
				onData: (chunk) => req.onData(chunk),
				spawner,
			});
			if (!tracker || !tags) return result;
			if (req.background && !result.aborted && !result.timedOut) {
				return { ...result, background: tracker.listCall(tags.callTag, tags.since) };
			}
			await tracker.endCall(tags.callTag, tags.since);
			return result;
		},
	};
}
