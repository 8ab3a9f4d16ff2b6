/**
 * ExecOps.start over the command runner (runner_live.py on the host): a process handle whose
 * command runs on the host in its own session, with a pipe (or a pseudo-terminal from Python's
 * `os.openpty`) for stdin, under a call tag made here. Its output streams back as it comes (the
 * session's process table keeps it, bounded, and spills it locally); writes are answered once they
 * reached the command's stdin. A kill ends the group and sweeps the tag on the host before it
 * answers. The runner's channel closing (a drop, the backend closed, keel killed) makes the runner
 * kill every handle it holds, as it does its commands; a runner killed by a command leaves the
 * tags to the next runner (`onRunnerDied`).
 */
import { randomBytes } from "node:crypto";
import { constants as osConstants } from "node:os";
import { backendFact } from "../../boundary/backend-facts.js";
import { KeelError } from "../../boundary/errors.js";
import type { LiveExit, LiveProcess, StartRequest } from "../types.js";
import { sysError } from "./errors.js";
import { runnerInit } from "./remote-run.js";
import { CommandRunner } from "./run-client.js";
import type { ShellPipe } from "./shell.js";

export interface LiveHooks {
	/**
	 * The runner's channel closed with the handle on it: its tag, for the next runner to sweep
	 * (after a drop the runner kills it itself, and the caller may ignore it).
	 */
	onRunnerDied(tag: string): void;
	/**
	 * Calls `fn` when the whole link goes (the runner's channel may never say so itself); returns
	 * the unsubscribe. The runner on the host then kills the handle.
	 */
	onLinkLost?(fn: (e: Error) => void): () => void;
}

/** Starts the command on `runner`; resolves once it runs on the host (ENOENT: no such cwd). */
export function startOnRunner(
	runner: CommandRunner,
	req: StartRequest,
	hooks: LiveHooks,
): Promise<LiveProcess> {
	const tag = randomBytes(16).toString("hex");
	return new Promise<LiveProcess>((resolve, reject) => {
		let exit: LiveExit | undefined;
		let done = false;
		let started = false;
		let stdinOpen = true;
		let nextSeq = 1;
		const writes = new Map<number, (ok: boolean) => void>();
		let markExited: (e: LiveExit) => void = () => {};
		const exited = new Promise<LiveExit>((r) => {
			markExited = r;
		});
		let markDrained: () => void = () => {};
		const drained = new Promise<void>((r) => {
			markDrained = r;
		});
		let markDone: () => void = () => {};
		const gone = new Promise<void>((r) => {
			markDone = r;
		});
		const setExit = (e: LiveExit) => {
			if (exit) return;
			exit = e;
			markExited(e);
		};
		let unsubscribe = () => {};
		const end = () => {
			if (done) return;
			unsubscribe();
			done = true;
			stdinOpen = false;
			for (const w of writes.values()) w(false);
			writes.clear();
			setExit({ code: null, signal: "SIGKILL" });
			markDrained();
			markDone();
		};
		let id = 0;
		const proc: LiveProcess = {
			get pid() {
				return pid;
			},
			exited,
			drained,
			write(data) {
				if (done || !stdinOpen) return Promise.resolve(false);
				const seq = nextSeq++;
				return new Promise<boolean>((answer) => {
					writes.set(seq, answer);
					runner.writeLive(id, seq, Buffer.from(data, "utf8"));
				});
			},
			closeStdin() {
				if (done || !stdinOpen) return;
				if (!req.terminal) stdinOpen = false;
				runner.closeLiveStdin(id);
			},
			signal(name) {
				if (done || exit) return false;
				runner.signalLive(id, name);
				return true;
			},
			async kill() {
				if (!done) runner.kill(id);
				await gone;
			},
		};
		let pid: number | undefined;
		try {
			id = runner.startLive({
				cwd: req.cwd,
				command: req.command,
				env: req.env ?? {},
				tag,
				...(req.terminal ? { terminal: req.terminal } : {}),
				onData: (c) => req.onData(c),
				onStarted: (p) => {
					pid = p;
					started = true;
					resolve(proc);
				},
				onExit: ({ code, signal }) => setExit({ code, signal: signal === null ? null : signalName(signal) }),
				onOutputEnd: () => markDrained(),
				onWritten: (seq, ok) => {
					const answer = writes.get(seq);
					writes.delete(seq);
					if (!ok) stdinOpen = false;
					answer?.(ok);
				},
				onDone: ({ noCwd }) => {
					end();
					if (!started) {
						reject(
							noCwd
								? sysError("ENOENT", "no such working directory", req.cwd)
								: backendFact("command-not-started", { terminal: Boolean(req.terminal) }),
						);
					}
				},
				onLost: (e) => {
					hooks.onRunnerDied(tag);
					end();
					if (!started) reject(e);
				},
			});
		} catch (e) {
			reject(e);
			return;
		}
		unsubscribe =
			hooks.onLinkLost?.((e) => {
				end();
				if (!started) reject(e);
			}) ?? (() => {});
	});
}

function signalName(n: number): string {
	const entry = Object.entries(osConstants.signals).find(([, v]) => v === n);
	return entry ? entry[0] : String(n);
}

/** Process handles on a runner of their own, over whatever carrier `open` gives (a container's exec client). */
export interface RunnerHandles {
	start(req: StartRequest): Promise<LiveProcess>;
	/** End the runner: it kills every handle it holds (and what they set loose) as its input ends. */
	close(): void;
}

/**
 * A runner started on the first handle and again after it died (the handles on it end; the next
 * runner kills what carries their tags). Without python3 at the other end: UNSUPPORTED.
 */
export function runnerHandles(open: () => ShellPipe, label: string): RunnerHandles {
	let current: Promise<CommandRunner> | undefined;
	let closed = false;
	const orphans: string[] = [];
	const runner = (): Promise<CommandRunner> => {
		if (current) return current;
		const starting = (async () => {
			const r = new CommandRunner(open(), runnerInit());
			try {
				await r.ready;
			} catch (e) {
				throw backendFact("handles-need-python", { label, reason: (e as Error).message }, { cause: e });
			}
			for (const tag of orphans.splice(0)) r.sweep(tag);
			return r;
		})();
		current = starting;
		// A runner that failed to start is tried again by the next start (one that died: see start).
		starting.catch(() => {
			if (current === starting) current = undefined;
		});
		return starting;
	};
	return {
		async start(req) {
			if (closed) throw backendFact("backend-closed", { label });
			let r = await runner();
			if (r.dead) {
				current = undefined;
				r = await runner();
			}
			return startOnRunner(r, req, { onRunnerDied: (tag) => orphans.push(tag) }).catch((e: unknown) => {
				if (e instanceof KeelError || (e as NodeJS.ErrnoException)?.code) throw e;
				throw backendFact("runner-lost", { label, reason: (e as Error).message }, { cause: e });
			});
		},
		close() {
			closed = true;
			void current?.then((r) => r.close()).catch(() => {});
		},
	};
}
