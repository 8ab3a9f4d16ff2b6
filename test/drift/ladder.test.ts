/**
 * The ladder through the tools (what a host sees of drift) and its cost: linear in the file even
 * for a long anchor made of lines the file repeats everywhere.
 */
import { readFile, writeFile } from "node:fs/promises";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { applyEdits } from "../../src/edit/apply.js";
import { kmp } from "../../src/edit/search.js";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

let pi: Session;
let unified: Session;
const ws = useWorkspace({ prefix: "keel-ladder-", shared: true });
beforeAll(async () => {
	pi = ws().session;
	unified = await ws().open({ profile: "unified" });
});

describe("what the tools report", () => {
	it("pi edit: details.matched per edit, and a note in the text only when an edit drifted", async () => {
		await writeFile(ws().path("e.go"), "func f() {\n\treturn\n}\n");
		const exact = await pi.call("edit", {
			path: "e.go",
			edits: [{ oldText: "func f()", newText: "func g()" }],
		});
		expect(exact.ok && exact.content[0]).toEqual({
			type: "text",
			text: "Successfully replaced 1 block(s) in e.go.",
		});
		expect(exact.ok && exact.details).toMatchObject({ matched: ["exact"] });
		const drifted = await pi.call("edit", {
			path: "e.go",
			edits: [{ oldText: "func g() {\n    return\n}", newText: "func g() {\n    return 1\n}" }],
		});
		expect(drifted.ok && drifted.details).toMatchObject({ matched: ["indentation"] });
		expect(drifted.ok && (drifted.content[0] as { text: string }).text).toContain("indentation was ignored");
		expect(await readFile(ws().path("e.go"), "utf8")).toBe("func g() {\n\treturn 1\n}\n");
	});

	it('file tool: the ladder by default; matchMode "exact" refuses drift', async () => {
		await writeFile(ws().path("f.go"), "func f() {\n\treturn\n}\n");
		const edit = { oldText: "    return", newText: "    return 2" };
		const strict = await unified.call("file", {
			queries: [{ type: "edit", path: "f.go", edits: [{ ...edit, matchMode: "exact" }] }],
		});
		expect(!strict.ok && strict.error.code).toBe("NO_MATCH");
		const r = await unified.call("file", { queries: [{ type: "edit", path: "f.go", edits: [edit] }] });
		expect(r.ok).toBe(true);
		const result = (r as { details: { results: Array<{ matched: string[]; summary: string }> } }).details
			.results[0];
		expect(result.matched).toEqual(["indentation"]);
		expect(result.summary).toContain("(indentation)");
		expect(await readFile(ws().path("f.go"), "utf8")).toBe("func f() {\n\treturn 2\n}\n");
	});
});

const LOREM = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt";

/** ~10 MB of indented code-like lines, blank lines among them, a method at the very end. */
function bigFile(): string {
	const lines: string[] = [];
	for (let i = 0; i < 100_000; i++)
		lines.push(i % 10 === 9 ? "" : `    ${"  ".repeat(i % 3)}x${i % 97} = call(${i % 13})  # ${LOREM}`);
	lines.push("    def tail(self):", "        a = 1", "", "", "        return a");
	return `${lines.join("\n")}\n`;
}

describe("cost", () => {
	it("10 MB file, anchor at the end, down to the last rung", () => {
		const file = bigFile();
		expect(file.length).toBeGreaterThan(10_000_000);
		const old = "def tail(self):\n    a = 1\n\n    return a\n";
		// Each rung is one scan of the file (an n·m ladder would run into the test timeout); the
		// time itself is measured in bench/cases-drift.mjs.
		const r = applyEdits(file, [{ oldText: old, newText: old.replace("a = 1", "a = 2") }], "f");
		expect(r.matched).toEqual(["blankLines"]);
		expect(r.text).toBe(
			file.replace("        a = 1\n\n\n        return a", "        a = 2\n\n\n        return a"),
		);
	});

	it("a long anchor of lines the file repeats everywhere stays linear (no n·m)", () => {
		const file = `${"    a = 1\n".repeat(200_000)}    b = 2\n`;
		// [rung, oldText, newText]: the tolerant rungs re-indent newText, "normalized" takes it as is.
		const cases: Array<[string, string, string]> = [
			["indentation", `${"a = 1\n".repeat(2000)}b = 2\n`, "c = 3\n"],
			["blankLines", `${"a = 1\n\n".repeat(2000)}b = 2\n`, "c = 3\n"],
			["normalized", `${"    a  =  1\n".repeat(2000)}    b = 2\n`, "    c = 3\n"],
		];
		for (const [rung, old, newText] of cases) {
			// Verifying every candidate line would be 200,000 × 2,000 comparisons: minutes, past the
			// test timeout.
			const r = applyEdits(file, [{ oldText: old, newText }], "f");
			expect(r.matched).toEqual([rung]);
			expect(r.text).toBe(`${"    a = 1\n".repeat(200_000 - 2000)}    c = 3\n`);
		}
		// NO_MATCH after a full scan of every rung.
		expect(() =>
			applyEdits(file, [{ oldText: `${"a = 1\n".repeat(2000)}b = 3\n`, newText: "x" }], "f"),
		).toThrow(expect.objectContaining({ code: "NO_MATCH" }));
	});

	it("kmp finds exactly the naive matches", () => {
		const seq = fc.array(fc.constantFrom("a", "b", ""), { maxLength: 40 });
		fc.assert(
			fc.property(
				seq,
				fc.array(fc.constantFrom("a", "b", ""), { minLength: 1, maxLength: 4 }),
				(text, pat) => {
					const naive: number[] = [];
					for (let s = 0; s + pat.length <= text.length; s++)
						if (pat.every((k, j) => text[s + j] === k)) naive.push(s);
					const found: number[] = [];
					kmp(
						pat,
						text.length,
						(i) => text[i],
						(s) => found.push(s) > 0,
					);
					expect(found).toEqual(naive);
				},
			),
			{ numRuns: 500 },
		);
	});
});
