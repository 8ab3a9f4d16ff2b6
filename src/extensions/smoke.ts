/**
 * Isolated smoke test of an agent-written pi extension.
 *
 * `smokeTestExtension(path)` preflights the draft (preflight.ts), runs it in one disposable child
 * process (child-run.ts, smoke-child.mjs) against a fake pi API that records registrations and
 * never runs a tool or handler, and returns exactly one terminal result:
 *   ok        the factory returned: what it registered (metadata only, bounded)
 *   refused   a preflight check failed; nothing ran
 *   error     the draft threw while loading (bounded message and stack frames)
 *   timeout   the wall-clock limit (or the CPU-time backstop) ended it
 *   memory    the heap limit or the data-size limit ended it
 *   exited    it ended the process itself (process.exit, a crash) without a result
 *   aborted   the caller's signal ended it
 * It never throws for anything the draft does, and never returns the draft's source.
 */
import { KeelError } from "../boundary/errors.js";
import { elapsedSince, monotonicClock } from "../boundary/timing.js";
import { CHILD_ENTRY, type ChildOutcome, runChild } from "./child-run.js";
import { type Containment, containmentFor, type SmokeSandbox } from "./containment.js";
import { type DraftSession, preflightDraft } from "./preflight.js";
import { SMOKE_DEFAULTS } from "./smoke-defaults.js";
import { classify, type SmokeResult } from "./smoke-outcome.js";

export { type SmokeKind, type SmokeResult, summarize } from "./smoke-outcome.js";

export { SMOKE_DEFAULTS };

const MAX_TIMEOUT_MS = 600_000;

export interface SmokeOptions {
	/** Resolve the draft through this session's path guard (its files must be on this machine). */
	session?: DraftSession;
	/** Without a session: the allowed roots (the first is the workspace; default: the process cwd). */
	roots?: string[];
	/** Wall-clock limit (default 10 s). */
	timeoutMs?: number;
	/** V8 old-space limit in MB (default 128). */
	heapMb?: number;
	/** Data-segment limit in MB, for memory off the V8 heap (default 512). */
	dataMb?: number;
	/** Largest draft accepted, in bytes (default 1 MB). */
	maxBytes?: number;
	/** Bytes kept of each of the draft's stdout and stderr (default 2048; all of it is counted). */
	outputHeadBytes?: number;
	signal?: AbortSignal;
	/** Called once the child runs: its pid (the process group's id) and temp dir. */
	onSpawn?: (info: { pid: number; tempDir: string }) => void;
	/** How reads are kept in the root (containment.ts): "auto" (default) bwrap when it runs, else a link check. */
	sandbox?: SmokeSandbox;
}

function positive(v: number | undefined, fallback: number, what: string, max: number): number {
	if (v === undefined) return fallback;
	if (!Number.isFinite(v) || v <= 0 || v > max)
		throw new KeelError("INVALID_ARGS", `${what} must be a positive number up to ${max} (got ${v}).`);
	return Math.ceil(v);
}

/** Run one draft; see the module comment for the result kinds. Never throws. */
export async function smokeTestExtension(path: string, opts: SmokeOptions = {}): Promise<SmokeResult> {
	const startedAt = monotonicClock();
	const elapsed = () => elapsedSince(monotonicClock, startedAt);
	let limits: { timeoutMs: number; heapMb: number; dataMb: number; outputHeadBytes: number };
	let draft: Awaited<ReturnType<typeof preflightDraft>>;
	let containment: Containment;
	try {
		limits = {
			timeoutMs: positive(opts.timeoutMs, SMOKE_DEFAULTS.timeoutMs, "timeoutMs", MAX_TIMEOUT_MS),
			heapMb: positive(opts.heapMb, SMOKE_DEFAULTS.heapMb, "heapMb", 16_384),
			dataMb: positive(opts.dataMb, SMOKE_DEFAULTS.dataMb, "dataMb", 65_536),
			outputHeadBytes: positive(
				opts.outputHeadBytes,
				SMOKE_DEFAULTS.outputHeadBytes,
				"outputHeadBytes",
				1 << 20,
			),
		};
		draft = await preflightDraft(path, { session: opts.session, roots: opts.roots, maxBytes: opts.maxBytes });
		containment = await containmentFor(draft.root, CHILD_ENTRY, opts.sandbox);
	} catch (e) {
		const err =
			e instanceof KeelError ? e : new KeelError("INTERNAL", e instanceof Error ? e.message : String(e));
		return { ok: false, kind: "refused", error: err.toJSON(), elapsedMs: elapsed() };
	}
	let outcome: ChildOutcome;
	try {
		outcome = await runChild({
			...limits,
			draft: draft.path,
			readable: [draft.root],
			signal: opts.signal,
			onSpawn: opts.onSpawn,
			wrap: containment.wrap,
		});
	} catch (e) {
		// Only the temp dir's creation can throw here.
		return {
			ok: false,
			kind: "exited",
			path: draft.path,
			error: new KeelError(
				"IO_ERROR",
				`The smoke test could not prepare its temp dir: ${(e as Error).message}.`,
			).toJSON(),
			elapsedMs: elapsed(),
		};
	}
	const verdict = classify(outcome, limits.timeoutMs);
	const result = {
		...verdict,
		path: draft.path,
		...(draft.package ? { package: draft.package } : {}),
		stdout: outcome.stdout,
		stderr: outcome.stderr,
		// A report decides by itself; the exit after it is only the group being killed.
		...(outcome.exit && outcome.ending.by !== "report" ? { exit: outcome.exit } : {}),
		...(outcome.cleanupError ? { cleanupError: outcome.cleanupError } : {}),
		elapsedMs: elapsed(),
	};
	return result as SmokeResult;
}
