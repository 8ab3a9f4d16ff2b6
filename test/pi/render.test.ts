/**
 * keel's pi renderers: live "Elapsed" and final "Took" for successes and
 * failures; collapsed previews that look at no more than 8,192 characters of a 5 MB argument;
 * expansion shows everything; edit and file results show their diffs.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { callLines } from "../../src/adapters/pi/format-call.js";
import { resultLines } from "../../src/adapters/pi/format-result.js";
import { countLines, headPreview, PREVIEW_CHARS, tailPreview } from "../../src/adapters/pi/preview.js";
import { createRenderers, type RenderContextLike } from "../../src/adapters/pi/render.js";
import { plainTheme } from "../../src/adapters/pi/theme.js";
import type { Component } from "../../src/adapters/pi/view.js";

const lines = (c: Component) => c.render(200);
const text = (t: string) => ({ content: [{ type: "text", text: t }] });

function context(over: Partial<RenderContextLike> = {}): RenderContextLike {
	return {
		state: {},
		executionStarted: true,
		expanded: false,
		isError: false,
		lastComponent: undefined,
		invalidate: vi.fn(),
		...over,
	};
}

/** A 5 MB argument of `n` short lines. */
function big(lineCount = 65_536): string {
	return `${"x".repeat(79)}\n`.repeat(lineCount);
}

describe("timing", () => {
	let clock = 0;
	const now = () => clock;
	beforeEach(() => {
		vi.useFakeTimers();
		clock = 10_000;
	});
	afterEach(() => {
		vi.useRealTimers();
	});

	it("shows a live Elapsed while running and Took when done", () => {
		const r = createRenderers("bash", now);
		const ctx = context();
		lines(r.renderCall({ command: "sleep 3" }, plainTheme, ctx));
		clock += 1_200;
		const running = lines(
			r.renderResult({ content: [] }, { expanded: false, isPartial: true }, plainTheme, ctx),
		);
		expect(running.at(-1)).toBe("Elapsed 1.2s");
		// The row redraws itself every second while the call runs.
		vi.advanceTimersByTime(2_000);
		expect(ctx.invalidate).toHaveBeenCalledTimes(2);
		clock += 1_000;
		const later = lines(
			r.renderResult(text("partial output"), { expanded: false, isPartial: true }, plainTheme, ctx),
		);
		expect(later).toEqual(["partial output", "Elapsed 2.2s"]);
		clock += 1_000;
		const done = lines(
			r.renderResult(
				{ ...text("out"), details: { elapsedMs: 3_240 } },
				{ expanded: false, isPartial: false },
				plainTheme,
				ctx,
			),
		);
		expect(done).toEqual(["out", "Took 3.2s"]);
		vi.advanceTimersByTime(5_000);
		expect(ctx.invalidate).toHaveBeenCalledTimes(2);
	});

	it("shows Took for a failure, from keel's elapsedMs or the row's own clock", () => {
		const r = createRenderers("write", now);
		const ctx = context({ isError: true });
		r.renderCall({ path: "a.txt", content: "x" }, plainTheme, ctx);
		clock += 40;
		const failed = {
			...text("[NOT_READ] a.txt exists and has not been read in this session; read it first."),
			details: { error: { code: "NOT_READ" }, elapsedMs: 2.5 },
		};
		const out = lines(r.renderResult(failed, { expanded: false, isPartial: false }, plainTheme, ctx));
		expect(out[0]).toMatch(/^\[NOT_READ\] a\.txt/);
		expect(out.at(-1)).toBe("Took 3ms");
		// Without keel's details (pi's own error, e.g. a schema failure) the row's clock is used.
		const ctx2 = context({ isError: true });
		r.renderCall({}, plainTheme, ctx2);
		clock += 1_500;
		const plain = lines(
			r.renderResult(text("Validation failed"), { expanded: false, isPartial: false }, plainTheme, ctx2),
		);
		expect(plain).toEqual(["Validation failed", "Took 1.5s"]);
	});

	it("an error arriving while partial still ends the timer", () => {
		const r = createRenderers("bash", now);
		const ctx = context();
		r.renderCall({ command: "x" }, plainTheme, ctx);
		r.renderResult({ content: [] }, { expanded: false, isPartial: true }, plainTheme, ctx);
		expect(ctx.state.timer).toBeDefined();
		ctx.isError = true;
		const out = lines(
			r.renderResult(
				text("[ABORTED] Command aborted"),
				{ expanded: false, isPartial: true },
				plainTheme,
				ctx,
			),
		);
		expect(out.at(-1)).toMatch(/^Took /);
		expect(ctx.state.timer).toBeUndefined();
	});
});

type Spied =
	| "slice"
	| "substring"
	| "substr"
	| "split"
	| "replace"
	| "replaceAll"
	| "concat"
	| "padEnd"
	| "repeat";

/**
 * Run `fn` and report how many characters copying String methods took out of strings longer than
 * PREVIEW_CHARS (a split counts the whole string), plus anything that large handed to JSON.stringify.
 */
function copiedFromLarge(fn: () => void): number {
	const methods: Spied[] = [
		"slice",
		"substring",
		"substr",
		"split",
		"replace",
		"replaceAll",
		"concat",
		"padEnd",
		"repeat",
	];
	const proto = String.prototype as unknown as Record<Spied, (...a: unknown[]) => unknown>;
	const originals = methods.map((m) => proto[m]);
	const stringify = JSON.stringify;
	let copied = 0;
	methods.forEach((m, i) => {
		proto[m] = function (this: string, ...args: unknown[]) {
			const out = originals[i].apply(this, args);
			if (this.length > PREVIEW_CHARS) copied += Array.isArray(out) ? this.length : String(out).length;
			return out;
		};
	});
	JSON.stringify = ((v: unknown, ...rest: never[]) => {
		const out = stringify(v, ...rest);
		if ((out?.length ?? 0) > PREVIEW_CHARS) copied += out.length;
		return out;
	}) as typeof JSON.stringify;
	try {
		fn();
	} finally {
		methods.forEach((m, i) => {
			proto[m] = originals[i];
		});
		JSON.stringify = stringify;
	}
	return copied;
}

describe("bounded previews", () => {
	it("a 5 MB write argument: the collapsed call copies at most 8,192 characters and stays small", () => {
		const content = big();
		expect(content.length).toBeGreaterThan(5_000_000);
		let out: string[] = [];
		const copied = copiedFromLarge(() => {
			out = callLines("write", { path: "big.txt", content }, false, plainTheme);
		});
		expect(copied).toBeLessThanOrEqual(PREVIEW_CHARS);
		expect(out[0]).toBe("write big.txt (65536 lines, 5.0M chars)");
		expect(out.length).toBeLessThanOrEqual(8);
		expect(out.at(-1)).toBe("… 65530 more lines");
		expect(out.join("\n").length).toBeLessThan(1_000);
	});

	it("the same holds for file queries, edits, bash commands and unknown tools", () => {
		const s = big();
		// [tool, args, how many 5 MB strings the args hold]
		const cases: [string, unknown, number][] = [
			[
				"file",
				{
					queries: [
						{ type: "write", path: "a", content: s },
						{ type: "edit", path: "b", edits: [{ oldText: s, newText: s }] },
					],
				},
				3,
			],
			["edit", { path: "a", edits: [{ oldText: s, newText: s }] }, 2],
			["bash", { command: s }, 1],
			["python", { code: s }, 1],
			["grep", { pattern: s, path: s }, 2],
			["mystery", { blob: s, n: 1 }, 1],
		];
		for (const [tool, args, strings] of cases) {
			let out: string[] = [];
			const copied = copiedFromLarge(() => {
				out = callLines(tool, args, false, plainTheme);
			});
			expect(copied, tool).toBeLessThanOrEqual(PREVIEW_CHARS * strings);
			expect(out.join("\n").length, tool).toBeLessThan(2_000);
		}
	});

	it("collapsed results copy at most 8,192 characters of a large output", () => {
		const s = big();
		for (const tool of ["read", "bash", "grep", "edit"]) {
			let out: string[] = [];
			const result = { ...text(s), details: { diff: s } };
			const copied = copiedFromLarge(() => {
				out = resultLines(tool, result, { expanded: false, isPartial: false, isError: false }, plainTheme);
			});
			expect(copied, tool).toBeLessThanOrEqual(PREVIEW_CHARS);
			expect(out.length, tool).toBeLessThanOrEqual(15);
		}
	});

	it("previews never split a surrogate pair and count lines without splitting", () => {
		const s = `${"a".repeat(PREVIEW_CHARS - 1)}😀tail`;
		expect(headPreview(s).text.length).toBe(PREVIEW_CHARS - 1);
		expect(tailPreview(`😀${"b".repeat(PREVIEW_CHARS - 1)}`).text.startsWith("b")).toBe(true);
		expect([
			countLines(""),
			countLines("a"),
			countLines("a\n"),
			countLines("a\nb"),
			countLines("\n\n"),
		]).toEqual([0, 1, 1, 2, 2]);
	});

	it("the call row is computed once per args object, not on every redraw", () => {
		const r = createRenderers("write", () => 0);
		const args = { path: "big.txt", content: big() };
		const ctx = context();
		const scans = () => {
			let n = 0;
			const indexOf = String.prototype.indexOf;
			String.prototype.indexOf = function (this: string, ...a: [string, number?]) {
				if (this.length > PREVIEW_CHARS) n++;
				return indexOf.apply(this, a);
			};
			try {
				r.renderCall(args, plainTheme, ctx);
			} finally {
				String.prototype.indexOf = indexOf;
			}
			return n;
		};
		expect(scans()).toBeGreaterThan(0);
		expect(scans()).toBe(0);
		// A new args object (the model streamed more) is previewed afresh.
		r.renderCall({ ...args }, plainTheme, ctx);
	});
});

describe("expansion", () => {
	const twenty = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");

	it("collapsed call rows show a few lines; expanded rows show all", () => {
		const collapsed = callLines("write", { path: "a.txt", content: twenty }, false, plainTheme);
		expect(collapsed).toEqual([
			"write a.txt (20 lines, 150 chars)",
			"line 1",
			"line 2",
			"line 3",
			"line 4",
			"line 5",
			"line 6",
			"… 14 more lines",
		]);
		const expanded = callLines("write", { path: "a.txt", content: twenty }, true, plainTheme);
		expect(expanded.slice(1)).toEqual(twenty.split("\n"));
	});

	it("results expand to the full text, and the renderer wraps instead of truncating", () => {
		const o = { expanded: false, isPartial: false, isError: false };
		expect(resultLines("read", text(twenty), o, plainTheme)).toHaveLength(7);
		expect(resultLines("read", text(twenty), { ...o, expanded: true }, plainTheme)).toEqual(
			twenty.split("\n"),
		);
		const tail = resultLines("bash", text(twenty), o, plainTheme);
		expect(tail[0]).toBe("… 14 earlier lines");
		expect(tail.at(-1)).toBe("line 20");
		const r = createRenderers("read", () => 0);
		const view = r.renderResult(
			text("y".repeat(50)),
			{ expanded: true, isPartial: false },
			plainTheme,
			context(),
		);
		const y20 = `${"y".repeat(20)}\x1b[0m`;
		expect(view.render(20)).toEqual([y20, y20, "y".repeat(10), "Took 0ms"]);
	});

	it("an expanded 5 MB argument shows every line", () => {
		const out = callLines("write", { path: "big.txt", content: big() }, true, plainTheme);
		expect(out.length).toBe(1 + 65_536);
	});
});

describe("diffs", () => {
	it("edit results show the diff with +/- counts", () => {
		const diff = " 1 alpha\n-2 beta\n+2 gamma";
		const out = resultLines(
			"edit",
			{ ...text("Successfully replaced 1 block(s) in notes.txt."), details: { diff, elapsedMs: 3 } },
			{ expanded: false, isPartial: false, isError: false },
			plainTheme,
		);
		expect(out).toEqual(["edited +1 -1", " 1 alpha", "-2 beta", "+2 gamma"]);
	});

	it("file results list each query with its diff and contentRef, failures marked", () => {
		const details = {
			results: [
				{
					type: "edit",
					path: "a",
					ok: true,
					summary: "edited a: 1 replacement(s)",
					diff: "-1 x\n+1 y",
					contentRef: "cr_1",
				},
				{ type: "write", path: "b", ok: false, summary: "write b failed: [WRITE_COLLISION]" },
			],
		};
		const out = resultLines(
			"file",
			{ ...text("…"), details },
			{ expanded: false, isPartial: false, isError: false },
			plainTheme,
		);
		expect(out).toEqual([
			"✓ edited a: 1 replacement(s)",
			"  contentRef cr_1",
			"  -1 x",
			"  +1 y",
			"✗ write b failed: [WRITE_COLLISION]",
		]);
		// A failed batch: the per-query results arrive inside the error's details.
		const failed = resultLines(
			"file",
			{
				...text("[WRITE_COLLISION] 1 of 2 queries failed."),
				details: { error: { code: "WRITE_COLLISION", details } },
			},
			{ expanded: false, isPartial: false, isError: true },
			plainTheme,
		);
		expect(failed).toEqual(["[WRITE_COLLISION] 1 of 2 queries failed.", ...out]);
	});

	it("a long diff is collapsed to its head and expands fully", () => {
		const diff = Array.from({ length: 40 }, (_, i) => `+${i + 1} new`).join("\n");
		const o = { expanded: false, isPartial: false, isError: false };
		const collapsed = resultLines("edit", { ...text("ok"), details: { diff } }, o, plainTheme);
		expect(collapsed.at(-1)).toBe("… 28 more diff lines");
		const expanded = resultLines(
			"edit",
			{ ...text("ok"), details: { diff } },
			{ ...o, expanded: true },
			plainTheme,
		);
		expect(expanded).toHaveLength(41);
	});
});

describe("errors", () => {
	const o = { expanded: false, isPartial: false, isError: true };

	it("show the [CODE] line first, then the end of a failed command's output", () => {
		const out = Array.from({ length: 30 }, (_, i) => `out ${i + 1}`).join("\n");
		const msg = `[COMMAND_FAILED] ${out}\n\nCommand exited with code 1`;
		const lines = resultLines("bash", text(msg), o, plainTheme);
		expect(lines[0]).toBe("[COMMAND_FAILED] out 1");
		expect(lines[1]).toBe("… 25 earlier lines");
		expect(lines.at(-1)).toBe("Command exited with code 1");
		expect(resultLines("bash", text(msg), { ...o, expanded: true }, plainTheme)).toHaveLength(32);
		const short = resultLines(
			"read",
			text("[NOT_FOUND] No such file: a.txt.\nCheck the path."),
			o,
			plainTheme,
		);
		expect(short).toEqual(["[NOT_FOUND] No such file: a.txt.", "Check the path."]);
	});

	it("copy at most 8,192 characters of a huge error text", () => {
		const s = `[COMMAND_FAILED] ${big()}`;
		for (const tool of ["bash", "read"]) {
			expect(
				copiedFromLarge(() => resultLines(tool, text(s), o, plainTheme)),
				tool,
			).toBeLessThanOrEqual(2 * PREVIEW_CHARS);
		}
	});
});
