import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { KeelError } from "../../src/boundary/errors.js";
import { applyEdits } from "../../src/edit/apply.js";

function codeOf(fn: () => unknown): string | undefined {
	try {
		fn();
	} catch (e) {
		return e instanceof KeelError ? e.code : "not-keel";
	}
	return undefined;
}

describe("applyEdits", () => {
	it("splices into CRLF text and keeps every untouched ending", () => {
		const original = "a\r\nb\nc\r\nd\n";
		const r = applyEdits(original, [{ oldText: "c\nd", newText: "C\nD" }], "f");
		// the replaced region's one newline was CRLF → the new newline is CRLF too
		expect(r.text).toBe("a\r\nb\nC\r\nD\n");
		// a region with mixed endings → the file's dominant ending (a tie here → LF)
		const mixed = applyEdits(original, [{ oldText: "a\nb\nc", newText: "A\nB\nC" }], "f");
		expect(mixed.text).toBe("A\nB\nC\r\nd\n");
		const r2 = applyEdits("x\r\ny\r\nz\n", [{ oldText: "x\ny", newText: "X\nY\nW" }], "f");
		expect(r2.text).toBe("X\r\nY\r\nW\r\nz\n");
	});

	it("new lines inside a single-line anchor take the file's dominant ending", () => {
		const r = applyEdits("one\r\ntwo\r\nthree\n", [{ oldText: "two", newText: "2\n2b" }], "f");
		expect(r.text).toBe("one\r\n2\r\n2b\r\nthree\n");
	});

	it("matches all edits against the original, not incrementally", () => {
		const r = applyEdits(
			"alpha beta gamma",
			[
				{ oldText: "alpha", newText: "beta" },
				{ oldText: "beta", newText: "delta" },
			],
			"f",
		);
		expect(r.text).toBe("beta delta gamma");
	});

	it("refuses not-found, ambiguous, overlapping, empty and no-op edits", () => {
		expect(codeOf(() => applyEdits("abc", [{ oldText: "x", newText: "y" }], "f"))).toBe("NO_MATCH");
		expect(codeOf(() => applyEdits("aa", [{ oldText: "a", newText: "b" }], "f"))).toBe("AMBIGUOUS_MATCH");
		expect(
			codeOf(() =>
				applyEdits(
					"abcd",
					[
						{ oldText: "abc", newText: "1" },
						{ oldText: "cd", newText: "2" },
					],
					"f",
				),
			),
		).toBe("EDIT_OVERLAP");
		expect(codeOf(() => applyEdits("abc", [{ oldText: "", newText: "y" }], "f"))).toBe("INVALID_ARGS");
		expect(codeOf(() => applyEdits("abc", [{ oldText: "b", newText: "b" }], "f"))).toBe("NO_CHANGE");
	});

	it("a not-found error points at the lines that look like the anchor", () => {
		try {
			applyEdits(
				"x\n  function foo() {\n}\n",
				[{ oldText: "function foo() {\n\treturn 1;", newText: "" }],
				"f",
			);
			expect.unreachable();
		} catch (e) {
			expect((e as KeelError).message).toContain("at lines 2-3");
		}
	});

	it("property: an edit followed by its inverse restores the exact bytes", () => {
		const line = fc.stringMatching(/^[a-z \t\u00e9\u{1F600}]{0,12}$/u);
		const ending = fc.constantFrom("\n", "\r\n");
		const file = fc.array(fc.tuple(line, ending), { minLength: 2, maxLength: 12 });
		fc.assert(
			fc.property(file, fc.nat(), fc.stringMatching(/^[A-Z]{1,6}$/), (lines, pick, marker) => {
				const text = lines.map(([l, e]) => l + e).join("");
				const i = pick % lines.length;
				const anchor = `${lines[i][0]}${marker}`;
				// make the anchor unique by inserting the marker into line i
				const seeded = lines.map(([l, e], k) => (k === i ? anchor : l) + e).join("");
				const forward = applyEdits(seeded, [{ oldText: anchor, newText: `${anchor}\nadded line` }], "f");
				const back = applyEdits(forward.text, [{ oldText: `${anchor}\nadded line`, newText: anchor }], "f");
				expect(back.text).toBe(seeded);
				expect(text.length).toBeGreaterThan(0);
			}),
			{ numRuns: 300 },
		);
	});

	it("reports the rung each edit matched on, in input order", () => {
		const r = applyEdits(
			"a = 1\nb = “x”\nif c:\n\td()\n",
			[
				{ oldText: "a = 1", newText: "a = 2" },
				{ oldText: 'b = "x"', newText: 'b = "y"' },
				{ oldText: "if c:\n    d()", newText: "if c:\n    e()" },
			],
			"f",
		);
		expect(r.matched).toEqual(["exact", "normalized", "indentation"]);
		expect(r.text).toBe('a = 2\nb = "y"\nif c:\n\te()\n');
	});

	it("the first rung with a match decides: one match lands, several are AMBIGUOUS_MATCH", () => {
		// exact finds one: the normalized twin elsewhere does not make it ambiguous
		const file = "s = 'a'\ns = ‘a’\n";
		expect(applyEdits(file, [{ oldText: "s = 'a'", newText: "s = 1" }], "f").text).toBe("s = 1\ns = ‘a’\n");
		// no exact match, two normalized ones: refused, even though a later rung is never tried
		expect(codeOf(() => applyEdits("s = ’a’\ns = ‘a’\n", [{ oldText: "s = 'a'", newText: "x" }], "f"))).toBe(
			"AMBIGUOUS_MATCH",
		);
	});

	it('matchMode "exact" is the exact rung only; "normalized" starts at the second rung', () => {
		const drifted = { oldText: "if c:\n    d()", newText: "if c:\n    e()" };
		const file = "if c:\n\td()\n";
		expect(codeOf(() => applyEdits(file, [{ ...drifted, matchMode: "exact" }], "f"))).toBe("NO_MATCH");
		expect(applyEdits(file, [{ ...drifted, matchMode: "normalized" }], "f").matched).toEqual(["indentation"]);
		// exact would find one, normalized finds two
		const twice = "x = 'a'\nx = ‘a’\n";
		expect(
			codeOf(() => applyEdits(twice, [{ oldText: "x = 'a'", newText: "y", matchMode: "normalized" }], "f")),
		).toBe("AMBIGUOUS_MATCH");
	});

	it("replaceAll takes every match of the first rung that has one", () => {
		const r = applyEdits(
			"\tf(1)\n  g()\n\tf(1)\n",
			[{ oldText: "    f(1)", newText: "    f(2)", replaceAll: true }],
			"f",
		);
		expect(r.text).toBe("\tf(2)\n  g()\n\tf(2)\n");
		expect(r.matched).toEqual(["indentation"]);
	});

	it("a tolerant match keeps the file's bytes on the lines the model repeated unchanged", () => {
		const file = "x = “q”   \r\n\ty = 1\r\n\tz = 2\r\n";
		const r = applyEdits(
			file,
			[{ oldText: 'x = "q"\n    y = 1\n    z = 2', newText: 'x = "q"\n    y = 10\n    z = 2' }],
			"f",
		);
		expect(r.text).toBe("x = “q”   \r\n\ty = 10\r\n\tz = 2\r\n");
	});

	it("a tolerant match may not split a character either", () => {
		expect(codeOf(() => applyEdits("a “😀” b\n", [{ oldText: 'a "😀" b', newText: "\uD83D" }], "f"))).toBe(
			"ENCODING_UNSAFE",
		);
		expect(applyEdits("a “😀” b\n", [{ oldText: 'a "😀" b', newText: "ok 😀" }], "f").text).toBe("ok 😀\n");
	});

	it("NO_MATCH names an elided anchor line", () => {
		try {
			applyEdits("a()\nb()\nc()\n", [{ oldText: "a()\n// ...\nc()", newText: "x" }], "f");
			expect.unreachable();
		} catch (e) {
			expect((e as KeelError).code).toBe("NO_MATCH");
			expect((e as KeelError).message).toContain('"// ..."');
		}
	});
});
