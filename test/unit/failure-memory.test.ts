/**
 * The failure memory keeps fingerprints and codes, never arguments; a
 * change-approach failure yields one bounded directive, a repeated identical call says how often it
 * failed, the directive expires (next call, or endTurn), and a success clears the count.
 */
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { errorText } from "../../src/adapters/binding.js";
import { toWire } from "../../src/adapters/cli.js";
import { toCallToolResult } from "../../src/adapters/mcp/results.js";
import keel from "../../src/adapters/pi/extension.js";
import { SessionSlot } from "../../src/adapters/pi/sessions.js";
import type { ErrorCode } from "../../src/boundary/errors.js";
import { FAILURE_WINDOW, FailureMemory, MAX_DIRECTIVE_CHARS } from "../../src/boundary/failure-memory.js";
import { fingerprint } from "../../src/boundary/fingerprint.js";
import type { CallResult } from "../../src/session.js";
import { makeWorkspace, useWorkspace } from "../fixtures/workspace.js";

const fail = (m: FailureMemory, tool: string, args: unknown, code: ErrorCode) =>
	m.recordFailure(tool, args, { code });

describe("FailureMemory", () => {
	it("gives a change-approach failure one bounded directive naming the tool, the code and the fix", () => {
		const m = new FailureMemory();
		const cases: [ErrorCode, RegExp][] = [
			["NO_MATCH", /re-read the file and anchor/i],
			["AMBIGUOUS_MATCH", /re-read the file and anchor/i],
			["ENCODING_UNSAFE", /do not retry the text edit.*different tool or approach/i],
			["INVALID_ARGS", /fix the arguments.*schema/i],
			["COMMAND_FAILED", /read the command's output.*do not rerun/i],
		];
		cases.forEach(([code, advice], i) => {
			const d = fail(m, "edit", { n: i }, code);
			expect(d).toContain("edit");
			expect(d).toContain(code);
			expect(d).toMatch(advice);
			expect(d).toMatch(/change approach/);
			expect(d!.length).toBeLessThanOrEqual(MAX_DIRECTIVE_CHARS);
			expect(m.pending()).toBe(d);
		});
	});

	it("gives a first retry or retarget failure no directive, but a repeated one, of any class", () => {
		const m = new FailureMemory();
		const args = { command: "sleep 100", timeout: 1 };
		expect(fail(m, "bash", args, "TIMEOUT")).toBeUndefined();
		expect(fail(m, "read", { path: "nope" }, "NOT_FOUND")).toBeUndefined();
		expect(m.pending()).toBeUndefined();
		expect(fail(m, "bash", args, "TIMEOUT")).toMatch(
			/This exact bash call has failed 2 times \(last: TIMEOUT\)/,
		);
		const third = fail(m, "bash", { timeout: 1, command: "sleep 100" }, "TIMEOUT");
		expect(third).toMatch(/has failed 3 times.*do not repeat it/);
		expect(m.count("bash", fingerprint(args))).toBe(3);
		// Another tool with the same arguments is another call.
		expect(fail(m, "python", args, "TIMEOUT")).toBeUndefined();
		// An abort is not the model's doing: no directive, not counted.
		expect(fail(m, "bash", args, "ABORTED")).toBeUndefined();
		expect(m.count("bash", fingerprint(args))).toBe(3);
	});

	it("keeps constant memory: a window of the last failures, bounded tool names and directives", () => {
		const m = new FailureMemory();
		const first = { path: "first" };
		fail(m, "read", first, "NOT_FOUND");
		for (let i = 0; i < FAILURE_WINDOW; i++) fail(m, "read", { path: `p${i}` }, "NOT_FOUND");
		expect(m.records()).toHaveLength(FAILURE_WINDOW);
		// The first failure left the window: failing again is a first failure.
		expect(fail(m, "read", first, "NOT_FOUND")).toBeUndefined();
		const longName = `tool${"x".repeat(100_000)}`;
		const d = fail(m, longName, {}, "UNKNOWN_TOOL");
		expect(d!.length).toBeLessThanOrEqual(MAX_DIRECTIVE_CHARS);
		expect(JSON.stringify(m).length).toBeLessThan(FAILURE_WINDOW * 200 + 2 * MAX_DIRECTIVE_CHARS);
		expect(fail(m, `${longName}y`, {}, "UNKNOWN_TOOL")).not.toMatch(/failed 2 times/);
		expect(fail(m, longName, {}, "UNKNOWN_TOOL")).toMatch(/failed 2 times/);
	});

	it("expires the pending directive at endTurn or when the next call begins", () => {
		const m = new FailureMemory();
		const d = fail(m, "edit", {}, "NO_MATCH");
		expect(m.pending()).toBe(d);
		m.endTurn();
		expect(m.pending()).toBeUndefined();
		fail(m, "edit", {}, "NO_MATCH");
		expect(m.pending()).toMatch(/failed 2 times/);
		m.beginCall();
		expect(m.pending()).toBeUndefined();
		// Expiry is of the directive only: the loop count stays.
		expect(fail(m, "edit", {}, "NO_MATCH")).toMatch(/failed 3 times/);
	});

	it("a success of the same call clears its count, and only its count", () => {
		const m = new FailureMemory();
		fail(m, "edit", { a: 1 }, "NO_MATCH");
		fail(m, "edit", { a: 1 }, "NO_MATCH");
		fail(m, "edit", { a: 2 }, "NO_MATCH");
		fail(m, "edit", { a: 2 }, "NO_MATCH");
		m.recordSuccess("edit", { a: 1 });
		m.recordSuccess("write", { a: 2 });
		expect(m.count("edit", fingerprint({ a: 1 }))).toBe(0);
		expect(m.count("edit", fingerprint({ a: 2 }))).toBe(2);
		expect(fail(m, "edit", { a: 1 }, "NO_MATCH")).not.toMatch(/failed \d+ times/);
	});
});

describe("a session's failure memory", () => {
	const ws = useWorkspace({ prefix: "keel-failmem-", files: { "notes.txt": "alpha\nbeta\n" } });
	// Distinctive argument text that must never be kept.
	const NEEDLE = `needle-${"q".repeat(5000)}-end`;

	const failed = (r: CallResult) => {
		if (r.ok) expect.fail("expected a failure");
		return (r as Extract<CallResult, { ok: false }>).error;
	};

	it("an edit that misses returns a directive; the identical edit reports its repeat count", async () => {
		const args = { path: "notes.txt", edits: [{ oldText: NEEDLE, newText: "x" }] };
		const first = failed(await ws().session.call("edit", args));
		expect(first.code).toBe("NO_MATCH");
		expect(first.retry).toBe("change-approach");
		expect(first.directive).toMatch(/^edit failed with NO_MATCH: change approach.*Re-read the file/);
		expect(first.directive!.length).toBeLessThanOrEqual(MAX_DIRECTIVE_CHARS);
		expect(ws().session.failures.pending()).toBe(first.directive);

		const second = failed(await ws().session.call("edit", args));
		expect(second.directive).toMatch(
			/This exact edit call has failed 2 times \(last: NO_MATCH\); do not repeat it/,
		);
		const third = failed(await ws().session.call("edit", structuredClone(args)));
		expect(third.directive).toMatch(/failed 3 times/);
		// A different edit is a different call.
		const other = failed(
			await ws().session.call("edit", { ...args, edits: [{ oldText: "gamma", newText: "x" }] }),
		);
		expect(other.directive).not.toMatch(/failed \d+ times/);

		// No argument text is reachable from the memory: not the payload, not even the path.
		const state = JSON.stringify(ws().session.failures);
		expect(state).not.toContain("needle");
		expect(state).not.toContain("notes.txt");
		expect(state).not.toContain("gamma");
		for (const r of ws().session.failures.records()) {
			expect(Object.keys(r).sort()).toEqual(["code", "fingerprint", "retry", "tool"]);
		}
		expect(await readFile(ws().path("notes.txt"), "utf8")).toBe("alpha\nbeta\n");
	});

	it("the directive expires when the next call starts, or at endTurn", async () => {
		const args = { path: "notes.txt", edits: [{ oldText: "absent", newText: "x" }] };
		const r = failed(await ws().session.call("edit", args));
		expect(ws().session.failures.pending()).toBe(r.directive);
		expect((await ws().session.call("read", { path: "notes.txt" })).ok).toBe(true);
		expect(ws().session.failures.pending()).toBeUndefined();
		failed(await ws().session.call("edit", args));
		expect(ws().session.failures.pending()).toMatch(/failed 2 times/);
		ws().session.failures.endTurn();
		expect(ws().session.failures.pending()).toBeUndefined();
		// A later failure without a directive (a first NOT_FOUND) leaves nothing pending.
		expect(failed(await ws().session.call("read", { path: "missing.txt" })).directive).toBeUndefined();
		expect(ws().session.failures.pending()).toBeUndefined();
	});

	it("a success of the same edit clears its count", async () => {
		const args = { path: "notes.txt", edits: [{ oldText: "gamma", newText: "delta" }] };
		failed(await ws().session.call("edit", args));
		expect(failed(await ws().session.call("edit", args)).directive).toMatch(/failed 2 times/);
		// Make the identical edit applicable, through the session (it read the file first).
		expect((await ws().session.call("read", { path: "notes.txt" })).ok).toBe(true);
		expect((await ws().session.call("write", { path: "notes.txt", content: "alpha\ngamma\n" })).ok).toBe(
			true,
		);
		const ok = await ws().session.call("edit", args);
		expect(ok.ok).toBe(true);
		expect(ws().session.failures.count("edit", fingerprint(args))).toBe(0);
		expect(await readFile(ws().path("notes.txt"), "utf8")).toBe("alpha\ndelta\n");
		// gamma is gone again: the same edit misses, and it is a first miss.
		const again = failed(await ws().session.call("edit", args));
		expect(again.directive).toMatch(/^edit failed with NO_MATCH/);
	});

	it("a text edit on invalid UTF-8 says not to retry it; a failing command not to rerun it", async () => {
		await writeFile(ws().path("latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
		const enc = failed(
			await ws().session.call("edit", { path: "latin1.txt", edits: [{ oldText: "caf", newText: "x" }] }),
		);
		expect(enc.code).toBe("ENCODING_UNSAFE");
		expect(enc.directive).toMatch(/^edit failed with ENCODING_UNSAFE.*Do not retry the text edit/);
		expect(await readFile(ws().path("latin1.txt"))).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
		const cmd = { command: "echo nope; exit 3" };
		expect(failed(await ws().session.call("bash", cmd)).directive).toMatch(
			/^bash failed with COMMAND_FAILED.*do not rerun/,
		);
		expect(failed(await ws().session.call("bash", cmd)).directive).toMatch(
			/This exact bash call has failed 2 times/,
		);
	});

	it("the directive reaches hosts as an additive field: CLI wire, MCP text and structuredContent, pi text", async () => {
		const r = await ws().session.call("edit", {
			path: "notes.txt",
			edits: [{ oldText: "absent", newText: "x" }],
		});
		const error = failed(r);
		const wire = toWire(r) as { ok: boolean; error: Record<string, unknown> };
		expect(wire.ok).toBe(false);
		expect(wire.error).toMatchObject({
			code: "NO_MATCH",
			retry: "change-approach",
			directive: error.directive,
		});
		expect(typeof wire.error.message).toBe("string");
		const mcp = toCallToolResult(r);
		const text = (mcp.content[0] as { text: string }).text;
		expect(text.startsWith(`[NO_MATCH] ${error.message}`)).toBe(true);
		expect(text.endsWith(error.directive!)).toBe(true);
		expect((mcp.structuredContent as { error: { directive: string } }).error.directive).toBe(error.directive);
		expect(errorText(error)).toBe(`[NO_MATCH] ${error.message}\n\n${error.directive}`);
		// Without a directive, the text is unchanged.
		const plain = { code: "NOT_FOUND", message: "No such file: x.", retry: "retarget" } as const;
		expect(errorText(plain)).toBe("[NOT_FOUND] No such file: x.");
	});
});

describe("the pi extension", () => {
	it("puts the directive into the error text the model reads", async () => {
		// The extension opens the session itself, on the context's cwd.
		const ws = await makeWorkspace({
			prefix: "keel-failmem-pi-",
			files: { "notes.txt": "alpha\n" },
			session: false,
		});
		const tools = new Map<string, { execute: (...a: unknown[]) => Promise<unknown> }>();
		const handlers = new Map<string, ((e: unknown, c: unknown) => unknown)[]>();
		const api = {
			registerFlag: () => {},
			getFlag: () => undefined,
			registerTool: (t: { name: string; execute: (...a: unknown[]) => Promise<unknown> }) =>
				tools.set(t.name, t),
			on: (event: string, h: (e: unknown, c: unknown) => unknown) =>
				handlers.set(event, [...(handlers.get(event) ?? []), h]),
			getActiveTools: () => [],
			setActiveTools: () => {},
		};
		const emit = async (event: string) => {
			for (const h of handlers.get(event) ?? []) await h({}, ctx);
		};
		const ctx = { cwd: ws.root, hasUI: false, ui: { notify: () => {} } };
		keel(api as never);
		try {
			const args = { path: "notes.txt", edits: [{ oldText: "absent", newText: "x" }] };
			const edit = (id: string) => tools.get("edit")!.execute(id, args, undefined, undefined, ctx);
			await expect(edit("c1")).rejects.toThrow(
				/^\[NO_MATCH\] [\s\S]*\n\nedit failed with NO_MATCH: change approach/,
			);
			await expect(edit("c2")).rejects.toThrow(/This exact edit call has failed 2 times/);
			await emit("turn_end");
		} finally {
			await emit("session_shutdown");
			await ws.close();
		}
	});

	it("SessionSlot.opened() returns the open session and never opens one", async () => {
		const ws = await makeWorkspace({ prefix: "keel-failmem-slot-", session: false });
		const slot = new SessionSlot();
		try {
			expect(await slot.opened()).toBeUndefined();
			const session = await slot.get({ root: ws.root });
			expect(await slot.opened()).toBe(session);
			await ws.write("a.txt", "a\n");
			await session.call("edit", { path: "a.txt", edits: [{ oldText: "zzz", newText: "b" }] });
			expect(session.failures.pending()).toBeDefined();
			(await slot.opened())?.failures.endTurn();
			expect(session.failures.pending()).toBeUndefined();
		} finally {
			await slot.close();
			await ws.close();
		}
	});
});
