/**
 * The diff of an edit's window is computed directly when its answer is forced (edit/line-changes.ts):
 * it must be exactly jsdiff's diffLines, run by run, on windows built to provoke ties (few distinct
 * lines, repeats, blank lines, "\r\n" and "\r" endings, no final newline), and the direct path must
 * actually be taken on the windows an ordinary edit makes.
 */
import { diffLines } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { forcedLineChanges, lineChanges } from "../../src/edit/line-changes.js";

const runs = (s: string, t: string) =>
	diffLines(s, t).map((c) => ({ value: c.value, added: c.added, removed: c.removed, count: c.count }));

const line = fc.constantFrom("a", "b", "c", "", "  a", "a\r", "x y");
const ending = fc.constantFrom("\n", "\n", "\n", "\r\n", "\r");
const block = (max: number) =>
	fc.array(fc.tuple(line, ending), { maxLength: max }).map((ls) => ls.map(([l, e]) => l + e).join(""));
const tail = fc.constantFrom("", "a", "b", "z");

describe("line changes of an edit window", () => {
	it("property: equal to jsdiff's diffLines on random texts, and on random edits of them", () => {
		let forced = 0;
		fc.assert(
			fc.property(
				block(12),
				tail,
				block(4),
				block(4),
				block(12),
				tail,
				(head, end, gone, come, rest, end2) => {
					const before = head + gone + rest + end;
					const after = head + come + rest + end2;
					expect(lineChanges(before, after)).toEqual(runs(before, after));
					const direct = forcedLineChanges(before, after);
					if (direct) {
						forced++;
						expect(direct).toEqual(runs(before, after));
					}
				},
			),
			{ numRuns: 4000 },
		);
		// Ties are common with so few distinct lines: the direct path must still answer often.
		expect(forced).toBeGreaterThan(400);
	});

	it("an edit's window (context, one changed line, context) takes the direct path", () => {
		const ctx = (from: number) =>
			Array.from({ length: 5 }, (_, i) => `// ${from + i} lorem ipsum\n`).join("");
		const before = `${ctx(15)}export const value = 41;\n${ctx(21)}`;
		const after = `${ctx(15)}export const value = 42;\n${ctx(21)}`;
		const direct = forcedLineChanges(before, after);
		expect(direct).toEqual(runs(before, after));
		expect(direct?.map((c) => [c.added, c.removed, c.count])).toEqual([
			[false, false, 5],
			[false, true, 1],
			[true, false, 1],
			[false, false, 5],
		]);
	});

	it("a window whose changed lines repeat a context line is left to jsdiff", () => {
		// "x" became "y" and a "b" came with it, beside the "b" below: which "b" is new is jsdiff's choice.
		expect(forcedLineChanges("x\nb\n", "y\nb\nb\n")).toBeUndefined();
		expect(lineChanges("x\nb\n", "y\nb\nb\n")).toEqual(runs("x\nb\n", "y\nb\nb\n"));
		expect(forcedLineChanges("x\n", "x\n")).toBeUndefined();
	});
});
