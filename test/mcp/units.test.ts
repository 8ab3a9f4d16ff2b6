/** The adapter's pure pieces: JSON-safe details, result mapping, bounded progress. */

import type { ProgressToken, ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { jsonSafe } from "../../src/adapters/binding.js";
import { boundResult } from "../../src/adapters/mcp/bound.js";
import { withoutClientControl } from "../../src/adapters/mcp/client-control.js";
import { PROGRESS_MESSAGE_CHARS, ProgressReporter } from "../../src/adapters/mcp/progress.js";
import { toCallToolResult } from "../../src/adapters/mcp/results.js";
import { idOfOversized } from "../../src/adapters/mcp/stdio-transport.js";

function progressForwarder(
	token: ProgressToken,
	send: (n: ServerNotification) => Promise<void>,
	now: () => number,
) {
	const r = new ProgressReporter(token, send, { now });
	return (partial: Parameters<ProgressReporter["update"]>[0]) => r.update(partial);
}

describe("results", () => {
	it("makes details JSON-safe: bigints, undefined, cycles", () => {
		expect(jsonSafe({ size: 12n, huge: 2n ** 70n, gone: undefined, fn: () => 1 })).toEqual({
			size: 12,
			huge: (2n ** 70n).toString(),
		});
		const cyclic: Record<string, unknown> = {};
		cyclic.self = cyclic;
		expect(jsonSafe(cyclic)).toEqual({ unserializable: expect.any(String) });
		expect(jsonSafe(undefined)).toBeNull();
	});

	it("maps success to content + _meta and failure to isError + structuredContent", () => {
		const ok = toCallToolResult({
			ok: true,
			content: [
				{ type: "text", text: "hi" },
				{ type: "image", data: "AAAA", mimeType: "image/png" },
			],
			details: { ino: 5n },
			elapsedMs: 1.5,
		});
		expect(ok).toEqual({
			content: [
				{ type: "text", text: "hi" },
				{ type: "image", data: "AAAA", mimeType: "image/png" },
			],
			_meta: { "keel/elapsedMs": 1.5, "keel/details": { ino: 5 } },
		});
		const failed = toCallToolResult({
			ok: false,
			error: { code: "NOT_FOUND", message: "No such file: x.", retry: "retarget", path: "x" },
			elapsedMs: 0.2,
		});
		expect(failed.isError).toBe(true);
		expect(failed.content).toEqual([{ type: "text", text: "[NOT_FOUND] No such file: x." }]);
		// Codex forwards only structuredContent: it alone says that the call failed, how, and what to do.
		expect(failed.structuredContent).toEqual({
			ok: false,
			code: "NOT_FOUND",
			message: "No such file: x.",
			retry: "retarget",
			error: { code: "NOT_FOUND", message: "No such file: x.", retry: "retarget", path: "x" },
			elapsedMs: 0.2,
		});
	});
});

describe("progress", () => {
	it("sends at most one notification per interval, with the tail of the output", () => {
		let now = 0;
		const sent: { progress: number; message?: string }[] = [];
		const forward = progressForwarder(
			"tok",
			async (n) => {
				sent.push(n.params as { progress: number; message?: string });
			},
			() => now,
		);
		const update = (text: string) => forward({ content: [{ type: "text", text }] });
		update("first");
		now = 100;
		update("dropped: too soon");
		now = 300;
		update(`${"x".repeat(10_000)}😀end`);
		expect(sent.map((s) => s.progress)).toEqual([1, 2]);
		expect(sent[0].message).toBe("first");
		expect(sent[1].message!.length).toBeLessThanOrEqual(PROGRESS_MESSAGE_CHARS);
		expect(sent[1].message!.endsWith("😀end")).toBe(true);
	});

	it("never cuts a surrogate pair in half", () => {
		let now = 0;
		const sent: string[] = [];
		const forward = progressForwarder(
			1,
			async (n) => {
				sent.push((n.params as { message: string }).message);
			},
			() => (now += 1000),
		);
		// The cut falls between the two halves of an emoji.
		forward({ content: [{ type: "text", text: `a${"😀".repeat(PROGRESS_MESSAGE_CHARS)}` }] });
		const m = sent[0];
		expect(m.length).toBeLessThanOrEqual(PROGRESS_MESSAGE_CHARS);
		const first = m.charCodeAt(0);
		expect(first >= 0xdc00 && first <= 0xdfff).toBe(false);
	});
});

describe("result bound", () => {
	const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
	it("keeps a result under the limit as it is", () => {
		const r = { content: [{ type: "text" as const, text: "small" }] };
		expect(boundResult(r, 1000)).toBe(r);
	});

	it("cuts text and drops images and details that do not fit, and says what it left out", () => {
		const r = {
			content: [
				{ type: "text" as const, text: "head" },
				{ type: "image" as const, data: "A".repeat(60_000), mimeType: "image/png" },
				{ type: "text" as const, text: `${"é\u0001".repeat(40_000)}` },
			],
			_meta: { "keel/details": { big: "x".repeat(50_000) }, "keel/elapsedMs": 1 },
		};
		const max = 40_000;
		const b = boundResult(r, max);
		expect(size(b)).toBeLessThanOrEqual(max);
		expect(b.content[0]).toEqual({ type: "text", text: "head" });
		expect(b.content.some((c) => c.type === "image")).toBe(false);
		const text = b.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
		expect(text).toContain("image (image/png");
		expect(text).toMatch(/left out: the call's details, an image, \d+ characters of text/);
		expect(b._meta?.["keel/elapsedMs"]).toBe(1);
	});
});

describe("client control fields", () => {
	it("strips wait_for_previous unless the tool declares it; keeps everything else", () => {
		expect(withoutClientControl({ path: "a", wait_for_previous: true }, new Set(["path"]))).toEqual({
			path: "a",
		});
		expect(withoutClientControl({ pathh: "a", wait_for_previous: false }, new Set(["path"]))).toEqual({
			pathh: "a",
		});
		const declared = { wait_for_previous: 1 };
		expect(withoutClientControl(declared, new Set(["wait_for_previous"]))).toBe(declared);
		expect(withoutClientControl("not an object", undefined)).toBe("not an object");
	});
});

describe("an oversized stdio line's id", () => {
	it("is read off the end (the SDK puts id last) or the start, never from inside", () => {
		expect(
			idOfOversized('{"method":"tools/call","params":{"a":"', '","id":"x"},"jsonrpc":"2.0","id":17}'),
		).toBe(17);
		expect(idOfOversized('{"jsonrpc":"2.0","id":"abc","method":"x","params":{"', 'aaaa"}}')).toBe("abc");
		expect(idOfOversized('{"method":"x","params":{"text":"', 'fake \\"id\\": 5 inside"}}')).toBeNull();
	});
});
