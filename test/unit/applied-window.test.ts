/**
 * An applied edit is kept as the original plus its splices (a 10 MB edit must not copy
 * the file into new strings just to encode and diff it). What it encodes and the diff it renders
 * from its own regions must be exactly what the whole-text versions give, on random files with
 * mixed endings, edits at the start and end, edits that add and remove lines, and a BOM.
 */
import { describe, expect, it } from "vitest";
import { applyEdits } from "../../src/edit/apply.js";
import { renderDiff, renderEditDiff, unifiedEditPatch, unifiedPatch } from "../../src/edit/diff.js";
import { encodeUtf8 } from "../../src/safety/encoding.js";

/** A small deterministic PRNG, so a failure names its seed. */
function rng(seed: number): () => number {
	let s = seed >>> 0;
	return () => {
		s = (s * 1664525 + 1013904223) >>> 0;
		return s / 2 ** 32;
	};
}

function randomFile(r: () => number): string {
	const endings = ["\n", "\r\n", "\n", "\r\n", "\r"];
	const lines: string[] = [];
	const n = 1 + Math.floor(r() * 40);
	for (let i = 0; i < n; i++) {
		const word = ["alpha", "beta", "γάμμα", "delta 😀", "", "  indented"][Math.floor(r() * 6)];
		lines.push(`${word} ${i}${endings[Math.floor(r() * endings.length)]}`);
	}
	return r() < 0.3 ? lines.join("").replace(/(\r\n|\r|\n)$/, "") : lines.join("");
}

describe("an applied edit encodes and diffs from its splices exactly as from whole texts", () => {
	it("over 600 random files and edits", () => {
		let checked = 0;
		for (let seed = 1; seed <= 600; seed++) {
			const r = rng(seed);
			const file = randomFile(r);
			const lf = file.replace(/\r\n|\r/g, "\n");
			const lines = lf.split("\n");
			const at = Math.floor(r() * lines.length);
			const len = 1 + Math.floor(r() * 3);
			const oldText = lines.slice(at, at + len).join("\n");
			if (!oldText || lf.indexOf(oldText) !== lf.lastIndexOf(oldText)) continue;
			const newText = ["", "new line", "one\ntwo\nthree", `${oldText}\nadded`, "x"][Math.floor(r() * 5)];
			let applied: ReturnType<typeof applyEdits>;
			try {
				applied = applyEdits(file, [{ oldText, newText, matchMode: "exact" }], "f.txt");
			} catch {
				continue; // NO_CHANGE and the like: nothing to compare
			}
			for (const bom of [false, true]) {
				const want = encodeUtf8(applied.text, bom);
				expect(applied.encode(bom)).toEqual(want);
				// Into a spare buffer: used when the bytes fit (every byte overwritten), else a new one.
				const spare = Buffer.alloc(want.length + Math.floor(r() * 3) - 1, 0xaa);
				const into = applied.encode(bom, spare);
				expect(into).toEqual(want);
				expect(into.buffer === spare.buffer).toBe(spare.length >= want.length);
			}
			expect(renderEditDiff(applied), `seed ${seed}`).toEqual(renderDiff(applied.beforeLf, applied.afterLf));
			expect(unifiedEditPatch("f.txt", applied), `seed ${seed}`).toBe(
				unifiedPatch("f.txt", applied.beforeLf, applied.afterLf),
			);
			checked++;
		}
		expect(checked).toBeGreaterThan(200);
	});

	it("two edits far apart in one file", () => {
		const file = `${Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\r\n")}\r\n`;
		const applied = applyEdits(
			file,
			[
				{ oldText: "line 2\nline 3", newText: "line 2\nLINE 3\nmore" },
				{ oldText: "line 47", newText: "" },
			],
			"f.txt",
		);
		expect(applied.encode(false).toString()).toBe(applied.text);
		expect(applied.text).toContain("LINE 3\r\nmore\r\n");
		expect(renderEditDiff(applied)).toEqual(renderDiff(applied.beforeLf, applied.afterLf));
		expect(unifiedEditPatch("f.txt", applied)).toBe(unifiedPatch("f.txt", applied.beforeLf, applied.afterLf));
	});
});
