/** Monotonic timing for every tool call (REQUIREMENTS R2). */
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
