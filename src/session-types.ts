/** What a Session is made with and what its calls return (session.ts). */
import type { Backend } from "./backend/types.js";
import type { SerializedError } from "./boundary/errors.js";
import type { Clock } from "./boundary/timing.js";
import type { CheckpointBudgets } from "./checkpoints/types.js";
import type { CheckerSpec } from "./diagnostics/checkers.js";
import type { ProcessLimits } from "./procs/table.js";
import type { PythonCoordinatorOptions } from "./python/coordinator-options.js";
import type { QueueRegistry } from "./safety/mutation-queue.js";
import type { PayloadLimits } from "./safety/payloads.js";
import type { CheckMode } from "./syntax/check.js";
import type { CommitProbes } from "./tool-host.js";
import type { Profile } from "./tools/registry.js";
import type { Content, ToolResult } from "./tools/types.js";

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

export interface CallOptions {
	signal?: AbortSignal;
	/** This call's syntax check mode (SessionOptions.check), for the tools that change files. */
	check?: CheckMode;
	onUpdate?: (partial: ToolResult) => void;
}

/** A failed call's error: the KeelError's fields, plus the failure memory's directive when one is due. */
export type CallError = SerializedError & { directive?: string };

export type CallResult =
	| { ok: true; content: Content[]; details?: unknown; elapsedMs: number }
	| { ok: false; error: CallError; elapsedMs: number };

/** Points where tests interleave another writer (tool-host.ts); no-ops in production. */
export type SessionProbes = CommitProbes;
