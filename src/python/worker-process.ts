/**
 * One worker process, started by the backend (ProcessOps.spawn) in its own process group (so a kill
 * takes user code's children with it): protocol frames on fds 3 (requests) and 4 (responses),
 * stdout and stderr split at each job's end marker. The process is unref'd while idle so a
 * forgotten session never keeps Node alive; the worker exits by itself when its request pipe closes.
 */
import type { ProcessExit, SpawnedProcess } from "../backend/types.js";
import { EndMarkerSplitter } from "./end-marker.js";
import { encodeFrame, type Frame, FrameDecoder, type ProtocolError } from "./frames.js";

export type StreamName = "stdout" | "stderr";

export type WorkerExit = ProcessExit;

export interface WorkerEvents {
	frame(frame: Frame): void;
	protocolError(error: ProtocolError): void;
	output(stream: StreamName, chunk: Buffer): void;
	/** The current job's end marker arrived on `stream`. */
	marker(stream: StreamName): void;
	/** The process is gone and its output pipes are drained (or given up on). */
	exit(exit: WorkerExit): void;
}

export class WorkerProcess {
	/** Resolves once the process has exited (or failed to start). */
	readonly exited: Promise<WorkerExit>;
	private readonly decoder: FrameDecoder;
	private readonly splitters: Record<StreamName, EndMarkerSplitter>;
	private events: WorkerEvents;
	private broken = false;

	constructor(
		private readonly proc: SpawnedProcess,
		maxFrameBytes: number,
		events: WorkerEvents,
	) {
		this.events = events;
		this.decoder = new FrameDecoder(maxFrameBytes);
		this.splitters = {
			stdout: this.splitterFor("stdout"),
			stderr: this.splitterFor("stderr"),
		};
		this.exited = this.watch();
	}

	/** The worker's PID on its host, when known. */
	get pid(): number | undefined {
		return this.proc.pid;
	}

	private splitterFor(stream: StreamName): EndMarkerSplitter {
		return new EndMarkerSplitter(
			(chunk) => this.events.output(stream, chunk),
			() => this.events.marker(stream),
		);
	}

	private watch(): Promise<WorkerExit> {
		const { proc } = this;
		proc.stdout.on("data", (c: Buffer) => this.splitters.stdout.push(c));
		proc.stderr.on("data", (c: Buffer) => this.splitters.stderr.push(c));
		proc.fd4?.on("data", (c: Buffer) => this.onProtocolData(c));
		return proc.exited.then((exit) => {
			this.splitters.stdout.flush();
			this.splitters.stderr.flush();
			this.events.exit(exit);
			return exit;
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
		this.proc.fd3?.write(encodeFrame(request));
	}

	/** Stop waiting for the current job's markers. */
	cancelMarkers(): void {
		this.splitters.stdout.cancel();
		this.splitters.stderr.cancel();
	}

	/** Keep Node alive while a job runs; let it exit while the worker idles. */
	setBusy(busy: boolean): void {
		this.proc.setRef(busy);
	}

	/** SIGKILL the whole process group; later events from this process are ignored. */
	kill(): void {
		this.events = IGNORE;
		this.proc.kill();
	}
}

const IGNORE: WorkerEvents = {
	frame() {},
	protocolError() {},
	output() {},
	marker() {},
	exit() {},
};
