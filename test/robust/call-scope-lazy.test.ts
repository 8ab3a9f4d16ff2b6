/**
 * A CallScope makes its AbortSignal only when something asks for it (the signal, its link
 * to the caller's and the abort cost tens of µs per call). Whenever the signal is asked for, it
 * must say what an eager one would: aborted once the call settled, the session closed it, or the
 * caller aborted; and work holding it must still be stopped when the call settles.
 */
import { describe, expect, it } from "vitest";
import { CallScope } from "../../src/boundary/call-scope.js";

describe("CallScope's signal, made on first use", () => {
	it("a signal asked for after the call settled comes aborted", async () => {
		const scope = new CallScope();
		expect(scope.aborted).toBe(false);
		await scope.close();
		expect(scope.aborted).toBe(true);
		expect(scope.signal.aborted).toBe(true);
	});

	it("a signal asked for during the call is aborted when it settles, and its listeners run", async () => {
		const scope = new CallScope();
		let heard = 0;
		scope.signal.addEventListener("abort", () => heard++);
		expect(scope.signal.aborted).toBe(false);
		await scope.close();
		expect(scope.signal.aborted).toBe(true);
		expect(heard).toBe(1);
	});

	it("the caller's abort is seen with and without the signal, before and after it is made", () => {
		const caller = new AbortController();
		const early = new CallScope(caller.signal);
		const late = new CallScope(caller.signal);
		const made = early.signal;
		caller.abort(new Error("stop"));
		expect(made.aborted).toBe(true);
		expect((made.reason as Error).message).toBe("stop");
		expect(late.aborted).toBe(true);
		expect(late.signal.aborted).toBe(true);
		expect((late.signal.reason as Error).message).toBe("stop");
	});

	it("a caller that was aborted before the call began", () => {
		const caller = new AbortController();
		caller.abort();
		expect(new CallScope(caller.signal).aborted).toBe(true);
	});

	it("a closing session's abort reaches a signal made later", () => {
		const scope = new CallScope();
		scope.abort();
		expect(scope.aborted).toBe(true);
		expect(scope.signal.aborted).toBe(true);
	});

	it("once settled, the caller's later abort no longer reaches the scope (its listener is removed)", async () => {
		const caller = new AbortController();
		const scope = new CallScope(caller.signal);
		const signal = scope.signal;
		await scope.close();
		const reason = signal.reason;
		caller.abort(new Error("late"));
		expect(signal.reason).toBe(reason);
	});
});
