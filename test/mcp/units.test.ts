/** The adapter's pure pieces: JSON-safe details, result mapping, bounded progress. */
import { describe, expect, it } from "vitest";
import { PROGRESS_MESSAGE_CHARS, progressForwarder } from "../../src/adapters/mcp/progress.js";
import { jsonSafe, toCallToolResult } from "../../src/adapters/mcp/results.js";

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
		expect(failed.structuredContent).toEqual({
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
