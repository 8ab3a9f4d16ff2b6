/**
 * The syntax check in the edit's own result, through the tools on real files: a change that
 * introduces a syntax error says so in one line of the result and in details.syntax (line, column,
 * excerpt), an error the file already had is never reported, and in "refuse" mode (per session or
 * per call) such a change fails with SYNTAX_ERROR and no byte changes: for apply_patch and the file
 * tool's batches, no file at all. Every language the check covers is exercised once.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { CallOptions, Session } from "../../src/session.js";
import { Grammars } from "../../src/syntax/grammars.js";
import type { SyntaxReport } from "../../src/syntax/report.js";
import { useWorkspace } from "../fixtures/workspace.js";

let pi: Session;
let unified: Session;
let refusing: Session;

const ws = useWorkspace({ prefix: "keel-syntax-", shared: true });
beforeAll(async () => {
	pi = ws().session;
	unified = await ws().open({ profile: "unified" });
	refusing = await ws().open({ profile: "unified", check: "refuse" });
});

const TS = "export function area(r: number): number {\n  const pi = 3.14;\n  return pi * r * r;\n}\n";
const PY = "def area(r):\n    pi = 3.14\n    return pi * r * r\n";
/** A file that is already broken on line 2. */
const BROKEN_PY = "def f(x):\n    x = = 1\n\ndef g(y):\n    return y\n";

interface Case {
	name: string;
	session: () => Session;
	options?: CallOptions;
	/** File name and its bytes before (undefined: no such file). */
	path: string;
	file?: string;
	tool: string;
	args: (path: string) => Record<string, unknown>;
	/** The file afterwards and the new errors' lines; or the refusal (the file unchanged). */
	expect: { file: string; errorLines: number[] } | { refuse: "SYNTAX_ERROR" };
}

const edit = (oldText: string, newText: string) => (path: string) => ({
	path,
	edits: [{ oldText, newText }],
});

const CASES: Case[] = [
	{
		name: "edit: a dropped closing brace is reported",
		session: () => pi,
		path: "a.ts",
		file: TS,
		tool: "edit",
		args: edit("  return pi * r * r;\n}", "  return pi * r * r;"),
		expect: {
			file: "export function area(r: number): number {\n  const pi = 3.14;\n  return pi * r * r;\n",
			errorLines: [3],
		},
	},
	{
		name: "edit: a clean change reports nothing",
		session: () => pi,
		path: "b.ts",
		file: TS,
		tool: "edit",
		args: edit("const pi = 3.14;", "const pi = Math.PI;"),
		expect: { file: TS.replace("3.14", "Math.PI"), errorLines: [] },
	},
	{
		name: "edit: the file's own old error is not reported, a new one is",
		session: () => pi,
		path: "c.py",
		file: BROKEN_PY,
		tool: "edit",
		args: edit("    return y", "    return (y"),
		expect: { file: BROKEN_PY.replace("return y", "return (y"), errorLines: [5] },
	},
	{
		name: "edit: a change elsewhere in a broken file reports nothing",
		session: () => pi,
		path: "d.py",
		file: BROKEN_PY,
		tool: "edit",
		args: edit("    return y", "    return y + 1"),
		expect: { file: BROKEN_PY.replace("return y", "return y + 1"), errorLines: [] },
	},
	{
		name: "edit: refuse per call leaves the file as it was",
		session: () => pi,
		options: { check: "refuse" },
		path: "e.py",
		file: PY,
		tool: "edit",
		args: edit("    return pi * r * r", "    return pi * r * r)"),
		expect: { refuse: "SYNTAX_ERROR" },
	},
	{
		name: "write: a new JSON file with a trailing comma is reported",
		session: () => pi,
		path: "f.json",
		tool: "write",
		args: (path) => ({ path, content: '{\n  "a": 1,\n}\n' }),
		expect: { file: '{\n  "a": 1,\n}\n', errorLines: [2] },
	},
	{
		name: "write: refuse per session, a new file is not created",
		session: () => refusing,
		path: "g.py",
		tool: "file",
		args: (path) => ({ queries: [{ type: "write", path, content: "def f(:\n    pass\n" }] }),
		expect: { refuse: "SYNTAX_ERROR" },
	},
	{
		name: "write: report mode can be asked per call in a refusing session",
		session: () => refusing,
		options: { check: "report" },
		path: "h.py",
		tool: "file",
		args: (path) => ({ queries: [{ type: "write", path, content: "def f(:\n    pass\n" }] }),
		expect: { file: "def f(:\n    pass\n", errorLines: [1] },
	},
	{
		name: "file: a refused batch changes neither file",
		session: () => refusing,
		path: "i.ts",
		file: TS,
		tool: "file",
		args: (path) => ({
			queries: [
				{ type: "write", path: "i-other.txt", content: "plain text, not checked\n" },
				{ type: "edit", path, edits: [{ oldText: "const pi = 3.14;", newText: "const pi = ;" }] },
			],
		}),
		expect: { refuse: "SYNTAX_ERROR" },
	},
	{
		name: "apply_patch: refused as a whole",
		session: () => refusing,
		path: "j.py",
		file: PY,
		tool: "apply_patch",
		args: (path) => ({
			input: `*** Begin Patch\n*** Add File: j-new.py\n+x = 1\n*** Update File: ${path}\n@@\n def area(r):\n-    pi = 3.14\n+    pi = (3.14\n     return pi * r * r\n*** End Patch\n`,
		}),
		expect: { refuse: "SYNTAX_ERROR" },
	},
	{
		name: "apply_patch: reported with the hunk's line",
		session: () => unified,
		path: "k.py",
		file: PY,
		tool: "apply_patch",
		args: (path) => ({
			input: `*** Begin Patch\n*** Update File: ${path}\n@@\n def area(r):\n-    pi = 3.14\n+    pi = [3.14\n     return pi * r * r\n*** End Patch\n`,
		}),
		expect: { file: PY.replace("pi = 3.14", "pi = [3.14"), errorLines: [2] },
	},
	{
		name: "file: check refuse as the tool's argument, a batch changes neither file",
		session: () => unified,
		path: "n.ts",
		file: TS,
		tool: "file",
		args: (path) => ({
			check: "refuse",
			queries: [
				{ type: "write", path: "i-other.txt", content: "plain text, not checked\n" },
				{ type: "edit", path, edits: [{ oldText: "return pi * r * r;\n}", newText: "return pi * r * r;" }] },
			],
		}),
		expect: { refuse: "SYNTAX_ERROR" },
	},
	{
		name: "apply_patch: check refuse as the tool's argument, no file added or changed",
		session: () => unified,
		path: "o.py",
		file: PY,
		tool: "apply_patch",
		args: (path) => ({
			check: "refuse",
			input: `*** Begin Patch\n*** Add File: j-new.py\n+x = 1\n*** Update File: ${path}\n@@\n def area(r):\n-    pi = 3.14\n+    pi = (3.14\n     return pi * r * r\n*** End Patch\n`,
		}),
		expect: { refuse: "SYNTAX_ERROR" },
	},
	{
		name: "file: the tool's argument outranks the session's refusal",
		session: () => refusing,
		path: "p.py",
		tool: "file",
		args: (path) => ({ check: "report", queries: [{ type: "write", path, content: "def f(:\n    pass\n" }] }),
		expect: { file: "def f(:\n    pass\n", errorLines: [1] },
	},
	{
		name: "apply_patch: check off as the tool's argument in a refusing session",
		session: () => refusing,
		path: "q.py",
		file: PY,
		tool: "apply_patch",
		args: (path) => ({
			check: "off",
			input: `*** Begin Patch\n*** Update File: ${path}\n@@\n def area(r):\n-    pi = 3.14\n+    pi = (3.14\n     return pi * r * r\n*** End Patch\n`,
		}),
		expect: { file: PY.replace("pi = 3.14", "pi = (3.14"), errorLines: [] },
	},
	{
		name: "edit: a file without a grammar is not checked",
		session: () => pi,
		path: "l.txt",
		file: "a (\n",
		tool: "edit",
		args: edit("a (", "a (("),
		expect: { file: "a ((\n", errorLines: [] },
	},
];

describe("syntax check through the tools", () => {
	it.each(CASES.map((c, i) => [c.name, i] as const))("%s", async (_, i) => {
		const c = CASES[i];
		const s = c.session();
		const abs = ws().path(c.path);
		if (c.file !== undefined) {
			await writeFile(abs, c.file);
			expect((await s.call("read", { path: c.path })).ok).toBe(true);
		}
		const r = await s.call(c.tool, c.args(c.path), c.options);
		if ("refuse" in c.expect) {
			expect(r.ok, JSON.stringify(r)).toBe(false);
			if (r.ok) return;
			expect(r.error.code).toBe("SYNTAX_ERROR");
			expect(r.error.retry).toBe("change-approach");
			expect((r.error.details as { syntax: SyntaxReport }).syntax.files[0].errors.length).toBeGreaterThan(0);
			if (c.file === undefined) await expect(stat(abs)).rejects.toThrow();
			else expect(await readFile(abs, "utf8")).toBe(c.file);
			for (const other of ["i-other.txt", "j-new.py"]) await expect(stat(ws().path(other))).rejects.toThrow();
			return;
		}
		expect(r.ok, JSON.stringify(r)).toBe(true);
		if (!r.ok) return;
		expect(await readFile(abs, "utf8")).toBe(c.expect.file);
		const syntax = (r.details as { syntax?: SyntaxReport } | undefined)?.syntax;
		const lines = syntax?.files.flatMap((f) => f.errors.map((e) => e.line)) ?? [];
		expect(lines).toEqual(c.expect.errorLines);
		const said = r.content.map((x) => ("text" in x ? x.text : "")).join("\n");
		const syntaxLines = said.split("\n").filter((l) => l.startsWith("Syntax check:"));
		expect(syntaxLines.length).toBe(c.expect.errorLines.length > 0 ? 1 : 0);
		if (syntax?.files[0]) expect(syntax.files[0].errors[0].excerpt.length).toBeGreaterThan(0);
	});

	it("a check argument that is no mode is refused and changes nothing; Codex's apply_patch has none", async () => {
		const path = "r.py";
		await writeFile(ws().path(path), PY);
		const bad = await unified.call("file", {
			check: "strict",
			queries: [{ type: "edit", path, edits: [{ oldText: "3.14", newText: "3.1416" }] }],
		});
		expect(bad).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
		const codex = await ws().open({ profile: "codex" });
		try {
			const patch = `*** Begin Patch\n*** Update File: ${path}\n@@\n-    pi = 3.14\n+    pi = 3.1416\n*** End Patch\n`;
			const r = await codex.call("apply_patch", { input: patch, check: "off" });
			expect(r).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
		} finally {
			await codex.close();
		}
		expect(await readFile(ws().path(path), "utf8")).toBe(PY);
	});

	it("a second edit of the same file is parsed on the kept tree and still finds a new error", async () => {
		const path = "m.ts";
		await writeFile(ws().path(path), TS);
		const first = await pi.call("edit", { path, edits: [{ oldText: "3.14", newText: "3.1416" }] });
		expect(first.ok).toBe(true);
		const second = await pi.call("edit", { path, edits: [{ oldText: "r * r;", newText: "r * r" }] });
		const third = await pi.call("edit", { path, edits: [{ oldText: "pi * r * r", newText: "pi * (r * r" }] });
		expect(second.ok && third.ok).toBe(true);
		const errs = (r: typeof third) =>
			r.ok ? ((r.details as { syntax?: SyntaxReport }).syntax?.files ?? []) : [];
		expect(errs(second)).toEqual([]);
		expect(errs(third).flatMap((f) => f.errors.map((e) => e.line))).toEqual([3]);
	});
});

/** Each language: a valid text, and the same text broken. */
const LANGUAGES: Array<[string, string, string]> = [
	["a.ts", "let x: number = 1;\n", "let x: number = ;\n"],
	["a.tsx", "const e = <div>hi</div>;\n", "const e = <div>hi</div;\n"],
	["a.js", "function f() { return 1; }\n", "function f() { return 1;\n"],
	["a.py", "def f():\n    return 1\n", "def f(:\n    return 1\n"],
	["a.go", "package main\nfunc main() {}\n", "package main\nfunc main() {\n"],
	["a.rs", "fn main() {}\n", "fn main() {\n"],
	["A.java", "class A { void f() {} }\n", "class A { void f() { }\n"],
	["a.c", "int main(void) { return 0; }\n", "int main(void) { return 0;\n"],
	["a.cpp", "int main() { return 0; }\n", "int main() { return 0;\n"],
	["a.cs", "class A { void F() {} }\n", "class A { void F() { }\n"],
	["a.rb", "def f\n  1\nend\n", "def f\n  1\n"],
	["a.php", "<?php\necho 1;\n", "<?php\necho (1;\n"],
	["a.sh", "if true; then echo hi; fi\n", "if true; then echo hi;\n"],
	["a.json", '{"a": 1}\n', '{"a": }\n'],
	["a.yaml", "a: 1\nb: [2]\n", "a: 1\nb: [2\n"],
	["a.toml", 'a = 1\n[b]\nc = "x"\n', "a = \n[b\n"],
	["a.html", "<p>hi</p>\n", "<p>hi</p\n"],
	["a.css", "a { color: red; }\n", "a { color: red;\n"],
];

describe("every covered language", () => {
	it.each(LANGUAGES)("%s: valid has no error, broken has one", async (path, valid, broken) => {
		const grammars = new Grammars();
		try {
			const { languageFor } = await import("../../src/syntax/languages.js");
			const name = languageFor(path);
			expect(name).toBeDefined();
			const ok = await grammars.parse(name!, valid);
			const bad = await grammars.parse(name!, broken);
			expect(ok, `grammar ${name} missing`).toBeDefined();
			expect(ok!.rootNode.hasError).toBe(false);
			expect(bad!.rootNode.hasError).toBe(true);
			ok!.delete();
			bad!.delete();
		} finally {
			grammars.close();
		}
	});
});
