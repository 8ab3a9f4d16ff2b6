/** Monotonic timing for every tool call. */
import { performance } from "node:perf_hooks";

export type Clock = () => number;

export const monotonicClock: Clock = () => performance.now();

/** Round to tenths of a millisecond: enough for display, stable in JSON. */
export function elapsedSince(clock: Clock, startedAt: number): number {
	return Math.round((clock() - startedAt) * 10) / 10;
}

export function formatDuration(ms: number): string {
	if (ms < 1000) return `${Math.round(ms)}ms`;
	return `${(ms / 1000).toFixed(1)}s`;
}

/** Node's timers hold at most 2^31-1 ms; a longer delay is clamped to 1 ms and fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface LongTimer {
	clear(): void;
}

/**
 * setTimeout for any delay: past MAX_TIMER_MS it is a chain of timers, so a long timeout means
 * long instead of firing at once.
 */
export function setLongTimeout(fn: () => void, ms: number): LongTimer {
	let timer: NodeJS.Timeout;
	const arm = (left: number) => {
		const step = Math.min(left, MAX_TIMER_MS);
		timer = setTimeout(() => (left > step ? arm(left - step) : fn()), step);
	};
	arm(Math.max(0, ms));
	return { clear: () => clearTimeout(timer) };
}

/** What stopped a run: the caller's abort, its timeout, or neither (yet). */
export interface StopWatch {
	readonly aborted: boolean;
	readonly timedOut: boolean;
	/** Clears the timer and removes the listener; safe to call more than once. */
	dispose(): void;
}

/**
 * A run's two stop triggers in one place: `stop` is called when `signal` aborts (at once if it
 * already has) or when `timeoutMs` passes (never when it is undefined or not positive), and the
 * watch says which happened. `stop` may be called twice (a timeout, then an abort): it must be
 * idempotent or cheap to repeat. Every backend's run stops its command this way.
 */
export function watchStop(
	signal: AbortSignal | undefined,
	timeoutMs: number | undefined,
	stop: () => void,
): StopWatch {
	const onAbort = () => {
		watch.aborted = true;
		stop();
	};
	const timer =
		timeoutMs !== undefined && timeoutMs > 0
			? setLongTimeout(() => {
					watch.timedOut = true;
					stop();
				}, timeoutMs)
			: undefined;
	const watch = {
		aborted: false,
		timedOut: false,
		dispose: () => {
			timer?.clear();
			signal?.removeEventListener("abort", onAbort);
		},
	};
	signal?.addEventListener("abort", onAbort, { once: true });
	if (signal?.aborted) onAbort();
	return watch;
}

/**
 * Wait for `done`, but at most `timeoutMs` (when given) and only until `signal` aborts; resolves
 * either way (the caller looks at what it was waiting for), and leaves no timer or listener behind.
 */
export async function waitAtMost(
	done: Promise<unknown>,
	opts: { timeoutMs?: number; signal?: AbortSignal },
): Promise<void> {
	if (opts.signal?.aborted) return;
	let timer: LongTimer | undefined;
	let onAbort: (() => void) | undefined;
	const stops: Promise<unknown>[] = [done];
	if (opts.timeoutMs !== undefined) {
		const ms = opts.timeoutMs;
		stops.push(new Promise((r) => (timer = setLongTimeout(() => r(undefined), ms))));
	}
	if (opts.signal) {
		const signal = opts.signal;
		stops.push(
			new Promise<void>((r) => {
				onAbort = () => r();
				signal.addEventListener("abort", onAbort);
			}),
		);
	}
	try {
		await Promise.race(stops);
	} finally {
		timer?.clear();
		if (onAbort) opts.signal?.removeEventListener("abort", onAbort);
	}
}
