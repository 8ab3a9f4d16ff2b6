/**
 * What a session is made with, what its calls take and return, and the library's view of a
 * session: the typed `Session` that createSession returns (session.ts implements it).
 */
import type { Backend } from "./backend/types.js";
import type { SerializedError } from "./boundary/errors.js";
import type { FailureMemory } from "./boundary/failure-memory.js";
import type { Clock } from "./boundary/timing.js";
import type { Checkpoints } from "./checkpoints/checkpoints.js";
import type { CheckpointBudgets } from "./checkpoints/types.js";
import type { CheckerSpec } from "./diagnostics/checkers.js";
import type { ProcessLimits } from "./procs/types.js";
import type { PythonCoordinatorOptions } from "./python/coordinator-options.js";
import type { QueueRegistry } from "./safety/mutation-queue.js";
import type { PayloadLimits } from "./safety/payloads.js";
import type { RecoveryReport } from "./safety/recovery.js";
import type { CheckMode } from "./syntax/report.js";
import type { CommitProbes } from "./tool-host.js";
import type { Profile, ProfileTool } from "./tools/registry.js";
import type { ArgsOf, Content, DetailsOf, ToolDefinition, ToolResult } from "./tools/types.js";

/** Options of createSession: the workspace and its roots, the backend, the profile, and the session's bounds. */
export interface SessionOptions {
	/** Workspace root (default: process cwd). Relative paths resolve against it. */
	root?: string;
	/** Extra read-write roots. */
	allow?: string[];
	/** Read-only roots. */
	allowRead?: string[];
	backend?: Backend;
	profile?: Profile;
	/** Tool names to leave out of the palette. */
	disabledTools?: string[];
	/** Permit writes to the protected set (git hooks and config, tool config, shell rc files). */
	allowProtected?: boolean;
	/** More protected paths (absolute, or relative to the root), each with everything below it. */
	protectedPaths?: string[];
	/** Home directory for `~` (default: the OS home). */
	home?: string;
	/** Where truncated outputs are spilled (default: a new directory under the OS temp dir). */
	spillDir?: string;
	clock?: Clock;
	payloadLimits?: PayloadLimits;
	probes?: SessionProbes;
	/**
	 * The queues shared by the sessions of one process (the MCP server makes one): sessions on the
	 * same workspace then serialize their commits per file. Default: a queue of this session's own.
	 */
	queues?: QueueRegistry;
	/**
	 * Where multi-file changes keep their intent journal (default: $XDG_STATE_HOME/keel, else
	 * ~/.local/state/keel); see safety/journal.ts.
	 */
	stateDir?: string;
	/** Options for this session's Python coordinator (interpreter, memory limit, background lane). */
	python?: Omit<PythonCoordinatorOptions, "spill" | "backend">;
	/** Shell text run before every `bash` command, on its own line (pi's `shellCommandPrefix`). */
	commandPrefix?: string;
	/**
	 * The syntax check of every change to a source file (syntax/check.ts): "report" (default) puts
	 * the errors a change introduced in its result, "refuse" fails such a change with nothing
	 * written, "off" skips it. A call's own `check` option overrides it.
	 */
	check?: CheckMode;
	/**
	 * The workspace's own checkers, run after every change to a file they check, in the workspace
	 * through the backend (diagnostics/diagnostics.ts): the result reports the errors the change
	 * introduced. Presets by name ("tsc", "ruff", "pyright", "mypy", "py_compile") or
	 * `{ name, command, extensions, timeoutMs }`. Off by default; a call with check "off" runs none.
	 */
	diagnostics?: Array<string | CheckerSpec>;
	/** Bounds of the session's process handles (procs/table.ts). */
	processLimits?: Partial<ProcessLimits>;
	/**
	 * Checkpoints of every change the session's calls make, the shell's and Python's included
	 * (checkpoints/checkpoints.ts): `true` or budgets turn them on (off by default: the first scan
	 * reads the whole workspace into keel's state directory; on ssh and containers, into keel's
	 * state on the host, kept there by keel's host helper: python3 on the host is needed). Other
	 * backends: UNSUPPORTED.
	 * With them on, the unified profile offers the `checkpoints` tool.
	 */
	checkpoints?: boolean | Partial<CheckpointBudgets>;
}

/** Options of one call. */
export interface CallOptions {
	/** Aborts the call: it answers ABORTED, and what it started is stopped. */
	signal?: AbortSignal;
	/** This call's syntax check mode (SessionOptions.check), for the tools that change files. */
	check?: CheckMode;
	/** Partial results while the call runs (bash's output so far); a throwing callback is ignored. */
	onUpdate?: (partial: ToolResult) => void;
}

/** A failed call's error: the KeelError's fields, plus the failure memory's directive when one is due. */
export type CallError = SerializedError & { directive?: string };

/**
 * A call's outcome. A tool's failure is `ok: false` with a structured error, never a throw.
 * `D` is the tool's details type (see {@link ToolDetails}); `details` is absent when the tool had
 * none to give.
 */
export type CallResult<D = unknown> =
	| { ok: true; content: Content[]; details?: D; elapsedMs: number }
	| { ok: false; error: CallError; elapsedMs: number };

/** Points where tests interleave another writer (tool-host.ts); no-ops in production. */
export type SessionProbes = CommitProbes;

/**
 * The names of the tools profile `P` offers (with no profile given, a session's profile is "pi").
 * The unified profile's `checkpoints` is offered only when the session keeps checkpoints.
 */
export type ToolName<P extends Profile = Profile> = ProfileTool<P>["name"];

/** The definition of tool `N` in profile `P`. */
type ToolOf<N extends string, P extends Profile> = Extract<ProfileTool<P>, { name: N }>;

/** The arguments tool `N` takes in profile `P`: the type of its JSON Schema. */
export type ToolArgs<N extends string, P extends Profile = Profile> = ArgsOf<ToolOf<N, P>>;

/** The `details` of a successful call of tool `N` in profile `P` (the README's tool table lists them). */
export type ToolDetails<N extends string, P extends Profile = Profile> = DetailsOf<ToolOf<N, P>>;

/** What a session's checkpoints offer a host: the listing, a diff since one, a restore to one. */
export type SessionCheckpoints = Pick<Checkpoints, "list" | "diff" | "restore">;

/** The session's memory of failed calls, as a host that runs its own turns uses it. */
export type SessionFailures = Pick<FailureMemory, "pending" | "endTurn" | "records">;

/**
 * A keel session: the tools of one profile over one workspace, made by `createSession`.
 *
 * Errors: tool calls (`call`, `callDynamic`, and the library's `applyPatch`) never throw for a
 * tool's failure; they resolve `{ ok: false, error }` with a structured error (code, message,
 * retry). Only `createSession` throws, a KeelError, for options it cannot use.
 *
 * A session holds processes, a spill directory and a lock on its queues: close it, or declare it
 * with `await using` to close it at the end of the block.
 */
export interface SessionApi<P extends Profile = Profile> {
	/** The tools this session offers, with their descriptions and JSON Schemas (for a model). */
	readonly tools: ToolDefinition[];
	/** The workspace root: relative paths resolve against it, commands start in it. */
	readonly workspace: string;
	/** Multi-file changes a killed keel process left, finished (rolled back or forward) at start. */
	readonly recovery: readonly RecoveryReport[];
	/** Checkpoints of every change, when SessionOptions.checkpoints turned them on. */
	readonly checkpoints: SessionCheckpoints | undefined;
	/** Failed calls by fingerprint, and the directive for the model's next turn. */
	readonly failures: SessionFailures;
	/**
	 * Run one tool, typed by the profile: a name the profile does not offer, or arguments its
	 * schema would refuse, do not compile; `details` has the tool's type. Never throws: a failure
	 * is `{ ok: false, error }`. The arguments are still checked at run time (INVALID_ARGS).
	 */
	call<N extends ToolName<P>>(
		name: N,
		args: ToolArgs<N, P>,
		opts?: CallOptions,
	): Promise<CallResult<ToolDetails<N, P>>>;
	/**
	 * `call` with a name and arguments known only at run time (a model's tool call that a host
	 * routes): an unknown name is UNKNOWN_TOOL, bad arguments INVALID_ARGS. Never throws.
	 */
	callDynamic(name: string, args: unknown, opts?: CallOptions): Promise<CallResult>;
	/**
	 * End the session: running calls are aborted, background processes killed, the Python worker
	 * stopped, spill files removed. Calls after it answer BACKEND_UNAVAILABLE. Idempotent.
	 */
	close(): Promise<void>;
	/** `await using session = await createSession(...)` closes it at the end of the block. */
	[Symbol.asyncDispose](): Promise<void>;
}
