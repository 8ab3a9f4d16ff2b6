/**
 * Persistent remote shells over ssh2 exec channels. A channel is opened once and then reused:
 * sshd starts every channel through the user's login shell (which may source ~/.bashrc), so that
 * cost is paid once per channel, never per call.
 *
 *  - HelperShell: file facts SFTP v3 lacks (identity, hashes) and the check-and-commit steps;
 *    requests are pipelined and answered in order, one round trip each.
 *  - JobShell: one command (or argv) at a time, output streamed, the job in its own process group.
 */
import type { Client, ClientChannel } from "ssh2";
import { shq } from "../shell-quote.js";
import { newMarker, RecordSplitter } from "./framing.js";
import { START_SHELL, shellInit } from "./remote-lib.js";

export function openChannel(client: Client): Promise<ClientChannel> {
	return new Promise((resolve, reject) => {
		try {
			client.exec(START_SHELL, (err, chan) => (err ? reject(err) : resolve(chan)));
		} catch (e) {
			reject(e);
		}
	});
}

/** Shared channel plumbing: stdout/stderr routing, death, the last bytes of stray stderr for errors. */
abstract class ShellChannel {
	private deadError: Error | undefined;
	protected strayStderr = "";

	constructor(
		protected readonly chan: ClientChannel,
		remotePath: string | undefined,
	) {
		chan.on("data", (c: Buffer) => this.onStdout(c));
		chan.stderr.on("data", (c: Buffer) => this.onStderr(c));
		chan.on("close", () => this.die(new Error("the remote shell closed")));
		chan.on("error", (e: Error) => this.die(e));
		chan.write(shellInit(remotePath));
	}

	get dead(): Error | undefined {
		return this.deadError;
	}

	protected write(text: string): void {
		if (this.deadError) throw this.deadError;
		this.chan.write(text);
	}

	protected keepStray(c: Buffer): void {
		this.strayStderr = (this.strayStderr + c.toString("utf8")).slice(-2000);
	}

	private die(e: Error): void {
		if (this.deadError) return;
		const why = this.strayStderr.trim();
		this.deadError = why ? new Error(`${e.message}: ${why}`) : e;
		this.onDeath(this.deadError);
	}

	close(): void {
		this.chan.end();
		this.chan.close();
	}

	protected abstract onStdout(c: Buffer): void;
	protected abstract onStderr(c: Buffer): void;
	protected abstract onDeath(e: Error): void;
}

export interface HelperReply {
	status: number;
	out: string;
}

interface PendingRequest {
	splitter: RecordSplitter;
	resolve: () => void;
	reject: (e: Error) => void;
}

export class HelperShell extends ShellChannel {
	private readonly pending: PendingRequest[] = [];

	constructor(chan: ClientChannel, remotePath?: string) {
		super(chan, remotePath);
	}

	/** Run one of remote-lib's functions with these arguments; its output and status. */
	request(fn: string, ...args: string[]): Promise<HelperReply> {
		return new Promise((resolve, reject) => {
			const marker = newMarker();
			const out: Buffer[] = [];
			let status = -1;
			const splitter = new RecordSplitter(
				marker,
				(c) => out.push(Buffer.from(c)),
				(body) => {
					status = Number(body.slice(2));
					return true;
				},
			);
			const entry: PendingRequest = {
				splitter,
				resolve: () => resolve({ status, out: Buffer.concat(out).toString("utf8") }),
				reject,
			};
			try {
				this.write(`k_q ${marker} ${fn} ${args.map(shq).join(" ")}\n`);
			} catch (e) {
				reject(e as Error);
				return;
			}
			this.pending.push(entry);
		});
	}

	protected onStdout(c: Buffer): void {
		let rest: Buffer | undefined = c;
		while (rest && rest.length > 0 && this.pending.length > 0) {
			const head = this.pending[0];
			rest = head.splitter.push(rest);
			if (rest === undefined) return;
			this.pending.shift();
			head.resolve();
		}
	}

	protected onStderr(c: Buffer): void {
		this.keepStray(c);
	}

	protected onDeath(e: Error): void {
		for (const p of this.pending.splice(0)) p.reject(e);
	}
}

export interface Job {
	/** "c": a shell command line (stderr merged into stdout); "a": an argv, stderr kept apart. */
	mode: "c" | "a";
	cwd: string;
	/** mode c: [command, ...NAME=value]; mode a: argv. */
	words: string[];
	onStdout: (c: Buffer) => void;
	onStderr?: (c: Buffer) => void;
	/** The job's process group, its leader's start time (when the host tells) and relays. */
	onStarted: (pgid: number, start: string | undefined, relays: number[]) => void;
	/** The job's main process ended with this status; its output may still be draining. */
	onExit: (status: number) => void;
	/** All output has arrived (or the job could not start: noCwd). The shell is free again. */
	onDone: (info: { noCwd: boolean }) => void;
	onLost: (e: Error) => void;
}

export class JobShell extends ShellChannel {
	private job: { job: Job; out: RecordSplitter; err: RecordSplitter; noCwd: boolean } | undefined;

	constructor(
		chan: ClientChannel,
		remotePath: string | undefined,
		private readonly onIdle: (shell: JobShell) => void,
	) {
		super(chan, remotePath);
	}

	get busy(): boolean {
		return this.job !== undefined;
	}

	start(job: Job): void {
		if (this.job) throw new Error("shell is busy");
		const marker = newMarker();
		const state = {
			job,
			noCwd: false,
			out: new RecordSplitter(
				marker,
				(c) => job.onStdout(c),
				(body) => body === "e",
			),
			err: new RecordSplitter(
				marker,
				(c) => (job.onStderr ? job.onStderr(c) : this.keepStray(c)),
				(body) => {
					const [kind, ...rest] = body.split(" ");
					if (kind === "p") {
						const start = rest[1] === "-" ? undefined : rest[1];
						job.onStarted(Number(rest[0]), start, rest.slice(2).filter(Boolean).map(Number));
					} else if (kind === "x") job.onExit(Number(rest[0]));
					else if (kind === "n") state.noCwd = true;
					return kind === "d";
				},
			),
		};
		this.job = state;
		this.write(`k_run ${marker} ${job.mode} ${[job.cwd, ...job.words].map(shq).join(" ")}\n`);
	}

	private maybeDone(): void {
		const s = this.job;
		if (!s?.out.done || !s.err.done) return;
		this.job = undefined;
		s.job.onDone({ noCwd: s.noCwd });
		this.onIdle(this);
	}

	protected onStdout(c: Buffer): void {
		if (this.job && !this.job.out.done) this.job.out.push(c);
		this.maybeDone();
	}

	protected onStderr(c: Buffer): void {
		if (this.job && !this.job.err.done) this.job.err.push(c);
		else this.keepStray(c);
		this.maybeDone();
	}

	protected onDeath(e: Error): void {
		const s = this.job;
		this.job = undefined;
		s?.job.onLost(e);
	}
}
