/**
 * One long-lived sandbox with a command server inside (server-code.ts), seen from the host: start
 * it, run one command at a time through it, kill it. A command still runs in its own process
 * group with the environment and directory of its own request; abort and timeout kill its group
 * and everything else in the sandbox. The host never trusts the server with more than framing: if
 * it stops answering after a kill, says it was tampered with, or dies, the whole sandbox (bwrap's
 * process group on the host) is SIGKILLed and the runner starts a new one for the next command.
 * The messages both sides exchange are in server-protocol.ts.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { constants } from "node:os";
import { backendFact } from "../../boundary/backend-facts.js";
import type { KeelError } from "../../boundary/errors.js";
import { watchStop } from "../../boundary/timing.js";
import { killChildGroup } from "../group-kill.js";
import type { ExecResult, LiveExit, LiveProcess } from "../types.js";
import type { LaunchPlan } from "./launch.js";
import { serverCode } from "./server-code.js";
import {
	type Message,
	type ServerRunRequest,
	type ServerTerminalRequest,
	SIGNAL_NAMES,
	stringEnv,
} from "./server-protocol.js";

/** The interpreter the server runs on, from the read-only system directories. */
export const SERVER_PYTHON = "/usr/bin/python3";
const START_TIMEOUT_MS = 10_000;
/** After a kill request, how long the server has to report the command gone before the sandbox is. */
const KILL_GRACE_MS = 2_000;

/** The sandbox was gone before the command started: nothing ran, so another sandbox may run it. */
export class NotStarted extends Error {}

export class SandboxServer {
	private readonly child: ChildProcessWithoutNullStreams;
	private lines = "";
	private nextId = 1;
	private current: ((m: Message | undefined) => void) | undefined;
	private readyWait: ((m: Message | undefined) => void) | undefined;
	/** Whether it may take another command (false once anything went wrong). */
	healthy = true;
	readonly exited: Promise<void>;
	/** What the sandbox was built with (its launch plan's key): reused only while it matches. */
	readonly key: string;

	/**
	 * Starts bwrap (`bwrap`, the program) with `plan`'s options and the server after them. Throws
	 * (CHANGED_ON_DISK) when the plan's sources cannot be opened as checked: nothing started then.
	 */
	constructor(bwrap: string, plan: LaunchPlan, emptied: readonly string[]) {
		this.key = plan.key;
		const opened = plan.open();
		try {
			this.child = spawn(
				bwrap,
				[
					...plan.options(3),
					"--as-pid-1",
					"--chdir",
					"/",
					"--",
					SERVER_PYTHON,
					"-I",
					"-S",
					"-c",
					serverCode(),
					...emptied,
				],
				{ detached: true, stdio: ["pipe", "pipe", "pipe", ...opened.fds], env: { PATH: "/usr/bin:/bin" } },
			) as ChildProcessWithoutNullStreams;
		} finally {
			opened.close(); // bwrap has its copies (or never started)
		}
		this.child.stdin.on("error", () => {});
		this.child.stderr.resume(); // diagnostics only; never shown to the model
		this.child.stdout.setEncoding("utf8");
		this.child.stdout.on("data", (text: string) => this.onText(text));
		this.exited = new Promise((resolve) => {
			this.child.on("error", () => {
				this.gone();
				resolve();
			});
			this.child.on("close", () => {
				this.gone();
				resolve();
			});
		});
		this.idle();
	}

	/** Resolves once the server inside said it is ready; rejects when it could not start. */
	async ready(): Promise<void> {
		this.busy();
		const m = await new Promise<Message | undefined>((resolve) => {
			this.readyWait = resolve;
			setTimeout(() => resolve(undefined), START_TIMEOUT_MS).unref();
		});
		this.readyWait = undefined;
		this.idle();
		if (!m?.ready) {
			this.kill();
			throw new Error(m?.fatal ? `the command server refused to start (${m.fatal})` : "no command server");
		}
	}

	run(req: ServerRunRequest): Promise<ExecResult> {
		if (!this.healthy) return Promise.reject(new Error("this sandbox is not usable"));
		const id = this.nextId++;
		let graceTimer: NodeJS.Timeout | undefined;
		const askKill = () => {
			this.child.stdin.write(`${JSON.stringify({ kill: id })}\n`);
			// The server answers once everything is dead; if it does not, the sandbox goes.
			graceTimer ??= setTimeout(() => this.kill(), KILL_GRACE_MS);
		};
		if (req.signal?.aborted)
			return Promise.resolve({ exitCode: null, signal: null, timedOut: false, aborted: true });
		const stops = watchStop(req.signal, req.timeoutMs, askKill);
		this.busy();
		let started = false;
		return new Promise<ExecResult>((resolve, reject) => {
			this.current = (m) => {
				if (m === undefined) {
					// The sandbox died under the command (killed from inside or outside).
					finish();
					const { aborted, timedOut } = stops;
					if (aborted || timedOut) resolve({ exitCode: null, signal: "SIGKILL", timedOut, aborted });
					else reject(started ? lost() : new NotStarted("the sandbox was gone"));
					return;
				}
				if (m.i !== id) return;
				if (m.started) started = true;
				else if (m.o !== undefined) req.onData(Buffer.from(m.o, "base64"), "stdout");
				else if (m.e !== undefined) req.onData(Buffer.from(m.e, "base64"), "stderr");
				else if ("exit" in m) {
					if (!m.clean) this.healthy = false;
					finish();
					const signal = m.sig ? (SIGNAL_NAMES.get(m.sig) ?? null) : null;
					resolve({ exitCode: m.exit ?? null, signal, timedOut: stops.timedOut, aborted: stops.aborted });
				}
			};
			const finish = () => {
				this.current = undefined;
				stops.dispose();
				if (graceTimer) clearTimeout(graceTimer);
				this.idle();
			};
			this.child.stdin.write(
				`${JSON.stringify({ run: id, argv: req.argv, cwd: req.cwd, env: stringEnv(req.env) })}\n`,
			);
		});
	}

	/**
	 * Starts one command in a pseudo-terminal the server makes inside the sandbox, as a process
	 * handle: input, signals and a kill go to the server, which acts on the command's group. This
	 * sandbox serves nothing else; once the command has ended (the server swept what it left), or
	 * is killed, the sandbox is killed too.
	 */
	startTerminal(req: ServerTerminalRequest): LiveProcess {
		if (!this.healthy) throw new Error("this sandbox is not usable");
		this.healthy = false; // one command, then the sandbox goes
		const id = this.nextId++;
		let exit: LiveExit | undefined;
		let ended: (e: LiveExit) => void = () => {};
		const exited = new Promise<LiveExit>((resolve) => {
			ended = resolve;
		});
		const end = (e: LiveExit) => {
			if (exit) return;
			exit = e;
			this.current = undefined;
			ended(e);
			this.kill();
		};
		const tell = (msg: object) =>
			new Promise<boolean>((resolve) => {
				if (exit || !this.child.stdin.writable) return resolve(false);
				this.child.stdin.write(`${JSON.stringify({ ...msg })}\n`, (err) => resolve(!err));
			});
		this.current = (m) => {
			if (m === undefined) return end({ code: null, signal: "SIGKILL" }); // the sandbox died
			if (m.i !== id) return;
			const bytes = m.o ?? m.e; // "e": why it could not start
			if (bytes !== undefined) req.onData(Buffer.from(bytes, "base64"));
			else if ("exit" in m)
				end({ code: m.exit ?? null, signal: m.sig ? (SIGNAL_NAMES.get(m.sig) ?? String(m.sig)) : null });
		};
		this.busy();
		void tell({
			run: id,
			argv: req.argv,
			cwd: req.cwd,
			env: stringEnv(req.env),
			tty: [req.cols, req.rows],
		});
		return {
			pid: this.child.pid,
			exited,
			// The server sends all of the output before the exit.
			drained: exited.then(() => {}),
			write: (data) => tell({ in: id, d: Buffer.from(data, "utf8").toString("base64") }),
			closeStdin: () => {
				void tell({ in: id, d: Buffer.from("\x04").toString("base64") }); // the terminal's EOF (VEOF, ^D)
			},
			signal: (name) => {
				const n = constants.signals[name];
				if (exit || n === undefined) return false;
				void tell({ signal: id, n });
				return true;
			},
			kill: async () => {
				if (!exit) {
					// The server kills the group and sweeps the sandbox before it answers; past the
					// grace, or if it does not, the sandbox goes as a whole.
					void tell({ kill: id });
					await Promise.race([exited, new Promise((r) => setTimeout(r, KILL_GRACE_MS))]);
				}
				this.kill();
				await this.exited;
			},
		};
	}

	/** SIGKILLs bwrap's process group: the sandbox and everything in it. */
	kill(): void {
		this.healthy = false;
		killChildGroup(this.child);
	}

	private onText(text: string): void {
		this.lines += text;
		for (let nl = this.lines.indexOf("\n"); nl >= 0; nl = this.lines.indexOf("\n")) {
			const line = this.lines.slice(0, nl);
			this.lines = this.lines.slice(nl + 1);
			let m: Message;
			try {
				m = JSON.parse(line) as Message;
			} catch {
				this.kill();
				return;
			}
			if (m.tainted)
				this.kill(); // its close fails the command in flight
			else if (this.readyWait) this.readyWait(m);
			else this.current?.(m);
		}
	}

	private gone(): void {
		this.healthy = false;
		this.readyWait?.(undefined);
		this.current?.(undefined);
	}

	/** Idle servers do not keep the process alive; one running a command does. */
	private idle(): void {
		this.child.unref();
		for (const s of [this.child.stdout, this.child.stdin, this.child.stderr])
			(s as unknown as { unref?: () => void }).unref?.();
	}

	private busy(): void {
		this.child.ref();
		for (const s of [this.child.stdout, this.child.stdin, this.child.stderr])
			(s as unknown as { ref?: () => void }).ref?.();
	}
}

function lost(): KeelError {
	return backendFact("sandbox-lost");
}
