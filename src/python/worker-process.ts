/**
 * One worker process: spawned in its own process group (so a kill takes user code's children with
 * it), protocol frames on fds 3 (requests) and 4 (responses), stdout and stderr split at each job's
 * end marker. The process is unref'd while idle so a forgotten session never keeps Node alive;
 * the worker exits by itself when its request pipe closes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { EndMarkerSplitter } from "./end-marker.js";
import { encodeFrame, type Frame, FrameDecoder, type ProtocolError } from "./frames.js";

export type StreamName = "stdout" | "stderr";

export interface WorkerExit {
	code: number | null;
	signal: NodeJS.Signals | null;
	/** Set when the process could not be started at all. */
	error?: Error;
}

export interface WorkerEvents {
	frame(frame: Frame): void;
	protocolError(error: ProtocolError): void;
	output(stream: StreamName, chunk: Buffer): void;
	/** The current job's end marker arrived on `stream`. */
	marker(stream: StreamName): void;
	/** The process is gone and its output pipes are drained (or given up on). */
	exit(exit: WorkerExit): void;
}

export interface SpawnSpec {
	interpreter: string;
	args: string[];
	cwd: string;
	env: NodeJS.ProcessEnv;
	maxFrameBytes: number;
}

/** After exit, how long to wait for pipes that a surviving grandchild may hold open. */
const PIPE_DRAIN_MS = 100;

type Refable = { ref?: () => void; unref?: () => void };

export class WorkerProcess {
	readonly pid: number | undefined;
	/** Resolves once the process has exited (or failed to start). */
	readonly exited: Promise<WorkerExit>;
	private readonly child: ChildProcess;
	private readonly decoder: FrameDecoder;
	private readonly splitters: Record<StreamName, EndMarkerSplitter>;
	private events: WorkerEvents;
	private broken = false;

	constructor(spec: SpawnSpec, events: WorkerEvents) {
		this.events = events;
		this.decoder = new FrameDecoder(spec.maxFrameBytes);
		this.splitters = {
			stdout: this.splitterFor("stdout"),
			stderr: this.splitterFor("stderr"),
		};
		this.child = spawn(spec.interpreter, spec.args, {
			cwd: spec.cwd,
			env: spec.env,
			detached: true,
			stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
		});
		this.pid = this.child.pid;
		this.exited = this.watch();
	}

	private splitterFor(stream: StreamName): EndMarkerSplitter {
		return new EndMarkerSplitter(
			(chunk) => this.events.output(stream, chunk),
			() => this.events.marker(stream),
		);
	}

	private watch(): Promise<WorkerExit> {
		const { child } = this;
		const stdio = child.stdio as unknown as (Readable | Writable | null)[];
		for (const s of stdio) s?.on("error", () => {}); // EPIPE etc.: the exit event reports the death
		stdio[1]?.on("data", (c: Buffer) => this.splitters.stdout.push(c));
		stdio[2]?.on("data", (c: Buffer) => this.splitters.stderr.push(c));
		stdio[4]?.on("data", (c: Buffer) => this.onProtocolData(c));
		return new Promise((resolve) => {
			let exit: WorkerExit | undefined;
			let done = false;
			const finish = () => {
				if (done || !exit) return;
				done = true;
				this.splitters.stdout.flush();
				this.splitters.stderr.flush();
				for (const st of stdio) st?.destroy();
				this.events.exit(exit);
				resolve(exit);
			};
			child.on("error", (error) => {
				exit = { code: null, signal: null, error };
				finish();
			});
			child.on("exit", (code, signal) => {
				exit = { code, signal };
				setTimeout(finish, PIPE_DRAIN_MS).unref();
			});
			child.on("close", finish);
		});
	}

	private onProtocolData(chunk: Buffer): void {
		if (this.broken) return;
		let frames: Frame[];
		try {
			frames = this.decoder.push(chunk);
		} catch (e) {
			this.broken = true;
			this.events.protocolError(e as ProtocolError);
			return;
		}
		for (const f of frames) this.events.frame(f);
	}

	/** Send one request; the job's output is split at `marker`. */
	send(request: Frame, marker: Buffer): void {
		this.splitters.stdout.expect(marker);
		this.splitters.stderr.expect(marker);
		(this.child.stdio[3] as Writable | null)?.write(encodeFrame(request));
	}

	/** Stop waiting for the current job's markers. */
	cancelMarkers(): void {
		this.splitters.stdout.cancel();
		this.splitters.stderr.cancel();
	}

	/** Keep Node alive while a job runs; let it exit while the worker idles. */
	setBusy(busy: boolean): void {
		for (const h of [this.child, ...this.child.stdio] as (Refable | null)[]) {
			if (busy) h?.ref?.();
			else h?.unref?.();
		}
	}

	/** SIGKILL the whole process group; later events from this process are ignored. */
	kill(): void {
		this.events = IGNORE;
		if (this.pid !== undefined) {
			try {
				process.kill(-this.pid, "SIGKILL");
				return;
			} catch {
				// no group (already gone): fall through to the child itself
			}
		}
		this.child.kill("SIGKILL");
	}
}

const IGNORE: WorkerEvents = {
	frame() {},
	protocolError() {},
	output() {},
	marker() {},
	exit() {},
};
