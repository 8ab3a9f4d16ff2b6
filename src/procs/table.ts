/**
 * The session's process table: commands that outlive their call. Each has a small id (per
 * session), its output as a cursor-addressed log (output-log.ts), and its state. The contract:
 *
 * - read(id, cursor?) gives the output from the cursor (default: where the last read ended) and the
 *   cursor after it; a terminal process's output comes as plain text, or as its current screen when
 *   the program draws with cursor moves.
 * - wait(id, pattern?, timeout) returns once the pattern matches output after the cursor, the
 *   process exits, or the timeout passes, with the output read as above.
 * - write, signal and kill act on the process's group; kill also takes what it set loose, and
 *   close() kills everything (the backend's watchdog covers a keel that dies).
 * - Bounds: at most `maxLive` running at once (PROCESS_LIMIT), `keepBytes` of output in memory per
 *   process, `maxSpillBytes` spilled by all of them; output past both is dropped and a read of it
 *   says so (OUTPUT_DROPPED when asked for by cursor).
 * Apart: the shapes (types.ts) and the wait's listening (wait.ts).
 */
import type { Backend } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import type { SpillDir } from "../boundary/spill.js";
import { type Clock, setLongTimeout } from "../boundary/timing.js";
import { utf8CompleteEnd } from "../boundary/truncate.js";
import { OutputLog, type SpillBudget } from "./output-log.js";
import { isDrawing, plainText } from "./plain-text.js";
import { lazyXterm, Screen } from "./screen.js";
import {
	DEFAULT_PROCESS_LIMITS,
	type Entry,
	type ProcessInfo,
	type ProcessLimits,
	type ReadResult,
	type StartOptions,
} from "./types.js";
import { DRAIN_MS, untilOutput, type WaitOptions } from "./wait.js";

export class ProcessTable {
	private readonly entries = new Map<number, Entry>();
	private nextId = 1;
	/** Starts under way: they count against maxLive before their entry exists. */
	private starting = 0;
	private closed = false;
	private readonly budget: SpillBudget;
	private readonly loadXterm = lazyXterm();
	readonly limits: ProcessLimits;

	constructor(
		private readonly backend: Backend,
		private readonly spill: SpillDir,
		private readonly clock: Clock,
		limits: Partial<ProcessLimits> = {},
	) {
		this.limits = { ...DEFAULT_PROCESS_LIMITS, ...limits };
		this.budget = { maxBytes: this.limits.maxSpillBytes, usedBytes: 0 };
	}

	get supported(): boolean {
		return this.backend.exec.start !== undefined;
	}

	private live(): number {
		let n = 0;
		for (const e of this.entries.values()) if (e.state === "running") n++;
		return n;
	}

	async start(opts: StartOptions): Promise<number> {
		if (this.closed) throw new KeelError("BACKEND_UNAVAILABLE", "This session is closed.");
		const start = this.backend.exec.start;
		if (!start) {
			throw new KeelError(
				"UNSUPPORTED",
				`Process handles are not available on the ${this.backend.kind} backend; run the command in the foreground.`,
			);
		}
		if (this.live() + this.starting >= this.limits.maxLive) {
			throw new KeelError(
				"PROCESS_LIMIT",
				`This session already runs ${this.limits.maxLive} processes (maxLive); wait for one or kill one (process list) before starting another.`,
				{ details: { limit: "maxLive", value: this.limits.maxLive } },
			);
		}
		this.forgetOldExited();
		this.starting++;
		try {
			return await this.startEntry(opts, start);
		} finally {
			this.starting--;
		}
	}

	private async startEntry(
		opts: StartOptions,
		start: NonNullable<Backend["exec"]["start"]>,
	): Promise<number> {
		const id = this.nextId++;
		const log = new OutputLog(this.spill, `process-${id}`, this.limits.keepBytes, this.budget);
		const screen = opts.terminal
			? await Screen.create(this.loadXterm, opts.terminal.cols, opts.terminal.rows)
			: undefined;
		const listeners = new Set<() => void>();
		const proc = await start.call(this.backend.exec, {
			command: opts.command,
			cwd: opts.cwd,
			...(opts.terminal ? { terminal: opts.terminal } : {}),
			onData: (chunk) => {
				log.append(chunk);
				screen?.write(chunk);
				for (const l of [...listeners]) l();
			},
		});
		if (this.closed) {
			// The session closed while this one started: it must not outlive the close.
			await proc.kill();
			throw new KeelError("BACKEND_UNAVAILABLE", "This session is closed.");
		}
		const entry: Entry = {
			id,
			command: opts.command,
			startedAt: this.clock(),
			proc,
			log,
			screen,
			state: "running",
			cursor: 0,
			listeners,
		};
		this.entries.set(id, entry);
		if (opts.timeoutMs !== undefined) {
			entry.timer = setLongTimeout(() => {
				if (entry.state !== "running") return;
				entry.state = "timed out";
				void proc.kill();
			}, opts.timeoutMs);
		}
		void proc.exited.then((exit) => {
			entry.exit = exit;
			if (entry.state === "running") entry.state = "exited";
			entry.timer?.clear();
			for (const l of [...listeners]) l();
		});
		return id;
	}

	/** Exited entries beyond maxLive are forgotten, oldest first (what they left is killed). */
	private forgetOldExited(): void {
		const done = [...this.entries.values()].filter((e) => e.state !== "running");
		for (const e of done.slice(0, Math.max(0, done.length - this.limits.maxLive))) {
			this.entries.delete(e.id);
			void e.proc.kill();
			e.log.close();
			e.screen?.dispose();
		}
	}

	private entry(id: number): Entry {
		const e = this.entries.get(id);
		if (!e) {
			const known = [...this.entries.keys()];
			throw new KeelError(
				"UNKNOWN_PROCESS",
				`No process ${id} in this session${known.length ? ` (ids: ${known.join(", ")})` : ""}; see process list.`,
			);
		}
		return e;
	}

	private info(e: Entry): ProcessInfo {
		return {
			id: e.id,
			pid: e.proc.pid,
			command: e.command,
			state: e.state,
			exitCode: e.exit?.code ?? null,
			signal: e.exit?.signal ?? null,
			ageMs: this.clock() - e.startedAt,
			outputBytes: e.log.total,
			terminal: e.screen !== undefined,
		};
	}

	list(): ProcessInfo[] {
		return [...this.entries.values()].map((e) => this.info(e));
	}

	/**
	 * The output from `cursor` (default: where the last read ended), at most `maxBytes` of it.
	 * An explicit cursor whose bytes are gone answers OUTPUT_DROPPED; reading on from the last
	 * read skips them with a note.
	 */
	async read(id: number, opts: { cursor?: number; maxBytes: number }): Promise<ReadResult> {
		const e = this.entry(id);
		const asked = opts.cursor ?? e.cursor;
		if (opts.cursor !== undefined && e.log.lost(opts.cursor)) {
			const next = e.log.read(opts.cursor, 0).from;
			throw new KeelError(
				"OUTPUT_DROPPED",
				`Output of process ${id} at cursor ${opts.cursor} is no longer kept: ${this.dropReason(e)}. Read from cursor ${next}${e.log.oldest < next ? ` (or from ${e.log.oldest}, what was spilled)` : ""}.`,
				{ details: { keptFrom: next, oldestCursor: e.log.oldest } },
			);
		}
		const got = e.log.read(asked, opts.maxBytes);
		let bytes = got.bytes;
		// A character cut by the end of what has arrived is shown whole next time.
		if (e.state === "running") bytes = bytes.subarray(0, utf8CompleteEnd(bytes));
		const next = got.from + bytes.length;
		e.cursor = Math.max(e.cursor, next);
		const raw = bytes.toString("utf8");
		let text = raw;
		let screen = false;
		if (e.screen) {
			if (isDrawing(raw) && next >= e.log.total) {
				text = await e.screen.text();
				screen = true;
			} else text = plainText(raw);
		}
		return {
			info: this.info(e),
			text,
			screen,
			from: got.from,
			next,
			more: next < e.log.total,
			...(got.dropped > 0 ? { dropped: { bytes: got.dropped, why: this.dropReason(e) } } : {}),
			...(e.log.spillPath ? { spillPath: e.log.spillPath } : {}),
		};
	}

	private dropReason(e: Entry): string {
		return `only ${this.limits.keepBytes} bytes per process are kept in memory (keepBytes), and ${e.log.spillStopped ?? "the rest could not be spilled"}`;
	}

	/** The current screen of a terminal process. */
	async screen(id: number): Promise<string> {
		const e = this.entry(id);
		if (!e.screen)
			throw new KeelError("INVALID_ARGS", `Process ${id} has no terminal; read its output instead.`);
		return e.screen.text();
	}

	/**
	 * Until `pattern` matches output after `cursor` (default: the read cursor), the process exits,
	 * `timeoutMs` passes or `signal` aborts; then reads as read() does. `onOutput` is told, as output
	 * arrives meanwhile, the newest of it since the cursor (up to PROGRESS_TAIL_BYTES, as plain
	 * text): for progress notifications; the answer still holds all of it.
	 */
	async wait(
		id: number,
		opts: WaitOptions & { cursor?: number; maxBytes: number },
	): Promise<ReadResult & { matched?: string; timedOut: boolean }> {
		const e = this.entry(id);
		const { matched, timedOut } = await untilOutput(e, opts.cursor ?? e.cursor, opts);
		const read = await this.read(id, {
			maxBytes: opts.maxBytes,
			...(opts.cursor !== undefined ? { cursor: opts.cursor } : {}),
		});
		return { ...read, ...(matched !== undefined ? { matched } : {}), timedOut };
	}

	/** Bytes to the process's stdin; `close` then ends it (EOF). */
	async write(id: number, chars: string, close = false): Promise<void> {
		const e = this.entry(id);
		if (e.state !== "running") {
			throw new KeelError("INVALID_ARGS", `Process ${id} has ${e.state}; there is no stdin to write to.`);
		}
		if (chars.length > 0 && !(await e.proc.write(chars))) {
			throw new KeelError("INVALID_ARGS", `The stdin of process ${id} is closed.`);
		}
		if (close) e.proc.closeStdin();
	}

	signal(id: number, name: NodeJS.Signals): void {
		const e = this.entry(id);
		if (e.state !== "running" || !e.proc.signal(name)) {
			throw new KeelError("INVALID_ARGS", `Process ${id} has ${e.state}; no signal was sent.`);
		}
	}

	/** SIGKILL the process's group and what it set loose; resolves once they are gone. */
	async kill(id: number): Promise<ProcessInfo> {
		const e = this.entry(id);
		if (e.state === "running") e.state = "killed";
		await e.proc.kill();
		await Promise.race([e.proc.exited, new Promise((r) => setTimeout(r, DRAIN_MS))]);
		return this.info(e);
	}

	async close(): Promise<void> {
		if (this.closed) return;
		this.closed = true;
		const all = [...this.entries.values()];
		await Promise.all(
			all.map(async (e) => {
				e.timer?.clear();
				if (e.state === "running") e.state = "killed";
				await e.proc.kill();
				e.log.close();
				e.screen?.dispose();
			}),
		);
	}
}
