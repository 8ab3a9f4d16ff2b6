/**
 * Persistent shells inside the target, over any ShellPipe (a `podman exec -i NAME sh` child): the
 * ssh backend's job shells and job runner (ssh/shell.ts, ssh/exec.ts) on another carrier. Each call
 * is one `k_run` request to an idle shell: its argv or command line started under `setsid` (its
 * own process group), stdin sent inside the request, output streamed back. Shells open on demand
 * (up to maxShells at once; more calls wait) and are kept; one that dies is dropped and the next
 * call opens another, so a restarted container is picked up by the next call. Abort and timeout
 * kill the group through a helper shell, which also kills the group of a job whose shell died.
 * Calls with streamed stdin (long-lived programs) go to `direct`, one exec each.
 */
import { backendFact } from "../../boundary/backend-facts.js";
import { KeelError } from "../../boundary/errors.js";
import type { ExecTransport, TransportOptions } from "../exec/transport.js";
import { createJobExec, type JobHost, type JobOutcome, type JobRequest, runJob } from "../ssh/exec.js";
import { HelperShell, JobShell, type ShellPipe } from "../ssh/shell.js";
import type { ExecOps } from "../types.js";

export interface ShellPoolOptions {
	/** Open a new carrier running sh on the target. */
	open: () => ShellPipe;
	/** For calls whose stdin is a stream. */
	direct: ExecTransport;
	/** Persistent job shells at most (default 4). */
	maxShells?: number;
	/** For messages: "podman container web". */
	label: string;
}

export interface ShellPool {
	/** argv calls (the exec backend's files, search and probes). */
	readonly transport: ExecTransport;
	/** Commands: one job each, mode c (no wrapper process). */
	readonly exec: ExecOps;
	/** Shells opened so far, helper included. */
	readonly opened: number;
	/** Kill running jobs' groups, end every shell. */
	close(): Promise<void>;
}

export function createShellPool(opts: ShellPoolOptions): ShellPool {
	const maxShells = opts.maxShells ?? 4;
	const shells = new Set<JobShell>();
	const idle: JobShell[] = [];
	const waiters: ((s: JobShell) => void)[] = [];
	const running = new Map<object, { pgid: number }>();
	let helper: HelperShell | undefined;
	let opened = 0;
	let closed = false;

	const open = () => {
		opened++;
		return opts.open();
	};
	const onIdle = (s: JobShell) => {
		if (s.dead || closed) return;
		const next = waiters.shift();
		if (next) next(s);
		else idle.push(s);
	};
	const helperShell = (): HelperShell => {
		if (!helper || helper.dead) helper = new HelperShell(open());
		return helper;
	};
	const host: JobHost = {
		async acquireShell() {
			if (closed) throw backendFact("backend-closed", { label: opts.label });
			for (let s = idle.pop(); s; s = idle.pop()) if (!s.dead) return s;
			for (const s of shells) if (s.dead) shells.delete(s);
			if (shells.size < maxShells) {
				const shell = new JobShell(open(), undefined, onIdle);
				shells.add(shell);
				return shell;
			}
			return new Promise((resolve) => waiters.push(resolve));
		},
		kill(pgid, relays) {
			try {
				helperShell()
					.request("k_kill", String(pgid), ...relays.map(String))
					.catch(() => {});
			} catch {
				// the helper died meanwhile: the next kill opens another
			}
		},
		track(key, job) {
			if (job) running.set(key, job);
			else running.delete(key);
		},
	};
	const run = (req: JobRequest): Promise<JobOutcome> =>
		runJob(host, req).catch((e: unknown) => {
			// errno-style errors (a missing cwd) and KeelErrors pass; a dead shell is the link's failure.
			if (e instanceof KeelError || (e as NodeJS.ErrnoException)?.code) throw e;
			throw backendFact(
				"shell-lost",
				{ label: opts.label, reason: (e as Error)?.message ?? String(e) },
				{ cause: e },
			);
		});

	const transport: ExecTransport = async (argv: string[], t: TransportOptions) => {
		if (t.stdin !== undefined && !(t.stdin instanceof Uint8Array)) return opts.direct(argv, t);
		const r = await run({
			mode: "a",
			cwd: "/",
			words: argv,
			stdin: t.stdin,
			direct: true, // keel's scripts, rg, fd and probes: nothing left running in the background
			signal: t.signal,
			onStdout: (c) => t.onData?.(c, "stdout"),
			onStderr: (c) => t.onData?.(c, "stderr"),
		});
		return { exitCode: r.aborted ? null : r.status };
	};

	return {
		transport,
		exec: createJobExec(run),
		get opened() {
			return opened;
		},
		async close() {
			if (closed) return;
			const kills = [...running.values()].map((j) => {
				try {
					return helperShell().request("k_kill", String(j.pgid));
				} catch {
					return undefined;
				}
			});
			closed = true;
			running.clear();
			await Promise.race([Promise.allSettled(kills), new Promise((r) => setTimeout(r, 2000).unref())]);
			for (const s of shells) s.close();
			helper?.close();
			shells.clear();
			idle.length = 0;
		},
	};
}
