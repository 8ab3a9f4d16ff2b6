import { describe, expect, it } from "vitest";
import { truncateHead, truncateLine, truncateTail, utf8Tail } from "../../src/boundary/truncate.js";

describe("truncation never splits a character", () => {
	it("utf8Tail cuts on a character boundary", () => {
		const s = "é".repeat(10) + "😀".repeat(10);
		for (let max = 0; max < Buffer.byteLength(s); max++) {
			const t = utf8Tail(s, max);
			expect(t.includes("\uFFFD")).toBe(false);
			expect(Buffer.byteLength(t)).toBeLessThanOrEqual(max);
			expect(s.endsWith(t)).toBe(true);
		}
	});

	it("truncateLine keeps surrogate pairs whole", () => {
		const s = "😀".repeat(400);
		const r = truncateLine(s, 501);
		expect(r.wasTruncated).toBe(true);
		expect(r.text.replace("... [truncated]", "").length % 2).toBe(0);
	});

	it("head keeps whole lines within the byte limit", () => {
		const s = Array.from({ length: 100 }, (_, i) => `line ${i} ${"x".repeat(20)}`).join("\n");
		const r = truncateHead(s, { maxBytes: 300 });
		expect(r.truncated).toBe(true);
		expect(r.truncatedBy).toBe("bytes");
		expect(s.startsWith(r.content)).toBe(true);
		expect(Buffer.byteLength(r.content)).toBeLessThanOrEqual(300);
		expect(r.content.split("\n").length).toBe(r.outputLines);
	});

	it("tail keeps the last lines, and the tail of one huge line", () => {
		const r = truncateTail(`a\nb\n${"é".repeat(1000)}`, { maxBytes: 101 });
		expect(r.lastLinePartial).toBe(true);
		expect(r.content.includes("\uFFFD")).toBe(false);
		expect(Buffer.byteLength(r.content)).toBeLessThanOrEqual(101);
		const lines = truncateTail(Array.from({ length: 50 }, (_, i) => `${i}`).join("\n"), { maxLines: 10 });
		expect(lines.content.split("\n")).toEqual(Array.from({ length: 10 }, (_, i) => `${40 + i}`));
		expect(lines.truncatedBy).toBe("lines");
	});
});
