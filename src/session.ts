import { createLocalBackend } from "./backend/local/index.js";
import type { Backend, ExecOps, FileOps, SearchOps } from "./backend/types.js";
import type { CallScope } from "./boundary/call-scope.js";
import { KeelError } from "./boundary/errors.js";
import { FailureMemory } from "./boundary/failure-memory.js";
import type { SpillDir } from "./boundary/spill.js";
import { type Clock, monotonicClock } from "./boundary/timing.js";
import type { Checkpoints } from "./checkpoints/checkpoints.js";
import { checkersOf } from "./diagnostics/checkers.js";
import { Diagnostics } from "./diagnostics/diagnostics.js";
import { ProcessTable } from "./procs/table.js";
import { PythonCoordinator, type PythonCoordinatorOptions } from "./python/coordinator.js";
import { isWithin } from "./safety/canonical-paths.js";
import { ContentRefs } from "./safety/content-refs.js";
import type { Journal } from "./safety/journal.js";
import type { MutationQueue } from "./safety/mutation-queue.js";
import type { Access, PathGuard, ResolvedPath } from "./safety/path-guard.js";
import { lookalikes } from "./safety/path-lookalikes.js";
import type { PayloadStore } from "./safety/payloads.js";
import { ReadState } from "./safety/read-state.js";
import type { RecoveryReport } from "./safety/recovery.js";
import type { WriterLog } from "./safety/writer-log.js";
import { answerOf, inCallScope } from "./session-call.js";
import { filesAreLocal, type LocalSpillFiles, openWorkspace } from "./session-open.js";
import { paletteFor } from "./session-options.js";
import type { CallOptions, CallResult, SessionApi, SessionOptions, SessionProbes } from "./session-types.js";
import { SyntaxCheck } from "./syntax/check.js";
import { type CheckMode, checkModeOf } from "./syntax/report.js";
import type { ToolHost } from "./tool-host.js";
import { isCheckpointBoundary, Palette } from "./tools/palette.js";
import type { Profile } from "./tools/registry.js";
import type { ToolDefinition } from "./tools/types.js";

export type {
	CallError,
	CallOptions,
	CallResult,
	SessionApi,
	SessionOptions,
	SessionProbes,
} from "./session-types.js";

/**
 * The library's view of a session (SessionApi: the tools typed by profile, no internals): the same
 * object, so keel's adapters get the session back with sessionInternals().
 */
export function publicSession<P extends Profile>(session: Session): SessionApi<P> {
	return session as unknown as SessionApi<P>;
}

/**
 * The session behind a SessionApi, for keel's own adapters (the internals are not part of the
 * library's types). Anything createSession did not make is INVALID_ARGS.
 */
export function sessionInternals(session: SessionApi<Profile> | Session): Session {
	if (session instanceof Session) return session;
	throw new KeelError("INVALID_ARGS", "Not a keel session: pass what createSession returned.");
}

export class Session implements ToolHost {
	readonly readState = new ReadState();
	readonly contentRefs = new ContentRefs();
	/** Failed calls as fingerprints and codes, never arguments; the directive for the next turn. */
	readonly failures = new FailureMemory();
	/** The tools this session offers, bound to it. */
	private readonly palette: Palette;
	private closed = false;
	private readonly swept = new Set<string>();
	private pythonCoordinator: PythonCoordinator | undefined;
	private processTable: ProcessTable | undefined;
	/** The scopes of calls still running: a closing session aborts them. */
	private readonly running = new Set<CallScope>();
	/**
	 * Multi-file changes a dead keel process left that this session can reach, finished by
	 * create(), and journal entries set aside as invalid; each has a one-line description.
	 */
	recovery: RecoveryReport[] = [];
	/** The syntax check of changes to source files, with its parsers and kept trees (syntax/check.ts). */
	readonly syntax = new SyntaxCheck();
	/** The check's mode when a call does not set its own. */
	checkMode: CheckMode = "report";
	/** The workspace's own checkers (SessionOptions.diagnostics); undefined when none is configured. */
	diagnostics: Diagnostics | undefined;
	/** Checkpoints of every change the calls make, when SessionOptions.checkpoints turned them on. */
	checkpoints: Checkpoints | undefined;

	private constructor(
		readonly backend: Backend,
		readonly guard: PathGuard,
		readonly spill: SpillDir,
		readonly payloads: PayloadStore,
		private readonly spillFiles: LocalSpillFiles | undefined,
		readonly clock: Clock,
		readonly probes: SessionProbes,
		tools: ToolDefinition[],
		/** The per-path mutation queue of this session's workspace (shared when a registry was given). */
		readonly queue: MutationQueue,
		private readonly releaseQueue: () => void,
		private readonly pythonOptions: Omit<PythonCoordinatorOptions, "spill" | "backend">,
		readonly journal: Journal,
		/** The directories this process writes into, for the sweep after a kill. */
		private readonly writerLog: WriterLog,
		/** Run before every bash command (SessionOptions.commandPrefix). */
		readonly commandPrefix?: string,
		private readonly processLimits: SessionOptions["processLimits"] = {},
	) {
		// A call that can change files is a checkpoint boundary when the session keeps them.
		this.palette = new Palette(tools, this, (tool, run) =>
			this.checkpoints && isCheckpointBoundary(tool) ? this.checkpoints.around(tool.name, run) : run(),
		);
	}

	static async create(opts: SessionOptions = {}): Promise<Session> {
		// Before anything opens: an unknown option, profile or tool name is an error, never a default.
		const tools = paletteFor(opts);
		const backend = opts.backend ?? createLocalBackend();
		const { spill, guard, state, journal, recovery, writerLog, payloads, spillFiles, queue } =
			await openWorkspace(backend, opts);
		const session = new Session(
			backend,
			guard,
			spill,
			payloads,
			spillFiles,
			opts.clock ?? monotonicClock,
			opts.probes ?? {},
			tools,
			queue.queue,
			queue.release,
			opts.python ?? {},
			journal,
			writerLog,
			opts.commandPrefix || undefined,
			opts.processLimits,
		);
		session.recovery = recovery;
		if (opts.checkpoints) {
			try {
				const { openCheckpoints } = await import("./checkpoints/open.js");
				session.checkpoints = await openCheckpoints(
					session,
					backend,
					{ roots: guard.roots, state, filesAreLocal: filesAreLocal(backend) },
					opts.checkpoints,
				);
			} catch (e) {
				await session.close();
				throw e;
			}
		}
		if (opts.check !== undefined) session.checkMode = checkModeOf(opts.check, "SessionOptions.check");
		const checkers = checkersOf(opts.diagnostics);
		if (checkers.length > 0)
			session.diagnostics = new Diagnostics(
				backend.exec,
				guard.workspace,
				guard.roots,
				checkers,
				opts.commandPrefix || undefined,
			);
		return session;
	}

	/** This session's Python coordinator: made on first access; its worker starts on the first python call. */
	get python(): PythonCoordinator {
		this.pythonCoordinator ??= new PythonCoordinator({
			clock: this.clock,
			...this.pythonOptions,
			spill: this.spill,
			backend: this.backend,
		});
		return this.pythonCoordinator;
	}

	/** This session's process handles (procs/table.ts): made on first access, killed at close. */
	get processes(): ProcessTable {
		this.processTable ??= new ProcessTable(this.backend, this.spill, this.clock, this.processLimits);
		return this.processTable;
	}

	get tools(): ToolDefinition[] {
		return this.palette.tools;
	}

	get workspace(): string {
		return this.guard.workspace;
	}

	get files(): FileOps {
		return this.backend.fs;
	}

	get exec(): ExecOps {
		return this.backend.exec;
	}

	get search(): SearchOps {
		return this.backend.search;
	}

	resolvePath(input: unknown, access: Access): Promise<ResolvedPath> {
		return this.guard.resolve(input, access);
	}

	resolveEntry(input: unknown, access: Access): Promise<ResolvedPath> {
		return this.guard.resolveEntry(input, access);
	}

	/**
	 * A path to read and the files it lives in. Spill files are on this machine even when the
	 * backend's are elsewhere (ssh, exec): read locally, through a guard rooted at the spill
	 * directory. A missing name falls back to the first look-alike that exists (path-lookalikes.ts).
	 */
	async resolveReadable(input: unknown): Promise<{ target: ResolvedPath; fs: FileOps }> {
		if (
			this.spillFiles &&
			typeof input === "string" &&
			isWithin(this.spill.dir, this.guard.absolute(input))
		) {
			return { target: await this.spillFiles.guard.resolve(input, "read"), fs: this.spillFiles.fs };
		}
		const exact = await this.guard.resolve(input, "read");
		if (exact.exists || typeof input !== "string") return { target: exact, fs: this.backend.fs };
		for (const name of lookalikes(input)) {
			const candidate = await this.guard.resolve(name, "read").catch(() => undefined);
			if (candidate?.exists) return { target: candidate, fs: this.backend.fs };
		}
		return { target: exact, fs: this.backend.fs };
	}

	/**
	 * Before the first commit into `dir`: sweep dead writers' temp files from it, and log it as a
	 * directory this process writes into (its own temp files there are swept after a kill).
	 */
	async sweepOnce(dir: string): Promise<void> {
		if (this.swept.has(dir)) return;
		this.swept.add(dir);
		if (filesAreLocal(this.backend)) await this.writerLog.add(dir).catch(() => {});
		await this.backend.fs.sweepTemps(dir);
	}

	/**
	 * Validate, run and time one tool call. Never throws: failures come back as structured errors.
	 * The call's work is owned by a CallScope: its signal stops whatever the call left running once
	 * the call has its answer, and work registered with it is awaited (bounded) before the answer
	 * goes out, its failures absorbed, so nothing a call started can fail outside it.
	 */
	async call(name: string, args: unknown, opts: CallOptions = {}): Promise<CallResult> {
		return this.callWith(name, args, opts);
	}

	/** call() for a host that routes the model's calls: any name, any arguments (the library's untyped entry). */
	callDynamic(name: string, args: unknown, opts: CallOptions = {}): Promise<CallResult> {
		return this.callWith(name, args, opts);
	}

	/**
	 * Run `tool` as call() runs a palette tool (checked arguments, scope, failure memory, a
	 * checkpoint boundary), whether or not the profile offers it: the library's apply_patch.
	 */
	callTool(tool: ToolDefinition, args: unknown, opts: CallOptions = {}): Promise<CallResult> {
		return this.callWith(tool.name, args, opts, tool);
	}

	private callWith(
		name: string,
		args: unknown,
		opts: CallOptions,
		tool?: ToolDefinition,
	): Promise<CallResult> {
		return inCallScope(this.running, opts, (scope, onUpdate) =>
			answerOf(name, args, this.clock, this.failures, () => {
				if (this.closed)
					throw new KeelError("BACKEND_UNAVAILABLE", "This session is closed; start a new one.");
				const call = { scope, onUpdate, check: opts.check };
				return tool ? this.palette.runDefinition(tool, args, call) : this.palette.run(name, args, call);
			}),
		);
	}

	/** `await using session = await createSession(...)` closes it at the end of the block. */
	[Symbol.asyncDispose](): Promise<void> {
		return this.close();
	}

	async close(): Promise<void> {
		if (this.closed) return;
		this.closed = true;
		for (const scope of this.running) scope.abort();
		this.releaseQueue();
		this.syntax.close();
		await this.checkpoints?.close();
		await this.pythonCoordinator?.close();
		await this.processTable?.close();
		await this.payloads.close();
		this.spillFiles?.fs.close?.();
		await this.spill.close();
		await this.backend.close();
	}
}
