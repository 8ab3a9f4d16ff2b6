/**
 * ExecOps over an exec transport. A small wrapper on the target starts the command with `setsid`
 * (its own session and process group), prints that group's id as the first line of stdout (held
 * back here, never shown), waits for it, and kills what is left of the group when it ends
 * (background jobs end with the command, as inside bwrap's PID namespace).
 *
 * Abort and timeout: keel kills the remote group with a second transport call (`kill -s KILL
 * -- -PGID`) and aborts the first call. Transports whose calls share the target's PID namespace
 * (docker/kubectl exec, ssh) are covered by the kill; transports that isolate each call (a
 * bwrap sandbox per call) by aborting the call. A process that calls setsid itself leaves the
 * group: only a transport that tears down its PID namespace catches it.
 */
import { pathFact } from "../../boundary/path-facts.js";
import { watchStop } from "../../boundary/timing.js";
import { hostProgram, readHostFile } from "../remote/host-programs.js";
import type { ExecOps, ExecRequest, ExecResult } from "../types.js";
import { killScript } from "./scripts.js";
import type { Target } from "./target.js";
import { unreachable } from "./transport.js";

/** How long an abort waits for the group id before it gives up on the kill call. */
const HEADER_GRACE_MS = 2000;
/** Bound on the kill call. */
const KILL_TIMEOUT_MS = 5000;

/** The wrapper (exec_run.sh): ARGS are CWD SHELL COMMAND then NAME=VALUE pairs. Read on first use. */
const wrapperScript = hostProgram(() => readHostFile("exec_run.sh"));

/** Splits the group-id line off the front of stdout. */
function headerSplitter(onPgid: (pgid: number) => void, onData: (chunk: Buffer) => void) {
	let pending: Buffer | undefined = Buffer.alloc(0);
	return {
		push(chunk: Buffer) {
			if (!pending) return onData(chunk);
			const buf = Buffer.concat([pending, chunk]);
			const nl = buf.indexOf(0x0a);
			if (nl < 0) {
				pending = buf;
				return;
			}
			pending = undefined;
			const pgid = Number(buf.subarray(0, nl).toString("latin1"));
			if (Number.isInteger(pgid) && pgid > 1) onPgid(pgid);
			if (nl + 1 < buf.length) onData(buf.subarray(nl + 1));
		},
		/** Output that never completed a header line (the wrapper failed before the command started). */
		flush() {
			if (pending?.length) onData(pending);
			pending = undefined;
		},
	};
}

export function createExecOps(target: Target): ExecOps {
	const { transport } = target;
	const killGroup = async (pgid: number) => {
		const signal = AbortSignal.timeout(KILL_TIMEOUT_MS);
		await transport(["sh", "-c", killScript(), "keel", String(pgid)], { signal }).catch(() => {});
	};

	return {
		async run(req: ExecRequest): Promise<ExecResult> {
			if (req.signal?.aborted) return { exitCode: null, signal: null, timedOut: false, aborted: true };
			const { shell } = await target.info();
			const call = new AbortController();
			let pgid: number | undefined;
			let stopping = false;
			let kill: Promise<void> | undefined;
			let graceTimer: NodeJS.Timeout | undefined;

			const stopNow = () => {
				if (pgid !== undefined) kill ??= killGroup(pgid);
				call.abort();
			};
			const stop = () => {
				if (stopping) return;
				stopping = true;
				if (pgid !== undefined) stopNow();
				else graceTimer = setTimeout(stopNow, HEADER_GRACE_MS);
			};
			const stops = watchStop(req.signal, req.timeoutMs, stop);

			const header = headerSplitter(
				(id) => {
					pgid = id;
					if (stopping) stopNow();
				},
				(c) => req.onData(c),
			);
			const env = Object.entries(req.env ?? {}).map(([k, v]) => `${k}=${v}`);
			let exitCode: number | null = null;
			try {
				const r = await transport(
					["sh", "-c", wrapperScript(), "keel", req.cwd, shell, req.command, ...env],
					{
						signal: call.signal,
						onData: (chunk, stream) => (stream === "stdout" ? header.push(chunk) : req.onData(chunk)),
					},
				);
				exitCode = r.exitCode;
			} catch (e) {
				if (!stopping) throw unreachable(e);
			} finally {
				stops.dispose();
				if (graceTimer) clearTimeout(graceTimer);
				header.flush();
			}
			await kill;
			if (exitCode === 1 && pgid === undefined && !stopping) {
				// The wrapper failed before the command started (a cwd that does not exist).
				throw pathFact("cwd-not-entered", req.cwd);
			}
			const { timedOut, aborted } = stops;
			return { exitCode: stopping ? null : exitCode, signal: null, timedOut, aborted };
		},
	};
}
