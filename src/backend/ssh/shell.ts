/**
 * Persistent remote shells over any carrier of three pipes: an ssh2 exec channel here, a
 * `podman exec -i` / `kubectl exec -i` child for the container backend (container/pipe.ts). A
 * carrier is opened once and then reused, so its start-up cost (sshd's login shell, which may
 * source ~/.bashrc; a container runtime's exec) is paid once per shell, never per call.
 *
 *  - HelperShell: file facts SFTP v3 lacks (identity, hashes), the check-and-commit steps, kills;
 *    requests are pipelined and answered in order, one round trip each.
 *  - JobShell: one command (or argv) at a time, output streamed, the job in its own process group.
 */
import { shq } from "../shell-quote.js";
import { newMarker, RecordSplitter } from "./framing.js";
import { shellInit } from "./remote-lib.js";

/** A shell's stdin, stdout and stderr, whatever carries them. */
export interface ShellPipe {
	write(text: string): void;
	onStdout(fn: (c: Buffer) => void): void;
	onStderr(fn: (c: Buffer) => void): void;
	/** Called once when the carrier ends (the shell exited, the channel or process is gone). */
	onClose(fn: (e: Error) => void): void;
	/** End the shell's input and release the carrier. */
	close(): void;
}

/** Shared channel plumbing: stdout/stderr routing, death, the last bytes of stray stderr for errors. */
abstract class ShellChannel {
	private deadError: Error | undefined;
	protected strayStderr = "";

	constructor(
		protected readonly pipe: ShellPipe,
		remotePath: string | undefined,
		init: string = shellInit(remotePath),
	) {
		pipe.onStdout((c) => this.onStdout(c));
		pipe.onStderr((c) => this.onStderr(c));
		pipe.onClose((e) => this.die(e));
		pipe.write(init);
	}

	get dead(): Error | undefined {
		return this.deadError;
	}

	protected write(text: string): void {
		if (this.deadError) throw this.deadError;
		this.pipe.write(text);
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
		this.pipe.close();
	}

	protected abstract onStdout(c: Buffer): void;
	protected abstract onStderr(c: Buffer): void;
	protected abstract onDeath(e: Error): void;
}

export interface HelperReply {
	status: number;
	/** The output as text (UTF-8). */
	out: string;
	/** The output as bytes (k_read's file contents). */
	bytes: Buffer;
}

/** How a helper's requests are written: the shell helper's `k_q` line, or another encoding. */
export type RequestEncoder = (marker: string, fn: string, args: string[]) => string;

const shellRequest: RequestEncoder = (marker, fn, args) => `k_q ${marker} ${fn} ${args.map(shq).join(" ")}\n`;

interface PendingRequest {
	splitter: RecordSplitter;
	resolve: () => void;
	reject: (e: Error) => void;
}

export class HelperShell extends ShellChannel {
	private readonly pending: PendingRequest[] = [];

	constructor(pipe: ShellPipe, remotePath?: string, opts: { init?: string; encode?: RequestEncoder } = {}) {
		super(pipe, remotePath, opts.init);
		this.encode = opts.encode ?? shellRequest;
	}

	private readonly encode: RequestEncoder;

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
				resolve: () => {
					const bytes = Buffer.concat(out);
					resolve({
						status,
						bytes,
						get out() {
							return bytes.toString("utf8");
						},
					});
				},
				reject,
			};
			try {
				this.write(this.encode(marker, fn, args));
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
	/** mode a: bytes for the job's stdin (else /dev/null), sent inside the request (base64). */
	stdin?: Uint8Array;
	/**
	 * mode a: output straight to the shell's streams, without the FIFO relays that cut off
	 * background children. Only for programs that leave none (keel's own scripts, rg, fd).
	 */
	direct?: boolean;
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
		pipe: ShellPipe,
		remotePath: string | undefined,
		private readonly onIdle: (shell: JobShell) => void,
	) {
		super(pipe, remotePath);
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
		const words = [job.cwd, ...job.words].map(shq).join(" ");
		const argv = job.mode === "a";
		if (argv && job.stdin) {
			// A here-document is read by the shell itself, so this works in any sh (dash reads its
			// input in blocks: bytes after the command line would be gone before a job could read them).
			const mode = job.direct ? "g" : "b";
			this.write(
				`k_run ${marker} ${mode} ${words} 9<<'KEEL_${marker}_END'\n${base64Lines(job.stdin)}KEEL_${marker}_END\n`,
			);
		} else this.write(`k_run ${marker} ${argv && job.direct ? "f" : job.mode} ${words}\n`);
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

/** base64 in lines of 76 characters, each ending in a newline (none for no bytes). */
function base64Lines(data: Uint8Array): string {
	const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
	let out = "";
	for (let at = 0; at < text.length; at += 76) out += `${text.slice(at, at + 76)}\n`;
	return out;
}
