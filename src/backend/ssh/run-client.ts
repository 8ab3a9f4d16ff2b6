/**
 * The client of the command runner (remote-run.ts): requests as JSON lines, answers as
 * length-prefixed frames. Any number of commands run at once on one runner; each is known by an
 * id of this client. When the runner's channel closes, every command in flight is told (onLost).
 */
import type { ShellPipe } from "./shell.js";

const HEADER = 9;

export interface RunnerJob {
	cwd: string;
	command: string;
	env: Record<string, string>;
	/** KEEL_CALL_TAG for this command: every process it leaves carrying it is killed. */
	tag: string;
	onData: (c: Buffer) => void;
	/** The command's leader (and group): its pid and start time ("-" when the host does not say). */
	onStarted: (pid: number, start: string | undefined) => void;
	/** The command's leader ended with this status; its group is being ended. */
	onExit: (status: number) => void;
	/** Nothing of the command is left; noCwd: it could not start (no such directory). */
	onDone: (info: { noCwd: boolean }) => void;
	onLost: (e: Error) => void;
}

/** A process handle on the runner (runner_live.py): the frames of one such command. */
export interface RunnerLiveJob {
	cwd: string;
	command: string;
	env: Record<string, string>;
	/** KEEL_CALL_TAG for this command: its kill and the runner's end take whatever carries it. */
	tag: string;
	/** A pseudo-terminal of this size for stdin and output; else pipes. */
	terminal?: { cols: number; rows: number };
	onData: (c: Buffer) => void;
	onStarted: (pid: number) => void;
	/** The leader exited (or died of a signal); what it started may still run. */
	onExit: (exit: { code: number | null; signal: number | null }) => void;
	/** No more output can come. */
	onOutputEnd: () => void;
	/** A write (by its sequence number) reached the command's stdin, or was lost (ok false). */
	onWritten: (seq: number, ok: boolean) => void;
	/** Nothing of the command is left; noCwd: it could not start (no such directory). */
	onDone: (info: { noCwd: boolean }) => void;
	onLost: (e: Error) => void;
}

export class CommandRunner {
	private readonly jobs = new Map<number, RunnerJob & { noCwd: boolean }>();
	private readonly lives = new Map<number, RunnerLiveJob & { noCwd: boolean }>();
	private nextId = 1;
	private held: Buffer = Buffer.alloc(0);
	private deadError: Error | undefined;
	private stray = "";
	/** Resolves once the runner said it is ready; rejects if its channel closes first. */
	readonly ready: Promise<void>;
	private onReady: () => void = () => {};

	constructor(
		private readonly pipe: ShellPipe,
		init: string,
	) {
		let failReady: (e: Error) => void = () => {};
		this.ready = new Promise<void>((resolve, reject) => {
			this.onReady = resolve;
			failReady = reject;
		});
		this.ready.catch(() => {});
		pipe.onStdout((c) => this.onStdout(c));
		pipe.onStderr((c) => {
			this.stray = (this.stray + c.toString("utf8")).slice(-2000);
		});
		pipe.onClose((e) => {
			if (this.deadError) return;
			const why = this.stray.trim();
			this.deadError = why ? new Error(`${e.message}: ${why}`) : e;
			failReady(this.deadError);
			const jobs = [...this.jobs.values(), ...this.lives.values()];
			this.jobs.clear();
			this.lives.clear();
			for (const j of jobs) j.onLost(this.deadError);
		});
		pipe.write(init);
	}

	get dead(): Error | undefined {
		return this.deadError;
	}

	/** How many commands are running on it (process handles included). */
	get running(): number {
		return this.jobs.size + this.lives.size;
	}

	start(job: RunnerJob): number {
		if (this.deadError) throw this.deadError;
		const id = this.nextId++;
		this.jobs.set(id, { ...job, noCwd: false });
		this.pipe.write(`${JSON.stringify(["r", id, job.cwd, job.command, job.env, job.tag])}\n`);
		return id;
	}

	kill(id: number): void {
		if (!this.deadError && (this.jobs.has(id) || this.lives.has(id)))
			this.pipe.write(`${JSON.stringify(["k", id])}\n`);
	}

	/** Start a process handle; its frames go to `job` until onDone or onLost. */
	startLive(job: RunnerLiveJob): number {
		if (this.deadError) throw this.deadError;
		const id = this.nextId++;
		this.lives.set(id, { ...job, noCwd: false });
		const size = job.terminal ?? { cols: 0, rows: 0 };
		this.pipe.write(
			`${JSON.stringify(["l", id, job.cwd, job.command, job.env, job.tag, size.cols, size.rows])}\n`,
		);
		return id;
	}

	/** Bytes to a handle's stdin; answered by onWritten(seq). */
	writeLive(id: number, seq: number, data: Buffer): void {
		this.liveRequest(["w", id, seq, data.toString("base64")]);
	}

	/** End a handle's stdin once what was written reached it (a terminal gets its EOF character). */
	closeLiveStdin(id: number): void {
		this.liveRequest(["c", id]);
	}

	/** A signal (by name, as the host's Python knows it) to a handle's process group. */
	signalLive(id: number, name: string): void {
		this.liveRequest(["g", id, name]);
	}

	private liveRequest(req: unknown[]): void {
		if (!this.deadError && this.lives.has(req[1] as number)) this.pipe.write(`${JSON.stringify(req)}\n`);
	}

	/** Kill every process still carrying one of these call tags (a runner that died left them). */
	sweep(tag: string): void {
		if (!this.deadError) this.pipe.write(`${JSON.stringify(["s", tag])}\n`);
	}

	close(): void {
		this.pipe.close();
	}

	private onStdout(c: Buffer): void {
		let buf = this.held.length > 0 ? Buffer.concat([this.held, c]) : c;
		while (buf.length >= HEADER) {
			const len = buf.readUInt32BE(5);
			if (buf.length < HEADER + len) break;
			this.frame(String.fromCharCode(buf[0]), buf.readUInt32BE(1), buf.subarray(HEADER, HEADER + len));
			buf = buf.subarray(HEADER + len);
		}
		this.held = buf.length > 0 ? Buffer.from(buf) : Buffer.alloc(0);
	}

	private frame(kind: string, id: number, payload: Buffer): void {
		if (kind === "h") {
			this.onReady();
			return;
		}
		const live = this.lives.get(id);
		if (live) {
			this.liveFrame(id, live, kind, payload);
			return;
		}
		const job = this.jobs.get(id);
		if (!job) return;
		if (kind === "o") job.onData(payload);
		else if (kind === "p") {
			const [pid, start] = payload.toString("latin1").split(" ");
			job.onStarted(Number(pid), start === "-" ? undefined : start);
		} else if (kind === "x") job.onExit(Number(payload.toString("latin1")));
		else if (kind === "n") job.noCwd = true;
		else if (kind === "d") {
			this.jobs.delete(id);
			job.onDone({ noCwd: job.noCwd });
		}
	}

	private liveFrame(
		id: number,
		job: RunnerLiveJob & { noCwd: boolean },
		kind: string,
		payload: Buffer,
	): void {
		const text = payload.toString("latin1");
		if (kind === "o") job.onData(payload);
		else if (kind === "p") job.onStarted(Number(text.split(" ")[0]));
		else if (kind === "x") {
			const [how, n] = text.split(" ");
			job.onExit(how === "s" ? { code: null, signal: Number(n) } : { code: Number(n), signal: null });
		} else if (kind === "e") job.onOutputEnd();
		else if (kind === "a") {
			const [seq, ok] = text.split(" ");
			job.onWritten(Number(seq), ok === "1");
		} else if (kind === "n") job.noCwd = true;
		else if (kind === "d") {
			this.lives.delete(id);
			job.onDone({ noCwd: job.noCwd });
		}
	}
}
