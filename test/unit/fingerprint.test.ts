/** Structural fingerprints (streaming, 32 hex chars) and bounded structural previews. */
import { describe, expect, it } from "vitest";
import { fingerprint, MAX_FINGERPRINT_DEPTH, structuralPreview } from "../../src/boundary/fingerprint.js";

const HEX32 = /^[0-9a-f]{32}$/;

describe("fingerprint", () => {
	it("is 32 lowercase hex chars for any value, and stable", () => {
		for (const v of [undefined, null, 0, "", [], {}, "x", { path: "a.txt", edits: [{ oldText: "a" }] }]) {
			expect(fingerprint(v)).toMatch(HEX32);
			expect(fingerprint(v)).toBe(fingerprint(v));
		}
	});

	it("ignores key order, at every depth", () => {
		const a = { path: "a.txt", edits: [{ oldText: "x", newText: "y" }], opts: { b: 1, a: 2 } };
		const b = { opts: { a: 2, b: 1 }, edits: [{ newText: "y", oldText: "x" }], path: "a.txt" };
		expect(fingerprint(a)).toBe(fingerprint(b));
	});

	it("tells distinct structures apart", () => {
		const values: unknown[] = [
			["ab"],
			["a", "b"],
			{ a: "1" },
			{ a: 1 },
			{ a: true },
			{ a: "true" },
			{ a: null },
			{ a: undefined },
			{},
			[],
			[[]],
			[{}],
			"",
			null,
			undefined,
			0,
			-0,
			"0",
			false,
			[1, 2],
			[2, 1],
			{ ab: "c" },
			{ a: "bc" },
			{ a: { b: "c" } },
			{ "a.b": "c" },
			[null],
			[undefined],
			"\uD800",
			"\uFFFD",
			new Uint8Array([1, 2]),
			[1, [2]],
			[[1], 2],
		];
		const prints = values.map(fingerprint);
		expect(new Set(prints).size).toBe(values.length);
	});

	it("hashes a 20 MB string argument without JSON serialisation", () => {
		const big = "x".repeat(20 * 1024 * 1024);
		// toJSON throws: any JSON.stringify of the value (or of a parent) would fail the call.
		const args = {
			path: "big.txt",
			content: big,
			toJSON() {
				throw new Error("serialised");
			},
		};
		const fp = fingerprint(args);
		expect(fp).toMatch(HEX32);
		// Content counts: one character more is another fingerprint.
		expect(fingerprint({ ...args, content: `${big}y` })).not.toBe(fp);
		expect(fingerprint({ ...args })).toBe(fp);
	});

	it("survives cycles, absurd depth and throwing getters without throwing", () => {
		const cyclic: Record<string, unknown> = { a: 1 };
		cyclic.self = cyclic;
		expect(fingerprint(cyclic)).toMatch(HEX32);
		const list: unknown[] = [1];
		list.push(list);
		expect(fingerprint(list)).toMatch(HEX32);
		expect(fingerprint(list)).not.toBe(fingerprint([1, []]));

		// 100,000 levels: recursion would overflow the stack; the walk stops at the depth limit.
		let deep: unknown = "leaf";
		for (let i = 0; i < 100_000; i++) deep = [deep];
		expect(fingerprint(deep)).toMatch(HEX32);
		let shallow: unknown = "leaf";
		for (let i = 0; i < MAX_FINGERPRINT_DEPTH - 1; i++) shallow = [shallow];
		let other: unknown = "leag";
		for (let i = 0; i < MAX_FINGERPRINT_DEPTH - 1; i++) other = [other];
		expect(fingerprint(shallow)).not.toBe(fingerprint(other));

		const getter = Object.defineProperty({}, "boom", {
			enumerable: true,
			get() {
				throw new Error("boom");
			},
		});
		expect(fingerprint(getter)).toMatch(HEX32);
		const { proxy, revoke } = Proxy.revocable({}, {});
		revoke();
		expect(fingerprint({ p: proxy })).toMatch(HEX32);
	});

	it("walks shared (acyclic) references each time, as their content", () => {
		const shared = { oldText: "a", newText: "b" };
		expect(fingerprint([shared, shared])).toBe(fingerprint([{ ...shared }, { ...shared }]));
	});
});

describe("structuralPreview", () => {
	it("shows keys, types, string lengths and array counts", () => {
		const args = {
			path: "src/a/b.ts..",
			edits: [
				{ oldText: "o".repeat(4000), newText: "n".repeat(10) },
				{ oldText: "o", newText: "n" },
			],
		};
		expect(structuralPreview(args)).toBe(
			"{path: str(12), edits: [2 × {oldText: str(4000), newText: str(10)}]}",
		);
		expect(structuralPreview([1, "ab", null, true, undefined])).toBe("[num, str(2), null, bool, undefined]");
		expect(structuralPreview([])).toBe("[]");
		expect(structuralPreview({})).toBe("{}");
	});

	it("never exceeds maxChars and never copies a long string", () => {
		const secret = "SECRET".repeat(100_000);
		const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`key${i}`, secret]));
		for (const max of [1, 5, 20, 200, 1000]) {
			const p = structuralPreview(wide, max);
			expect(p.length).toBeLessThanOrEqual(max);
			expect(p.endsWith("…")).toBe(true);
			expect(p).not.toContain("SECRET");
		}
		const longKey = { [secret]: 1 };
		expect(structuralPreview(longKey, 8192).length).toBeLessThan(100);
		expect(structuralPreview("x", 0)).toBe("");
		const emoji = { ["😀".repeat(50)]: 1 };
		for (let max = 1; max < 60; max++) {
			const p = structuralPreview(emoji, max);
			expect(p.length).toBeLessThanOrEqual(max);
			expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(p)).toBe(false);
		}
	});

	it("marks cycles and stops at depth", () => {
		const cyclic: Record<string, unknown> = { a: 1 };
		cyclic.self = cyclic;
		expect(structuralPreview(cyclic)).toBe("{a: num, self: <cycle>}");
		let deep: unknown = "leaf";
		for (let i = 0; i < 100_000; i++) deep = { d: deep };
		const p = structuralPreview(deep, 8192);
		expect(p).toContain("{…}");
		expect(p.length).toBeLessThanOrEqual(8192);
	});
});
