/** Diffs computed on the changed window only must still be true to the whole files. */
import { applyPatch } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderDiff, unifiedPatch } from "../../src/edit/diff.js";

const lines = fc.array(fc.constantFrom("a", "b", "c", "", "  x", "yy"), { minLength: 0, maxLength: 30 });

function edited(before: string[], at: number, del: number, ins: string[]): string[] {
	const out = [...before];
	out.splice(at, del, ...ins);
	return out;
}

/** The patch applies to give `b`; every numbered line of the rendered diff is the file's line. */
function expectTrueDiffs(a: string, b: string): void {
	expect(applyPatch(a, unifiedPatch("f", a, b))).toBe(b);
	const aLines = a.split("\n");
	const bLines = b.split("\n");
	for (const row of renderDiff(a, b).diff.split("\n")) {
		const m = /^([ +-])\s*(\d+) (.*)$/.exec(row);
		if (!m) continue;
		const [, sign, n, text] = m;
		expect(text).toBe(sign === "+" ? bLines[Number(n) - 1] : aLines[Number(n) - 1]);
	}
}

describe("diff window", () => {
	it("property: the patch applies to give the new text; every numbered line is the file's line", () => {
		fc.assert(
			fc.property(lines, fc.nat(), fc.nat(3), lines, fc.boolean(), (base, pos, del, ins, trailing) => {
				const at = base.length ? pos % (base.length + 1) : 0;
				const after = edited(base, at, del, ins.slice(0, 4));
				const nl = trailing ? "\n" : "";
				const a = base.join("\n") + (base.length ? nl : "");
				const b = after.join("\n") + (after.length ? nl : "");
				if (a === b) return;
				expectTrueDiffs(a, b);
			}),
			{ numRuns: 500 },
		);
	});

	it("property: texts longer than the chunked prefix/suffix comparison (16 Ki chars) diff the same", () => {
		const filler = fc.array(fc.constantFrom("alpha", "beta", "gamma", "", "  delta"), {
			minLength: 2000,
			maxLength: 9000,
		});
		fc.assert(
			fc.property(filler, fc.nat(), fc.nat(3), lines, fc.nat(), (base, pos, del, ins, pos2) => {
				const at = pos % (base.length + 1);
				const a = `${base.join("\n")}\n`;
				// Two changes (as a multi-edit makes): the window must span both, wherever they are.
				const once = edited(base, at, del, ins.slice(0, 4));
				const after = edited(once, pos2 % (once.length + 1), 1, ["changed again"]);
				const b = `${after.join("\n")}\n`;
				if (a === b) return;
				expectTrueDiffs(a, b);
			}),
			{ numRuns: 60 },
		);
	});

	it("a one-line change in a 100,000-line text shows that line with its real number", () => {
		const big = Array.from({ length: 100_000 }, (_, i) => `line ${i + 1}`);
		const a = `${big.join("\n")}\n`;
		const b = a.replace("line 50000\n", "LINE 50000\n");
		const { diff, firstChangedLine } = renderDiff(a, b);
		expect(firstChangedLine).toBe(50000);
		expect(diff).toMatch(/^-\s*50000 line 50000$/m);
		expect(diff).toMatch(/^\+\s*50000 LINE 50000$/m);
		expect(diff.split("\n").length).toBeLessThan(15);
		expect(unifiedPatch("f", a, b)).toContain("@@ -49997,7 +49997,7 @@");
	});
});
