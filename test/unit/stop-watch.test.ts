/**
 * watchStop: a run's abort signal and timeout in one place (every backend's run stops its command
 * through it). Each row: what happens, in order, and what the watch must then say.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { watchStop } from "../../src/boundary/timing.js";

type Step = "abort" | "elapse" | "dispose";

interface Row {
	name: string;
	abortedBefore?: boolean;
	timeoutMs?: number;
	steps: Step[];
	stops: number;
	aborted: boolean;
	timedOut: boolean;
}

const ROWS: Row[] = [
	{ name: "nothing happens", timeoutMs: 1000, steps: [], stops: 0, aborted: false, timedOut: false },
	{
		name: "an abort stops once",
		timeoutMs: 1000,
		steps: ["abort"],
		stops: 1,
		aborted: true,
		timedOut: false,
	},
	{
		name: "a signal aborted before the watch stops at once",
		abortedBefore: true,
		steps: [],
		stops: 1,
		aborted: true,
		timedOut: false,
	},
	{
		name: "the timeout stops once",
		timeoutMs: 1000,
		steps: ["elapse"],
		stops: 1,
		aborted: false,
		timedOut: true,
	},
	{
		name: "a timeout, then an abort: both said",
		timeoutMs: 1000,
		steps: ["elapse", "abort"],
		stops: 2,
		aborted: true,
		timedOut: true,
	},
	{
		name: "no timeout given: time never stops it",
		steps: ["elapse"],
		stops: 0,
		aborted: false,
		timedOut: false,
	},
	{
		name: "a timeout of 0 means none",
		timeoutMs: 0,
		steps: ["elapse"],
		stops: 0,
		aborted: false,
		timedOut: false,
	},
	{
		name: "after dispose an abort is not heard",
		timeoutMs: 1000,
		steps: ["dispose", "abort"],
		stops: 0,
		aborted: false,
		timedOut: false,
	},
	{
		name: "after dispose the timer never fires",
		timeoutMs: 1000,
		steps: ["dispose", "elapse"],
		stops: 0,
		aborted: false,
		timedOut: false,
	},
	{
		name: "past Node's timer limit it waits, not fires at once",
		timeoutMs: 2 ** 31 + 5,
		steps: [],
		stops: 0,
		aborted: false,
		timedOut: false,
	},
];

describe("watchStop", () => {
	beforeEach(() => vi.useFakeTimers());
	afterEach(() => vi.useRealTimers());

	it.each(ROWS)("$name", (row) => {
		const controller = new AbortController();
		if (row.abortedBefore) controller.abort();
		let stops = 0;
		const watch = watchStop(controller.signal, row.timeoutMs, () => stops++);
		vi.advanceTimersByTime(1); // a timer clamped to 1 ms would fire here
		for (const step of row.steps) {
			if (step === "abort") controller.abort();
			else if (step === "elapse") vi.advanceTimersByTime(10_000);
			else watch.dispose();
		}
		expect({ stops, aborted: watch.aborted, timedOut: watch.timedOut }).toEqual({
			stops: row.stops,
			aborted: row.aborted,
			timedOut: row.timedOut,
		});
		watch.dispose();
		expect(vi.getTimerCount()).toBe(0);
	});

	it("without a signal only the timeout stops", () => {
		let stops = 0;
		const watch = watchStop(undefined, 50, () => stops++);
		vi.advanceTimersByTime(50);
		expect([stops, watch.timedOut, watch.aborted]).toEqual([1, true, false]);
	});
});
