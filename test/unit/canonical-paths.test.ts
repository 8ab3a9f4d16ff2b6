/**
 * The guard's containment test for canonical paths is a prefix test (safety/canonical-paths.ts);
 * it must agree with the path-arithmetic test (isWithin, posix.relative) on every canonical pair,
 * including names that share a prefix ("/w/a" and "/w/ab"), names that look like ".." and the root.
 */
import { posix } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { below, isWithin, under } from "../../src/safety/canonical-paths.js";

const canonical = fc
	.array(fc.constantFrom("a", "ab", "b", "..a", ".x", "a.", "…"), { maxLength: 5 })
	.map((parts) => `/${parts.join("/")}`);

describe("containment of canonical paths", () => {
	it("property: under and below agree with isWithin and posix.relative", () => {
		fc.assert(
			fc.property(canonical, canonical, (parent, child) => {
				expect(under(parent, child)).toBe(isWithin(parent, child));
				if (under(parent, child)) expect(below(parent, child)).toBe(posix.relative(parent, child));
			}),
			{ numRuns: 5000 },
		);
	});

	it("a sibling that shares a prefix is not inside", () => {
		expect(under("/w/a", "/w/ab")).toBe(false);
		expect(under("/w/a", "/w/a/b")).toBe(true);
		expect(under("/", "/anything")).toBe(true);
		expect(below("/", "/x/y")).toBe("x/y");
		expect(below("/w", "/w")).toBe("");
	});
});
