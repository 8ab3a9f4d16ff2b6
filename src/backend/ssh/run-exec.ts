/**
 * ExecOps over the command runner (remote-run.ts) where the host has python3: a command is one
 * request on a channel already open and one fork on the host, where a job shell takes a FIFO
 * pair, a `cat` relay, `setsid` and the shell. The runner starts with the first command and again
 * after it died (a command may kill it): the calls in flight then fail with BACKEND_UNAVAILABLE,
 * and the new runner first kills every process still carrying one of their call tags (the tags
 * are made here, so they outlive the runner that used them).
 */

import { randomBytes } from "node:crypto";
import { backendFact } from "../../boundary/backend-facts.js";
import { watchStop } from "../../boundary/timing.js";
import type { ExecRequest, ExecResult } from "../types.js";
import { channelPipe, openChannel } from "./channel.js";
import type { SshConnection } from "./connection.js";
import { sysError } from "./errors.js";
import type { Live } from "./live.js";
import { runnerInit } from "./remote-run.js";
import { CommandRunner } from "./run-client.js";

/** How long a runner's end waits to be explained by the connection dropping. */
const LOST_GRACE_MS = 250;

/** The live connection's runner, started when first needed; undefined: the host has no python3. */
export function runnerOf(live: Live): Promise<CommandRunner | undefined> {
	const slot = live.runner;
	if (slot && !slot.current?.dead) return slot.promise;
	const next: NonNullable<Live["runner"]> = { promise: Promise.resolve(undefined), current: undefined };
	next.promise = (async () => {
		let runner: CommandRunner;
		try {
			runner = new CommandRunner(channelPipe(await openChannel(live.client)), runnerInit(live.remotePath));
		} catch {
			// No channel now (the connection going, a session limit): the job shells, and try again later.
			if (live.runner === next) live.runner = undefined;
			return undefined;
		}
		try {
			await runner.ready;
		} catch {
			return undefined; // no python3, or one without what the runner needs: the job shells
		}
		// A runner that died left its commands behind: end them by their tags.
		for (const tag of live.runnerOrphans.splice(0)) runner.sweep(tag);
		next.current = runner;
		return runner;
	})();
	live.runner = next;
	return next.promise;
}

/** One command on the runner: output streamed, abort and timeout kill its group and tagged processes. */
export function runOnRunner(
	conn: SshConnection,
	live: Live,
	runner: CommandRunner,
	req: ExecRequest,
): Promise<ExecResult> {
	return new Promise<ExecResult>((resolve, reject) => {
		let status: number | null = null;
		let settled = false;
		let id = 0;
		const tag = randomBytes(16).toString("hex");
		const key = {};
		// Before start() names the command, a kill (id 0) is a no-op: an abort already signalled is
		// sent again below, once the id is known.
		const stops = watchStop(req.signal, req.timeoutMs, () => runner.kill(id));
		const settle = (fn: () => void) => {
			if (settled) return;
			settled = true;
			conn.trackJob(key, undefined);
			stops.dispose();
			fn();
		};
		try {
			id = runner.start({
				cwd: req.cwd,
				command: req.command,
				env: req.env ?? {},
				tag,
				onData: (c) => {
					if (!settled) req.onData(c);
				},
				onStarted: (pgid, start) => {
					conn.trackJob(key, { live, pgid, start });
				},
				onExit: (s) => {
					status = s;
				},
				onDone: ({ noCwd }) => {
					if (noCwd) settle(() => reject(sysError("ENOENT", "no such working directory", req.cwd)));
					const { aborted, timedOut } = stops;
					const killed = aborted || timedOut;
					settle(() =>
						resolve({
							exitCode: killed ? null : status,
							signal: killed ? "SIGKILL" : null,
							timedOut,
							aborted,
						}),
					);
				},
				onLost: (e) => {
					const fail = () =>
						settle(() =>
							reject(
								live.lost ??
									backendFact("host-runner-lost", { running: true, reason: e.message }, { cause: e }),
							),
						);
					if (live.lost) return fail();
					live.runnerOrphans.push(tag);
					// A dropped connection may close the runner's channel before the link itself is
					// seen to go: wait a moment, so that case reports the drop.
					const wait = setTimeout(fail, LOST_GRACE_MS);
					live.whenLost.catch(() => {
						clearTimeout(wait);
						fail();
					});
				},
			});
		} catch (e) {
			settle(() => reject(e));
			return;
		}
		if (stops.aborted) runner.kill(id);
	});
}
