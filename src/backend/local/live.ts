/**
 * ExecOps.start on this machine: a command that outlives its call. It leads its own process group
 * (with pipes) or its own session (in a pseudo-terminal), and carries the session's tag and a tag
 * of its own (leftovers.ts), so a kill takes what it set loose (`setsid`, `nohup`) as well, the
 * session's close kills everything, and a SIGKILLed keel leaves nothing behind (the watchdog).
 *
 * The terminal comes from @lydell/node-pty, loaded on the first terminal start only.
 */
import { constants as osConstants } from "node:os";
import { killChildGroup } from "../group-kill.js";
import { CALL_TAG, killTagged, type ProcessTracker } from "../leftovers.js";
import { type Spawner, startChild } from "../spawn/spawner.js";
import type { LiveExit, LiveProcess, StartRequest } from "../types.js";

/** After the leader exits, how long to wait for pipes a surviving child may hold open. */
const PIPE_DRAIN_MS = 100;

type PtyModule = typeof import("@lydell/node-pty");

/** Loads node-pty once per backend (10-23 ms measured here: only sessions that ask for a terminal pay it). */
export function lazyPty(): () => Promise<PtyModule> {
	let loading: Promise<PtyModule> | undefined;
	return () => {
		loading ??= import("@lydell/node-pty");
		return loading;
	};
}

export async function startLocal(
	req: StartRequest,
	shell: string,
	tracker: ProcessTracker,
	spawner: Spawner | undefined,
	loadPty: () => Promise<PtyModule>,
): Promise<LiveProcess> {
	const tags = tracker.tagCall();
	const program = {
		argv: [shell, "-c", req.command],
		cwd: req.cwd,
		env: { ...process.env, ...req.env, ...tags.env },
		// What the command set loose carries its call tag: a kill takes it too.
		sweep: () => killTagged(CALL_TAG, tags.callTag).then(() => {}),
	};
	if (req.terminal) return startInTerminal(program, req, await loadPty());
	return startPiped(program, req, spawner);
}

/** What to start and how to reach what it leaves behind. */
export interface LiveProgram {
	argv: string[];
	cwd: string;
	env: NodeJS.ProcessEnv;
	/** Kill what the program set loose outside its group (resolves once gone). */
	sweep: () => Promise<void>;
	/** Descriptors of this process the program gets as fd 3, 4, ... (bwrap's checked mount sources). */
	inheritFds?: readonly number[];
}

/** The program with piped stdio, leading its own process group. */
export function startPiped(
	program: LiveProgram,
	req: StartRequest,
	spawner: Spawner | undefined,
): LiveProcess {
	const child = startChild(spawner, program.argv[0], program.argv.slice(1), {
		cwd: program.cwd,
		env: program.env,
		detached: true,
		stdio: ["pipe", "pipe", "pipe", ...(program.inheritFds ?? [])],
	});
	for (const s of [child.stdin, child.stdout, child.stderr]) s?.on("error", () => {});
	child.stdout?.on("data", (c: Buffer) => req.onData(c));
	child.stderr?.on("data", (c: Buffer) => req.onData(c));
	let stdinOpen = child.stdin !== null;
	const exited = new Promise<LiveExit>((resolve) => {
		child.on("error", () => resolve({ code: 127, signal: null }));
		child.on("exit", (code, signal) => resolve({ code, signal }));
	});
	// A child that keeps the pipes open is read until it ends or is killed: the leader's exit
	// alone does not end the output.
	const drained = new Promise<void>((resolve) => {
		child.on("close", () => resolve());
		child.on("error", () => resolve());
	});
	child.stdin?.on("close", () => {
		stdinOpen = false;
	});
	return {
		pid: child.pid,
		exited,
		drained,
		write(data) {
			const stdin = child.stdin;
			if (!stdin || !stdinOpen || stdin.destroyed || stdin.writableEnded) return Promise.resolve(false);
			return new Promise((resolve) => stdin.write(data, (err) => resolve(!err)));
		},
		closeStdin() {
			stdinOpen = false;
			child.stdin?.end();
		},
		signal(name) {
			if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return false;
			try {
				process.kill(-child.pid, name);
				return true;
			} catch {
				return false;
			}
		},
		async kill() {
			killChildGroup(child);
			if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
			await program.sweep();
			await Promise.race([drained, new Promise((r) => setTimeout(r, PIPE_DRAIN_MS))]);
			child.stdout?.destroy();
			child.stderr?.destroy();
		},
	};
}

/** The program in a new pseudo-terminal, leading its own session. */
export function startInTerminal(program: LiveProgram, req: StartRequest, pty: PtyModule): LiveProcess {
	const size = req.terminal ?? { cols: 80, rows: 24 };
	const term = pty.spawn(program.argv[0], program.argv.slice(1), {
		name: "xterm-256color",
		cols: size.cols,
		rows: size.rows,
		cwd: program.cwd,
		env: { ...program.env, TERM: "xterm-256color" } as Record<string, string>,
	});
	let exit: LiveExit | undefined;
	let open = true;
	term.onData((d) => req.onData(Buffer.from(d, "utf8")));
	const exited = new Promise<LiveExit>((resolve) => {
		term.onExit(({ exitCode, signal }) => {
			exit = { code: signal ? null : exitCode, signal: signal ? signalName(signal) : null };
			open = false;
			resolve(exit);
		});
	});
	// node-pty delivers the last output before its exit event.
	const drained = exited.then(() => {});
	return {
		pid: term.pid,
		exited,
		drained,
		async write(data) {
			if (!open) return false;
			term.write(data);
			return true;
		},
		closeStdin() {
			if (open) term.write("\x04"); // the terminal's EOF (VEOF, ^D)
		},
		signal(name) {
			if (exit) return false;
			try {
				process.kill(-term.pid, name); // the program leads its own session and group
				return true;
			} catch {
				return false;
			}
		},
		async kill() {
			if (!exit) {
				try {
					process.kill(-term.pid, "SIGKILL");
				} catch {
					// gone
				}
			}
			await program.sweep();
			await Promise.race([exited, new Promise((r) => setTimeout(r, PIPE_DRAIN_MS))]);
		},
	};
}

function signalName(n: number): string {
	const entry = Object.entries(osConstants.signals).find(([, v]) => v === n);
	return entry ? entry[0] : String(n);
}
