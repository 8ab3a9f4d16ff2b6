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

export class CommandRunner {
	private readonly jobs = new Map<number, RunnerJob & { noCwd: boolean }>();
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
			const jobs = [...this.jobs.values()];
			this.jobs.clear();
			for (const j of jobs) j.onLost(this.deadError);
		});
		pipe.write(init);
	}

	get dead(): Error | undefined {
		return this.deadError;
	}

	/** How many commands are running on it. */
	get running(): number {
		return this.jobs.size;
	}

	start(job: RunnerJob): number {
		if (this.deadError) throw this.deadError;
		const id = this.nextId++;
		this.jobs.set(id, { ...job, noCwd: false });
		this.pipe.write(`${JSON.stringify(["r", id, job.cwd, job.command, job.env, job.tag])}\n`);
		return id;
	}

	kill(id: number): void {
		if (!this.deadError && this.jobs.has(id)) this.pipe.write(`${JSON.stringify(["k", id])}\n`);
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
}
