/**
 * How one call of a session runs and answers: the CallScope that owns its work, the host's
 * progress callback kept from reaching the tool, and the tool's outcome made the call's answer
 * (timed, recorded in the failure memory, a failure as a structured error, never thrown). Apart
 * from the session, which decides which tool runs; this decides what every call's answer looks like.
 */
import { CallScope } from "./boundary/call-scope.js";
import { KeelError } from "./boundary/errors.js";
import type { FailureMemory } from "./boundary/failure-memory.js";
import { fromSystemError } from "./boundary/system-errors.js";
import { type Clock, elapsedSince } from "./boundary/timing.js";
import type { CallError, CallOptions, CallResult } from "./session-types.js";
import type { ToolResult } from "./tools/types.js";

/**
 * Runs `run` in a new CallScope, listed in `running` until the scope closes (after the answer:
 * closing stops what the call left running and awaits its registered work, bounded).
 */
export async function inCallScope(
	running: Set<CallScope>,
	opts: CallOptions,
	run: (scope: CallScope, onUpdate: CallOptions["onUpdate"]) => Promise<CallResult>,
): Promise<CallResult> {
	const scope = new CallScope(opts.signal);
	running.add(scope);
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
		return await run(scope, onUpdate);
	} finally {
		answered = true;
		await scope.close();
		running.delete(scope);
	}
}

/** The answer to the call of `name` with `args` whose tool runs as `run`: never throws. */
export async function answerOf(
	name: string,
	args: unknown,
	clock: Clock,
	failures: FailureMemory,
	run: () => Promise<ToolResult>,
): Promise<CallResult> {
	const startedAt = clock();
	failures.beginCall();
	try {
		const result = await run();
		failures.recordSuccess(name, args);
		return {
			ok: true,
			content: result.content,
			details: result.details,
			elapsedMs: elapsedSince(clock, startedAt),
		};
	} catch (e) {
		const err = e instanceof KeelError ? e : fromSystemError(e);
		const error: CallError = err.toJSON();
		const directive = failures.recordFailure(name, args, error);
		if (directive) error.directive = directive;
		return { ok: false, error, elapsedMs: elapsedSince(clock, startedAt) };
	}
}
