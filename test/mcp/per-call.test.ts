/**
 * The MCP per-call path's shortcuts. jsonSafe hands back a value that already is plain
 * JSON as it is (no stringify and parse per call for an edit's details); anything JSON would change
 * is still copied the JSON way. boundResult estimates a result's size by walking it; the estimate
 * must never be below the real size, or a result over the limit would reach the client whole.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { jsonSafe } from "../../src/adapters/binding.js";
import { boundResult } from "../../src/adapters/mcp/bound.js";
import { META_DETAILS } from "../../src/adapters/mcp/results.js";

const roundTrip = (v: unknown) => JSON.parse(JSON.stringify(v) ?? "null");

describe("jsonSafe", () => {
	it("returns plain JSON itself", () => {
		const details = {
			diff: "+ 1 a\n- 1 b",
			firstChangedLine: 1,
			matched: ["exact"],
			nested: { ok: true, none: null },
		};
		expect(jsonSafe(details)).toBe(details);
	});

	it.each([
		["a bigint", { size: 12n }],
		["undefined in an object", { a: 1, gone: undefined }],
		["undefined in an array", [1, undefined, 3]],
		["a function", { fn: () => 1 }],
		["NaN and Infinity", { a: Number.NaN, b: [Number.POSITIVE_INFINITY] }],
		["a Date (toJSON)", { at: new Date(0) }],
		["a class instance", { m: new Map([[1, 2]]) }],
		["a symbol key", { [Symbol("s")]: 1, a: 2 }],
		["deep nesting", JSON.parse(`${"[".repeat(40)}1${"]".repeat(40)}`).concat([undefined])],
	])("copies what JSON would change: %s", (_label, value) => {
		const out = jsonSafe(value);
		expect(out).not.toBe(value);
		const expected = typeof (value as { size?: unknown }).size === "bigint" ? { size: 12 } : roundTrip(value);
		expect(out).toEqual(expected);
		expect(JSON.stringify(out)).toBe(JSON.stringify(expected));
	});
});

describe("boundResult's size walk", () => {
	const bytes = (r: CallToolResult) => Buffer.byteLength(JSON.stringify(r));

	it.each([
		["long ASCII details", { diff: "x".repeat(3000) }],
		["control characters (6 bytes each in JSON)", { diff: "\u0001".repeat(600) }],
		[
			"many short keys and numbers",
			Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i * 1e15])),
		],
		["nested arrays", { matched: Array.from({ length: 100 }, () => ["exact", null, true, -1.5e300]) }],
		["astral characters", { diff: "😀".repeat(500) }],
	])("a result just over the limit is cut, never sent whole: %s", (_label, details) => {
		const result: CallToolResult = {
			content: [{ type: "text", text: "ok" }],
			_meta: { [META_DETAILS]: details },
		};
		const max = bytes(result) - 1;
		const out = boundResult(result, max);
		expect(out).not.toBe(result);
		expect(bytes(out)).toBeLessThanOrEqual(max);
		// At the real size it passes untouched.
		expect(boundResult(result, bytes(result))).toBe(result);
	});
});
