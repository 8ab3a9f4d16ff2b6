/**
 * A bound call as a stream of results: each partial result the tool reports (bash's output so far)
 * as it arrives, then the final one. For frameworks that take streamed tool output (the AI SDK's
 * preliminary results, Mastra's tool writer, LangChain's custom events). A partial is the whole
 * output so far, not a delta, so a consumer that falls behind loses nothing by skipping to the
 * newest: only the newest partial not yet taken is kept.
 */
import type { CallOptions } from "../session.js";
import type { ToolResult } from "../tools/types.js";
import { type BoundResult, type BoundTool, toBoundResult } from "./binding.js";

/** A partial result in the binding's neutral shape. */
export function toBoundPartial(partial: ToolResult, elapsedMs: number): BoundResult {
	return toBoundResult({ ok: true, content: partial.content, details: partial.details, elapsedMs });
}

/** The call's partial results as they come, then its final result (always last, always once). */
export async function* streamCall(
	tool: BoundTool,
	args: unknown,
	opts: Omit<CallOptions, "onUpdate"> = {},
): AsyncGenerator<BoundResult, void, undefined> {
	const started = performance.now();
	let newest: BoundResult | undefined;
	let settled = false;
	let wake: (() => void) | undefined;
	const final = tool
		.call(args, {
			...opts,
			onUpdate: (partial) => {
				newest = toBoundPartial(partial, performance.now() - started);
				wake?.();
			},
		})
		.finally(() => {
			settled = true;
			wake?.();
		});
	// Awaited below; a rejection is the consumer's to see there, not an unhandled one meanwhile.
	final.catch(() => {});
	for (;;) {
		if (newest) {
			const partial = newest;
			newest = undefined;
			yield partial;
			continue;
		}
		if (settled) break;
		await new Promise<void>((resolve) => {
			wake = resolve;
			// An update or the end may have come between the checks above and this wait.
			if (newest || settled) resolve();
		});
		wake = undefined;
	}
	yield await final;
}

/** Runs the call, handing each partial result to `report`; a failing report never fails the call. */
export function callReporting(
	tool: BoundTool,
	args: unknown,
	opts: Omit<CallOptions, "onUpdate">,
	report: ((partial: BoundResult) => unknown) | undefined,
): Promise<BoundResult> {
	if (!report) return tool.call(args, opts);
	const started = performance.now();
	return tool.call(args, {
		...opts,
		onUpdate: (partial) => {
			try {
				const pending = report(toBoundPartial(partial, performance.now() - started));
				// A writer whose stream is gone rejects; the call goes on.
				if (pending instanceof Promise) pending.catch(() => {});
			} catch {
				// As above.
			}
		},
	});
}
