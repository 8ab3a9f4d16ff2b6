/**
 * The work of one tool call ("no child of a call outlives it"). Session.call makes
 * one CallScope per call: its signal is aborted when the call settles (or its caller aborts), and
 * work the tool or backend starts without awaiting it at once (read-ahead, a watcher, a drain) is
 * registered with `own`, so its failure can never escape the call as an unhandled rejection and the
 * call waits for it (bounded) before it answers.
 */

/** What a tool or backend needs to hand work to its call. */
export interface WorkOwner {
	/** Aborted when the call settles, is aborted, or its session closes. */
	readonly signal: AbortSignal;
	/** Whether `signal` is aborted, without making the signal when nothing has asked for it yet. */
	readonly aborted: boolean;
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

/**
 * The signal is made on first use: an AbortSignal, its link to the caller's and the abort when the
 * call settles cost tens of µs per call in Node 20, and most calls (an edit, a read)
 * never hand theirs to anything. A scope whose signal nobody asked for has nothing to abort; one
 * asked for after the call settled comes already aborted.
 */
export class CallScope implements WorkOwner {
	private controller: AbortController | undefined;
	private readonly pending = new Set<Promise<unknown>>();
	private unlink: (() => void) | undefined;
	/** Why the scope ended (settled or aborted) before its signal was made, or undefined while it runs. */
	private ended: unknown;

	constructor(private readonly parent?: AbortSignal) {}

	get signal(): AbortSignal {
		if (this.controller) return this.controller.signal;
		const controller = new AbortController();
		this.controller = controller;
		const parent = this.parent;
		if (this.ended !== undefined) controller.abort(this.ended);
		else if (parent?.aborted) controller.abort(parent.reason);
		else if (parent) {
			const onParentAbort = () => controller.abort(parent.reason);
			parent.addEventListener("abort", onParentAbort, { once: true });
			this.unlink = () => parent.removeEventListener("abort", onParentAbort);
		}
		return controller.signal;
	}

	get aborted(): boolean {
		if (this.controller) return this.controller.signal.aborted;
		return this.ended !== undefined || this.parent?.aborted === true;
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
		if (this.controller) this.controller.abort();
		else this.ended ??= new DOMException("The session closed.", "AbortError");
	}

	/**
	 * The call has its answer: abort what still runs, then wait for owned work to settle, at most
	 * `graceMs` (work that ignores the abort stays owned: its failure is still absorbed).
	 */
	async close(graceMs = OWNED_WORK_GRACE_MS): Promise<void> {
		this.unlink?.();
		if (this.controller) this.controller.abort(CALL_SETTLED);
		else this.ended ??= CALL_SETTLED;
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
