/**
 * An ExecTransport over persistent shells inside the target (the ssh backend's job shells,
 * ssh/shell.ts, over any ShellPipe): each call is one `k_run` request to an idle shell, its argv
 * started under `setsid` (its own process group), stdin sent inside the request, stdout and stderr
 * streamed back apart. Shells are opened on demand (up to maxShells at once; more calls wait) and
 * kept; one that dies is dropped and the next call opens another, so a restarted container is
 * picked up by the next call. Abort kills the call's process group through a helper shell; a call
 * cut off by a dead shell has its group reaped (pid + start time) once a helper is up.
 * Calls with streamed stdin (long-lived programs) go to `direct`, one exec each.
 */
import { KeelError } from "../../boundary/errors.js";
import type { ExecTransport, TransportOptions } from "../exec/transport.js";
import { HelperShell, JobShell, type ShellPipe } from "../ssh/shell.js";

/** After the program exits, how long to wait for output still held open by its background children. */
const DRAIN_MS = 250;

export interface ShellTransportOptions {
	/** Open a new carrier running sh on the target. */
	open: () => ShellPipe;
	/** For calls whose stdin is a stream. */
	direct: ExecTransport;
	/** Persistent shells at most (default 4). */
	maxShells?: number;
	/** For messages: "podman container web". */
	label: string;
}

export interface ShellTransport {
	readonly transport: ExecTransport;
	/** Shells opened so far (tests: one per concurrent call, reused after). */
	readonly opened: number;
	/** Kill running calls' groups, end every shell. */
	close(): Promise<void>;
}

interface Running {
	pgid?: number;
	start?: string;
	relays: number[];
}

export function createShellTransport(opts: ShellTransportOptions): ShellTransport {
	const maxShells = opts.maxShells ?? 4;
	const shells = new Set<JobShell>();
	const idle: JobShell[] = [];
	const waiters: ((s: JobShell) => void)[] = [];
	const running = new Set<Running>();
	let orphans: { pgid: number; start: string }[] = [];
	let helper: HelperShell | undefined;
	let opened = 0;
	let closed = false;

	const onIdle = (s: JobShell) => {
		if (s.dead || closed) return;
		const next = waiters.shift();
		if (next) next(s);
		else idle.push(s);
	};

	const helperShell = (): HelperShell => {
		if (!helper || helper.dead) {
			helper = new HelperShell(opts.open());
			for (const o of orphans.splice(0)) helper.request("k_reap", String(o.pgid), o.start).catch(() => {});
		}
		return helper;
	};
	const kill = (pgid: number | "-", relays: number[]) => {
		if (closed && pgid === "-") return;
		try {
			helperShell()
				.request("k_kill", String(pgid), ...relays.map(String))
				.catch(() => {});
		} catch {
			// the helper could not be written to: it is dead, the next kill opens another
		}
	};

	const acquire = (): Promise<JobShell> => {
		for (let s = idle.pop(); s; s = idle.pop()) if (!s.dead) return Promise.resolve(s);
		for (const s of shells) if (s.dead) shells.delete(s);
		if (shells.size < maxShells) {
			const shell = new JobShell(opts.open(), undefined, onIdle);
			opened++;
			shells.add(shell);
			return Promise.resolve(shell);
		}
		return new Promise((resolve) => waiters.push(resolve));
	};

	const call = async (argv: string[], t: TransportOptions): Promise<{ exitCode: number | null }> => {
		if (t.stdin !== undefined && !(t.stdin instanceof Uint8Array)) return opts.direct(argv, t);
		if (closed) throw new KeelError("BACKEND_UNAVAILABLE", `The backend for ${opts.label} is closed.`);
		if (t.signal?.aborted) return { exitCode: null };
		const shell = await acquire();
		if (t.signal?.aborted) {
			onIdle(shell);
			return { exitCode: null };
		}
		return new Promise((resolve, reject) => {
			const job: Running = { relays: [] };
			let status: number | null = null;
			let settled = false;
			let exited = false;
			let drain: NodeJS.Timeout | undefined;
			const settle = (fn: () => void) => {
				if (settled) return;
				settled = true;
				t.signal?.removeEventListener("abort", onAbort);
				fn();
			};
			const onAbort = () => {
				if (job.pgid !== undefined) kill(job.pgid, job.relays);
				settle(() => resolve({ exitCode: null }));
			};
			t.signal?.addEventListener("abort", onAbort, { once: true });
			running.add(job);
			try {
				shell.start({
					mode: "a",
					cwd: "/",
					words: argv,
					stdin: t.stdin as Uint8Array | undefined,
					onStdout: (c) => {
						if (!settled) t.onData?.(c, "stdout");
					},
					onStderr: (c) => {
						if (!settled) t.onData?.(c, "stderr");
					},
					onStarted: (pgid, start, relays) => {
						Object.assign(job, { pgid, start, relays });
						if (settled || closed) kill(pgid, relays); // aborted before the group was known
					},
					onExit: (s) => {
						status = s;
						exited = true;
						// Background children holding the output open are cut off (their relays die).
						drain = setTimeout(() => kill("-", job.relays), settled ? 0 : DRAIN_MS);
						drain.unref();
					},
					onDone: () => {
						if (drain) clearTimeout(drain);
						running.delete(job);
						settle(() => resolve({ exitCode: exited ? status : null }));
					},
					onLost: (e) => {
						if (drain) clearTimeout(drain);
						running.delete(job);
						// The program may still run inside: reap its group once a helper is up.
						if (job.pgid !== undefined && job.start && !closed) {
							orphans.push({ pgid: job.pgid, start: job.start });
							if (helper && !helper.dead) {
								const o = orphans;
								orphans = [];
								for (const x of o) helper.request("k_reap", String(x.pgid), x.start).catch(() => {});
							}
						}
						settle(() => reject(e));
					},
				});
			} catch (e) {
				running.delete(job);
				settle(() => reject(e));
			}
		});
	};

	return {
		transport: call,
		get opened() {
			return opened;
		},
		async close() {
			if (closed) return;
			const kills = [...running]
				.filter((j) => j.pgid !== undefined)
				.map((j) => {
					try {
						return helperShell().request("k_kill", String(j.pgid), ...j.relays.map(String));
					} catch {
						return undefined;
					}
				});
			closed = true;
			await Promise.race([Promise.allSettled(kills), new Promise((r) => setTimeout(r, 2000).unref())]);
			for (const s of shells) s.close();
			helper?.close();
			shells.clear();
			idle.length = 0;
		},
	};
}
