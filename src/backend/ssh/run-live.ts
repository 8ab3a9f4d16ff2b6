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
import type { LiveExit, LiveProcess, StartRequest } from "../types.js";
import { sysError } from "./errors.js";
import type { CommandRunner } from "./run-client.js";

export interface LiveHooks {
	/** The runner ended with the handle still on it (not a drop): its tag is for the next runner. */
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
								: new Error("the command could not be started"),
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
