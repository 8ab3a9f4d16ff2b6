/**
 * The repository's own tsc as the workspace's checker, through the tools on a real project: a
 * change that introduces a type error gets it reported in one line and in details.diagnostics, an
 * error the project already had is not (also when lines moved, and when the baseline is the kept
 * earlier result), an error the change caused in another file is, and check "off" runs nothing.
 * Each change runs tsc on the project (seconds a run on a busy machine): the checkers suite.
 */
import { existsSync } from "node:fs";
import { symlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { diagnosticLines, newErrors, report, workspace } from "./diagnostics-fixtures.js";

const REPO = resolve(import.meta.dirname, "../..");
const TSC = join(REPO, "node_modules/.bin/tsc");
const HAVE_TSC = existsSync(TSC);
if (!HAVE_TSC) console.warn("diagnostics test: node_modules/.bin/tsc missing; the tsc cases are skipped");

const TSCONFIG = JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ["src"] });
/** A project that already has a type error (line 2 of a.ts). */
const A_TS = 'import { twice } from "./b";\nconst old: number = "already";\nexport const four = twice(2);\n';
const B_TS = "export function twice(x: number): number {\n  return x * 2;\n}\n";

describe.skipIf(!HAVE_TSC)("tsc through the tools", () => {
	it("reports the type error a change introduced, not the one the file had, and one it caused elsewhere", async () => {
		const { root, session } = await workspace(
			{ "tsconfig.json": TSCONFIG, "src/a.ts": A_TS, "src/b.ts": B_TS },
			// Generous: the machine running the tests may be busy; the cut-off has its own test below.
			{ diagnostics: [{ name: "tsc", timeoutMs: 60_000 }] },
		);
		await symlink(join(REPO, "node_modules"), join(root, "node_modules"));
		try {
			// Lines move (one added above the old error) and a new error comes in on another line.
			const first = await session.call("edit", {
				path: "src/a.ts",
				edits: [
					{
						oldText: 'import { twice } from "./b";\n',
						newText: 'import { twice } from "./b";\n// a comment\n',
					},
					{ oldText: "export const four", newText: 'const fresh: number = "new";\nexport const four' },
				],
			});
			expect(first.ok, JSON.stringify(first)).toBe(true);
			expect(newErrors(first)).toEqual(["src/a.ts:4 TS2322"]);
			expect(report(first)?.checkers[0]).toMatchObject({ checker: "tsc", status: "ok", baselineKept: false });
			expect(diagnosticLines(first)).toHaveLength(1);
			expect(diagnosticLines(first)[0]).toMatch(/^Diagnostics: tsc 1 new error \(src\/a\.ts:4:7 TS2322: /);
			expect(report(first)?.checkers[0].files[0].errors[0].excerpt).toBe('const fresh: number = "new";');

			// The next change of the same file compares with the kept result: no run before it.
			const second = await session.call("edit", {
				path: "src/a.ts",
				edits: [{ oldText: "// a comment", newText: "// another comment" }],
			});
			expect(newErrors(second)).toEqual([]);
			expect(report(second)?.checkers[0]).toMatchObject({ status: "ok", baselineKept: true });
			expect(diagnosticLines(second)).toEqual(["Diagnostics: tsc found no new errors."]);

			// A change of b.ts breaks its caller in a.ts: the error is reported in a.ts.
			const third = await session.call("edit", {
				path: "src/b.ts",
				edits: [{ oldText: "twice(x: number)", newText: "twice(x: string)" }],
			});
			// The changed file first, then the others.
			expect(newErrors(third)).toEqual(["src/b.ts:2 TS2362", "src/a.ts:5 TS2345"]);
			expect(report(third)?.checkers[0].baselineKept).toBe(false);

			// check "off" for the call: no checker runs.
			const off = await session.call(
				"write",
				{ path: "src/c.ts", content: 'export const c: number = "x";\n' },
				{ check: "off" },
			);
			expect(off.ok).toBe(true);
			expect(report(off)).toBeUndefined();
			expect(diagnosticLines(off)).toEqual([]);
		} finally {
			await session.close();
		}
	}, 120_000);
});
