/**
 * ExecOps on the remote host. A command runs in a pooled persistent shell
 * (no login files, no per-call channel), under `setsid` so it leads its own process group; its
 * output streams back as it arrives; abort and timeout send `kill -KILL -<pgid>` through the helper
 * shell. Concurrent commands each get their own shell (up to maxJobShells, then they queue), so a
 * long command never holds up another; file operations do not use these shells at all.
 */
import { backendFact } from "../../boundary/backend-facts.js";
import { KeelError } from "../../boundary/errors.js";
import { watchStop } from "../../boundary/timing.js";
import type { ArgvRunner } from "../search/native.js";
import type { ExecOps, ExecRequest, ExecResult } from "../types.js";
import type { Live, SshConnection } from "./connection.js";
import { sysError } from "./errors.js";
import { runnerOf, runOnRunner } from "./run-exec.js";
import { startOnRunner } from "./run-live.js";
import type { JobShell } from "./shell.js";

/** After the command exits, how long to wait for output still held open by background children. */
const DRAIN_MS = 250;

export interface JobRequest {
	mode: "c" | "a";
	cwd: string;
	words: string[];
	/** mode a: the job's stdin (else /dev/null). */
	stdin?: Uint8Array;
	/** mode a: no FIFO relays (see Job.direct in shell.ts). */
	direct?: boolean;
	signal?: AbortSignal;
	timeoutMs?: number;
	onStdout: (c: Buffer) => void;
	onStderr?: (c: Buffer) => void;
}

export interface JobOutcome {
	status: number | null;
	aborted: boolean;
	timedOut: boolean;
}

/**
 * What runJob needs from whatever holds the job shells: the ssh connection here, the container
 * backend's pool of `podman exec -i` shells (container/shell-transport.ts).
 */
export interface JobHost {
	acquireShell(): Promise<JobShell>;
	/** kill -KILL the group (and the relays) through a helper shell; "-": only the relays. */
	kill(pgid: number | "-", relays: number[]): void;
	/** Record a running job's group (undefined: forget it), to kill or reap it later. */
	track(key: object, job: { pgid: number; start?: string } | undefined): void;
	/** Set once the whole link is gone: its jobs are then reaped on reconnect, not killed now. */
	readonly lost?: Error;
}

function sshJobHost(conn: SshConnection, live: Live): JobHost {
	return {
		acquireShell: () => live.acquireShell(),
		kill: (pgid, relays) => {
			live.helper.request("k_kill", String(pgid), ...relays.map(String)).catch(() => {});
		},
		track: (key, job) => conn.trackJob(key, job && { live, ...job }),
		get lost() {
			return live.lost;
		},
	};
}

export function runRemoteJob(conn: SshConnection, req: JobRequest): Promise<JobOutcome> {
	if (req.signal?.aborted) return Promise.resolve({ status: null, aborted: true, timedOut: false });
	return conn.use((live) => {
		live.peeks.clear(); // a command may change any file
		return runJob(sshJobHost(conn, live), req);
	});
}

/** One job in a shell from `host`: streamed output, abort and timeout kill its group. */
export async function runJob(host: JobHost, req: JobRequest): Promise<JobOutcome> {
	if (req.signal?.aborted) return { status: null, aborted: true, timedOut: false };
	const shell = await host.acquireShell();
	return new Promise<JobOutcome>((resolve, reject) => {
		let pgid: number | undefined;
		let relays: number[] = [];
		let status: number | null = null;
		let settled = false;
		let drain: NodeJS.Timeout | undefined;
		const killGroup = () => {
			if (pgid !== undefined) host.kill(pgid, relays);
		};
		// Aborted while waiting for a shell: marked now, the group killed once it is known.
		const stops = watchStop(req.signal, req.timeoutMs, killGroup);
		const key = {};
		const settle = (fn: () => void) => {
			if (settled) return;
			settled = true;
			host.track(key, undefined);
			stops.dispose();
			if (drain) clearTimeout(drain);
			// A child forked while the group was being killed would survive one kill.
			if (stops.aborted || stops.timedOut) killGroup();
			fn();
		};
		const finish = () => settle(() => resolve({ status, aborted: stops.aborted, timedOut: stops.timedOut }));
		try {
			shell.start({
				mode: req.mode,
				cwd: req.cwd,
				words: req.words,
				stdin: req.stdin,
				direct: req.direct,
				onStdout: (c) => {
					if (!settled) req.onStdout(c);
				},
				onStderr: req.onStderr
					? (c) => {
							if (!settled) req.onStderr?.(c);
						}
					: undefined,
				onStarted: (p, start, r) => {
					pgid = p;
					relays = r;
					host.track(key, { pgid: p, start });
					if (stops.aborted || stops.timedOut) killGroup();
				},
				onExit: (s) => {
					status = s;
					// Background children may hold the output open: stop waiting for them after a
					// while and cut them off (their relay dies; the shell then frees itself).
					drain = setTimeout(
						() => {
							host.kill("-", relays);
							finish();
						},
						stops.aborted || stops.timedOut ? 0 : DRAIN_MS,
					);
				},
				onDone: ({ noCwd }) => {
					if (noCwd) settle(() => reject(sysError("ENOENT", "no such working directory", req.cwd)));
					else finish();
				},
				onLost: (e) => {
					// Only the shell died (the link is fine): do not leave the job running. After a
					// drop, the host has already taken the job over, to reap it on reconnect.
					if (!host.lost) killGroup();
					settle(() => reject(host.lost ?? e));
				},
			});
		} catch (e) {
			settle(() => reject(e));
		}
	});
}

/** ExecOps over a job runner: a command line in mode c, req.env added to the remote environment. */
export function createJobExec(run: (req: JobRequest) => Promise<JobOutcome>): ExecOps {
	return {
		async run(req: ExecRequest): Promise<ExecResult> {
			// req.env adds to the remote environment (the local one means nothing there).
			const env = Object.entries(req.env ?? {}).map(([k, v]) => `${k}=${v}`);
			const r = await run({
				mode: "c",
				cwd: req.cwd,
				words: [req.command, ...env],
				signal: req.signal,
				timeoutMs: req.timeoutMs,
				onStdout: req.onData,
			});
			const killed = r.aborted || r.timedOut;
			return {
				exitCode: killed ? null : r.status,
				signal: killed ? "SIGKILL" : null,
				timedOut: r.timedOut,
				aborted: r.aborted,
			};
		},
	};
}

/**
 * Commands on the runner where the host has python3, else in the job shells. Process handles on
 * the runner only: without python3 on the host they are UNSUPPORTED.
 */
export function createSshExec(conn: SshConnection): ExecOps {
	const shells = createJobExec((req) => runRemoteJob(conn, req));
	return {
		start: (req) =>
			conn.use(async (live) => {
				const runner = await runnerOf(live);
				if (!runner) {
					throw backendFact("handles-need-python", { host: conn.label });
				}
				live.peeks.clear(); // a command may change any file
				return startOnRunner(runner, req, {
					// A drop ends the runner and, with it, the handles; a runner killed by a command does not.
					onRunnerDied: (tag) => {
						if (!live.lost) live.runnerOrphans.push(tag);
					},
					onLinkLost: (fn) => live.onLost(fn),
				}).catch((e: unknown) => {
					if (e instanceof KeelError || (e as NodeJS.ErrnoException)?.code) throw e;
					throw (
						live.lost ??
						backendFact("host-runner-lost", { running: false, reason: (e as Error).message }, { cause: e })
					);
				});
			}),
		run: (req) =>
			conn.use(async (live) => {
				const runner = await runnerOf(live);
				if (!runner) return shells.run(req);
				live.peeks.clear(); // a command may change any file
				if (req.signal?.aborted) return { exitCode: null, signal: null, timedOut: false, aborted: true };
				return runOnRunner(conn, live, runner, req);
			}),
	};
}

/** The search engines' transport: argv run remotely, stdout and stderr kept apart. */
export function sshArgvRunner(conn: SshConnection): ArgvRunner {
	return async (argv, opts) => {
		const r = await runRemoteJob(conn, {
			mode: "a",
			cwd: opts.cwd ?? "/",
			words: [...argv],
			signal: opts.signal,
			onStdout: opts.onStdout,
			onStderr: opts.onStderr ?? (() => {}),
		});
		return { exitCode: r.aborted ? null : r.status };
	};
}
