/**
 * A child started by posix_spawn (spawner.ts), shaped like the part of Node's ChildProcess keel
 * uses: `pid`, `stdio` sockets, `exitCode`/`signalCode`, `kill`, `ref`/`unref`, and the events
 * 'spawn', 'error', 'exit' (code, signal) and 'close' (after the exit and every output's end).
 */
import { EventEmitter } from "node:events";
import { closeSync } from "node:fs";
import { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";

/** What keel's process code needs of a child, met by Node's ChildProcess and by SpawnedChild. */
export interface ChildLike extends EventEmitter {
	readonly pid?: number | undefined;
	readonly stdin: Writable | null;
	readonly stdout: Readable | null;
	readonly stderr: Readable | null;
	readonly stdio: readonly (Readable | Writable | null | undefined)[];
	readonly exitCode: number | null;
	readonly signalCode: NodeJS.Signals | null;
	kill(signal?: NodeJS.Signals | number): boolean;
	ref(): void;
	unref(): void;
}

export interface ChildOwner {
	/** The child's wish to keep the event loop alive while it runs changed. */
	refChanged(): void;
}

export class SpawnedChild extends EventEmitter implements ChildLike {
	pid: number | undefined;
	exitCode: number | null = null;
	signalCode: NodeJS.Signals | null = null;
	readonly stdio: (Socket | null)[] = [];
	/** Whether a running child keeps the event loop alive (Node's default: yes). */
	wantsRef = true;
	private reaped = false;
	private outputsOpen = 0;
	private closeSent = false;

	constructor(private readonly owner: ChildOwner) {
		super();
	}

	get stdin(): Writable | null {
		return this.stdio[0] ?? null;
	}
	get stdout(): Readable | null {
		return this.stdio[1] ?? null;
	}
	get stderr(): Readable | null {
		return this.stdio[2] ?? null;
	}

	/** Takes this process's ends of the child's pipes (null where the child's fd is /dev/null). */
	attach(pid: number, parentEnds: readonly (number | null)[]): void {
		this.pid = pid;
		parentEnds.forEach((fd, i) => {
			if (fd === null) {
				this.stdio.push(null);
				return;
			}
			// As Node does: stdin only written, every other pipe a duplex socket.
			const socket = new Socket({ fd, readable: i > 0, writable: true });
			this.stdio.push(socket);
			if (i > 0) this.countOutput(socket);
		});
		process.nextTick(() => this.emit("spawn"));
	}

	private countOutput(stream: Readable): void {
		this.outputsOpen++;
		stream.once("close", () => {
			this.outputsOpen--;
			this.maybeClose();
		});
	}

	/** The spawn failed: no process exists, the pipes are closed, 'error' says why. */
	failed(error: Error, parentEnds: readonly (number | null)[]): void {
		for (const fd of parentEnds) if (fd !== null) closeSync(fd);
		this.reaped = true;
		process.nextTick(() => this.emit("error", error));
	}

	/** Called by the spawner once waitpid has returned this child's status. */
	exited(code: number | null, signal: NodeJS.Signals | null): void {
		this.reaped = true;
		this.exitCode = code;
		this.signalCode = signal;
		this.emit("exit", code, signal);
		this.maybeClose();
	}

	get running(): boolean {
		return this.pid !== undefined && !this.reaped;
	}

	kill(signal: NodeJS.Signals | number = "SIGTERM"): boolean {
		// Once reaped, the pid may already be another process's: never signal it.
		if (!this.running || this.pid === undefined) return false;
		try {
			process.kill(this.pid, signal);
			return true;
		} catch {
			return false;
		}
	}

	ref(): void {
		this.wantsRef = true;
		this.owner.refChanged();
	}

	unref(): void {
		this.wantsRef = false;
		this.owner.refChanged();
	}

	private maybeClose(): void {
		if (this.closeSent || !this.reaped || this.outputsOpen > 0) return;
		this.closeSent = true;
		this.emit("close", this.exitCode, this.signalCode);
	}
}
