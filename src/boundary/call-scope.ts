/**
 * The work of one tool call (REQUIREMENTS R8: "no child of a call outlives it"). Session.call makes
 * one CallScope per call: its signal is aborted when the call settles (or its caller aborts), and
 * work the tool or backend starts without awaiting it at once (read-ahead, a watcher, a drain) is
 * registered with `own`, so its failure can never escape the call as an unhandled rejection and the
 * call waits for it (bounded) before it answers.
 */

/** What a tool or backend needs to hand work to its call. */
export interface WorkOwner {
	/** Aborted when the call settles, is aborted, or its session closes. */
	readonly signal: AbortSignal;
	/**
	 * Register `work` with the call and return it unchanged: awaiting it still sees its result or
	 * failure; left unawaited, its failure is absorbed and the call waits for it before answering.
	 */
	own<T>(work: Promise<T>): Promise<T>;
}

/** Own `work` with `owner`, or, without one, at least keep its failure from escaping. */
export function ownWork<T>(owner: WorkOwner | undefined, work: Promise<T>): Promise<T> {
	if (owner) return owner.own(work);
	work.catch(() => {});
	return work;
}

/** How long a settled call waits for owned work that ignores the abort before answering anyway. */
export const OWNED_WORK_GRACE_MS = 2000;

/**
 * The reason a settled call's signal is aborted with: one shared, made once. abort() without a
 * reason builds a DOMException (a stack capture) on every call, about half of its cost.
 */
const CALL_SETTLED = new DOMException("The call has settled.", "AbortError");

export class CallScope implements WorkOwner {
	private readonly controller = new AbortController();
	private readonly pending = new Set<Promise<unknown>>();
	private readonly unlink: () => void;

	constructor(parent?: AbortSignal) {
		const onParentAbort = () => this.controller.abort(parent?.reason);
		if (parent?.aborted) onParentAbort();
		parent?.addEventListener("abort", onParentAbort, { once: true });
		this.unlink = () => parent?.removeEventListener("abort", onParentAbort);
	}

	get signal(): AbortSignal {
		return this.controller.signal;
	}

	own<T>(work: Promise<T>): Promise<T> {
		const settled = work.then(
			() => undefined,
			() => undefined,
		);
		this.pending.add(settled);
		void settled.then(() => this.pending.delete(settled));
		return work;
	}

	/** Stop the call's leftovers without waiting for them (a closing session). */
	abort(): void {
		this.controller.abort();
	}

	/**
	 * The call has its answer: abort what still runs, then wait for owned work to settle, at most
	 * `graceMs` (work that ignores the abort stays owned: its failure is still absorbed).
	 */
	async close(graceMs = OWNED_WORK_GRACE_MS): Promise<void> {
		this.unlink();
		this.controller.abort(CALL_SETTLED);
		if (this.pending.size === 0) return;
		let timer: NodeJS.Timeout | undefined;
		const grace = new Promise<void>((r) => {
			timer = setTimeout(r, graceMs);
			timer.unref();
		});
		await Promise.race([Promise.all([...this.pending]), grace]);
		clearTimeout(timer);
	}
}
