/**
 * Session: owns the backend, the path guard, the mutation queue, the read state,
 * the spill directory, the failure memory and the clock. Everything stateful hangs here; nothing is
 * module-global.
 */
import { randomBytes } from "node:crypto";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createLocalBackend } from "./backend/local.js";
import { createLocalFs } from "./backend/local-fs.js";
import type { Backend, ExecOps, FileOps, SearchOps } from "./backend/types.js";
import { CallScope } from "./boundary/call-scope.js";
import { KeelError } from "./boundary/errors.js";
import { FailureMemory } from "./boundary/failure-memory.js";
import { SpillDir } from "./boundary/spill.js";
import { fromSystemError } from "./boundary/system-errors.js";
import { type Clock, elapsedSince, monotonicClock } from "./boundary/timing.js";
import type { Checkpoints } from "./checkpoints/checkpoints.js";
import { checkersOf } from "./diagnostics/checkers.js";
import { Diagnostics } from "./diagnostics/diagnostics.js";
import { ProcessTable } from "./procs/table.js";
import { PythonCoordinator, type PythonCoordinatorOptions } from "./python/coordinator.js";
import { ContentRefs } from "./safety/content-refs.js";
import { Journal } from "./safety/journal.js";
import { type MutationQueue, QueueRegistry } from "./safety/mutation-queue.js";
import { type Access, isWithin, PathGuard, type ResolvedPath } from "./safety/path-guard.js";
import { lookalikes } from "./safety/path-lookalikes.js";
import { PayloadStore } from "./safety/payloads.js";
import { ReadState } from "./safety/read-state.js";
import { type RecoveryReport, recoverJournal } from "./safety/recovery.js";
import { defaultStateDir, StateDir } from "./safety/state-dir.js";
import { WriterLog } from "./safety/writer-log.js";
import { paletteFor } from "./session-options.js";
import type {
	CallError,
	CallOptions,
	CallResult,
	SessionApi,
	SessionOptions,
	SessionProbes,
} from "./session-types.js";
import { type CheckMode, checkModeOf, SyntaxCheck } from "./syntax/check.js";
import type { ToolHost } from "./tool-host.js";
import { Palette } from "./tools/palette.js";
import type { Profile } from "./tools/registry.js";
import type { ToolDefinition, ToolResult } from "./tools/types.js";

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

/** Backends whose files are this machine's files (bwrap sandboxes commands, not files). */
function filesAreLocal(backend: Backend): boolean {
	return backend.localFiles === true;
}

/**
 * Tools that are no checkpoint boundary although they are not read-only: the checkpoints tool makes
 * its own, and the ones that talk to what already runs (a process handle, a Python job) change
 * files only through it; what it changes between calls is recorded as made outside them, and a
 * `process` wait must not hold every other call back while it waits.
 */
const NOT_A_BOUNDARY = new Set(["checkpoints", "process", "write_stdin", "python_jobs"]);

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
		private readonly spillFiles: { guard: PathGuard; fs: FileOps } | undefined,
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
			this.checkpoints && !tool.annotations.readOnly && !NOT_A_BOUNDARY.has(tool.name)
				? this.checkpoints.around(tool.name, run)
				: run(),
		);
	}

	static async create(opts: SessionOptions = {}): Promise<Session> {
		// Before anything opens: an unknown option, profile or tool name is an error, never a default.
		const tools = paletteFor(opts);
		const backend = opts.backend ?? createLocalBackend();
		const root = resolve(opts.root ?? process.cwd());
		// A spill directory of this session's own, readable through this session's guard only.
		const spill = await SpillDir.create(opts.spillDir);
		const spillDir = spill.dir;
		// keel's own state is never writable through the tools (it is also kept out of every root below).
		const requestedState = resolve(opts.stateDir ?? defaultStateDir());
		const guard = await PathGuard.create(backend.fs, {
			roots: [root, ...(opts.allow ?? []).map((p) => resolve(root, p))],
			// Spill files are on this machine: readable through the guard when the backend's files are too.
			readOnlyRoots: [
				...(opts.allowRead ?? []).map((p) => resolve(root, p)),
				...(filesAreLocal(backend) ? [spillDir] : []),
			],
			home: opts.home ?? homedir(),
			allowProtected: opts.allowProtected,
			protectedPaths: [...(opts.protectedPaths ?? []), ...(filesAreLocal(backend) ? [requestedState] : [])],
		});
		const state = StateDir.choose(
			requestedState,
			filesAreLocal(backend) ? [...guard.roots, ...guard.readOnlyRoots] : [],
		);
		// Temp files of a writer that was killed mid-commit are swept from the workspace root; every
		// other directory is swept the first time this session writes into it.
		await backend.fs.sweepTemps(guard.workspace);
		// A multi-file change cut off by a crash is finished (rolled back or forward) before anything else.
		const payloadDir = join(tmpdir(), `keel-payloads-${process.pid}-${randomBytes(6).toString("hex")}`);
		// keel's own state is never something a sandboxed command can read or plant (the requested
		// directory too, when the state moved away from it).
		backend.hideFromCommands?.([...new Set([requestedState, state.dir]), spillDir, payloadDir]);
		const journal = new Journal(state, backend.kind, guard.workspace, guard.roots);
		const recovery = await recoverJournal(backend.fs, guard, journal);
		// Temp files a killed writer left wherever it wrote, not only where this session will write.
		const writerLog = new WriterLog(state);
		if (filesAreLocal(backend)) await writerLog.sweepDead(backend.fs, guard.roots);
		const payloads = new PayloadStore(payloadDir, opts.payloadLimits);
		let spillFiles: { guard: PathGuard; fs: FileOps } | undefined;
		if (!filesAreLocal(backend)) {
			const fs = createLocalFs();
			spillFiles = { fs, guard: await PathGuard.create(fs, { roots: [spillDir], home: homedir() }) };
		}
		const queue = (opts.queues ?? new QueueRegistry()).acquire(guard.workspace);
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
	 * A path to read and the files it lives in: spill files are on this machine even when the
	 * backend's files are elsewhere (ssh, exec), so those are read locally, through a guard whose
	 * only root is the spill directory. A name that does not exist falls back to the first
	 * look-alike that does (path-lookalikes.ts).
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

	private async callWith(
		name: string,
		args: unknown,
		opts: CallOptions,
		tool?: ToolDefinition,
	): Promise<CallResult> {
		const scope = new CallScope(opts.signal);
		this.running.add(scope);
		let answered = false;
		// A host's progress callback that throws, or one called after the answer, must not reach the tool.
		const onUpdate =
			opts.onUpdate &&
			((partial: ToolResult) => {
				if (answered) return;
				try {
					opts.onUpdate?.(partial);
				} catch {
					// The host's failure to show progress is not the call's failure.
				}
			});
		try {
			return await this.runCall(name, args, scope, onUpdate, opts.check, tool);
		} finally {
			answered = true;
			await scope.close();
			this.running.delete(scope);
		}
	}

	private async runCall(
		name: string,
		args: unknown,
		scope: CallScope,
		onUpdate: CallOptions["onUpdate"],
		checkOption: CallOptions["check"],
		tool: ToolDefinition | undefined,
	): Promise<CallResult> {
		const startedAt = this.clock();
		this.failures.beginCall();
		try {
			if (this.closed) throw new KeelError("BACKEND_UNAVAILABLE", "This session is closed; start a new one.");
			const call = { scope, onUpdate, check: checkOption };
			const result = tool
				? await this.palette.runDefinition(tool, args, call)
				: await this.palette.run(name, args, call);
			this.failures.recordSuccess(name, args);
			return {
				ok: true,
				content: result.content,
				details: result.details,
				elapsedMs: elapsedSince(this.clock, startedAt),
			};
		} catch (e) {
			const err = e instanceof KeelError ? e : fromSystemError(e);
			const error: CallError = err.toJSON();
			const directive = this.failures.recordFailure(name, args, error);
			if (directive) error.directive = directive;
			return { ok: false, error, elapsedMs: elapsedSince(this.clock, startedAt) };
		}
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
