/**
 * A palette: the tools one host offers, bound to it. Running a call by name is here: the tool
 * looked up (an unknown name lists the ones there are), the model's known quirks repaired, the
 * arguments checked against the schema, then execute on the bound host. What surrounds a call
 * (its scope, timing, the failure memory, a closed session) stays with the session that owns the
 * palette; every adapter reaches it through Session.call.
 */
import type { WorkOwner } from "../boundary/call-scope.js";
import { KeelError } from "../boundary/errors.js";
import { inModelsWords, type PathResolution } from "../boundary/path-facts.js";
import type { ResolvedPath } from "../safety/path-guard.js";
import { checkModeOf } from "../syntax/report.js";
import type { ToolHost } from "../tool-host.js";
import type { ToolDefinition, ToolResult } from "./types.js";

/** One call's own parts: its scope and progress callback, and its syntax check option as given. */
export interface PaletteCall {
	scope: WorkOwner;
	onUpdate?: (partial: ToolResult) => void;
	/** Unchecked: a value that is not a check mode fails the call (INVALID_ARGS). */
	check?: unknown;
}

/**
 * Tools that are no checkpoint boundary although they are not read-only: the checkpoints tool makes
 * its own, and the ones that talk to what already runs (a process handle, a Python job) change
 * files only through it; what it changes between calls is recorded as made outside them, and a
 * `process` wait must not hold every other call back while it waits.
 */
const NOT_A_BOUNDARY = new Set(["checkpoints", "process", "write_stdin", "python_jobs"]);

/** Whether a call of `tool` is a checkpoint boundary in a session that keeps checkpoints. */
export function isCheckpointBoundary(tool: ToolDefinition): boolean {
	return !tool.annotations.readOnly && !NOT_A_BOUNDARY.has(tool.name);
}

/** What runs around a tool's execution (the session's checkpoints: a scan before and after it). */
export type AroundCall = (tool: ToolDefinition, run: () => Promise<ToolResult>) => Promise<ToolResult>;

export class Palette {
	private readonly byName: Map<string, ToolDefinition>;

	constructor(
		tools: readonly ToolDefinition[],
		private readonly host: ToolHost,
		private readonly around: AroundCall = (_tool, run) => run(),
	) {
		this.byName = new Map(tools.map((t) => [t.name, t]));
	}

	get tools(): ToolDefinition[] {
		return [...this.byName.values()];
	}

	/** Run tool `name` on this palette's host. Throws KeelError (or what the tool threw). */
	async run(name: string, args: unknown, call: PaletteCall): Promise<ToolResult> {
		const tool = this.byName.get(name);
		if (!tool) {
			throw new KeelError(
				"UNKNOWN_TOOL",
				`Unknown tool "${name}". Available: ${[...this.byName.keys()].join(", ")}.`,
			);
		}
		return this.runDefinition(tool, args, call);
	}

	/** Run `tool` (offered by this palette or not) on this palette's host, as run() does. */
	async runDefinition(tool: ToolDefinition, args: unknown, call: PaletteCall): Promise<ToolResult> {
		const prepared = tool.prepareArguments ? tool.prepareArguments(args) : args;
		tool.check(prepared);
		const { scope } = call;
		if (scope.aborted) throw new KeelError("ABORTED", "The call was aborted before it started.");
		const check = call.check === undefined ? undefined : checkModeOf(call.check, "check");
		const resolutions: PathResolution[] = [];
		const host = noteResolutions(this.host, resolutions);
		try {
			return await this.around(tool, () =>
				tool.execute(prepared as never, {
					host,
					// Made when the tool first reads it (boundary/call-scope.ts).
					get signal() {
						return scope.signal;
					},
					scope,
					onUpdate: call.onUpdate,
					check,
				}),
			);
		} catch (e) {
			throw inModelsWords(e, resolutions);
		}
	}
}

/**
 * `host` for one call, noting how each path argument resolved: a fact a backend reports about a
 * canonical path is then worded for the path as the model wrote it (path-facts.ts, inModelsWords).
 * Everything else is the host's own (getters read on it, methods bound to it).
 */
function noteResolutions(host: ToolHost, into: PathResolution[]): ToolHost {
	const note = (r: ResolvedPath): ResolvedPath => {
		into.push({ input: r.input, canonical: r.canonical });
		return r;
	};
	const own: Pick<ToolHost, "resolvePath" | "resolveEntry" | "resolveReadable"> = {
		resolvePath: (input, access) => host.resolvePath(input, access).then(note),
		resolveEntry: (input, access) => host.resolveEntry(input, access).then(note),
		resolveReadable: (input) =>
			host.resolveReadable(input).then((x) => {
				note(x.target);
				return x;
			}),
	};
	return new Proxy(host, {
		get(target, prop) {
			if (Object.hasOwn(own, prop)) return own[prop as keyof typeof own];
			const value = Reflect.get(target, prop, target);
			return typeof value === "function" ? value.bind(target) : value;
		},
	});
}
