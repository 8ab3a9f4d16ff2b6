/**
 * A checker's output as errors (src/diagnostics/parse.ts), as a table: each line format the presets
 * print, what is left out (warnings, notes, summaries, prose that only looks like a location), and
 * hostile text (escape sequences, control characters, long lines, a flood of lines).
 */
import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_CHARS, MAX_PARSED, parseDiagnostics } from "../../src/diagnostics/parse.js";

const CASES: Array<[string, string, Array<[string, number, number, string]>]> = [
	[
		"tsc",
		"src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
		[["src/a.ts", 3, 7, "TS2322: Type 'string' is not assignable to type 'number'."]],
	],
	["tsc: a warning is left out", "src/a.ts(3,7): warning TS6133: 'x' is declared but never used.", []],
	[
		"pyright",
		'  /w/a.py:4:9 - error: "foo" is not defined (reportUndefinedVariable)\n  /w/a.py:5:1 - warning: unused\n1 error, 1 warning, 0 informations',
		[["/w/a.py", 4, 9, '"foo" is not defined (reportUndefinedVariable)']],
	],
	[
		"mypy: errors kept, notes left out, the summary is no error",
		"a.py:3:5: error: Incompatible types in assignment  [assignment]\na.py:3:5: note: see the docs\nFound 1 error in 1 file (checked 1 source file)",
		[["a.py", 3, 5, "Incompatible types in assignment  [assignment]"]],
	],
	[
		"mypy without a column",
		"a.py:3: error: Name 'x' is not defined",
		[["a.py", 3, 0, "Name 'x' is not defined"]],
	],
	[
		"ruff (no severity: a failed rule)",
		"./a.py:1:8: F401 [*] `os` imported but unused",
		[["./a.py", 1, 8, "F401 [*] `os` imported but unused"]],
	],
	[
		"gcc-like: a warning is left out",
		"a.c:2:3: warning: unused variable 'x'\na.c:4:1: error: expected ';'",
		[["a.c", 4, 1, "expected ';'"]],
	],
	[
		"py_compile",
		'  File "./b.py", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax',
		[["./b.py", 1, 0, "SyntaxError: invalid syntax"]],
	],
	[
		"prose that only looks like a location",
		"See http://example.com:80: error: nothing\nNote: 3 files checked",
		[],
	],
	[
		"escape sequences and control characters are removed",
		"\u001b[1ma.ts\u001b[0m(1,2): error TS1005: \u0007';' \u0000expected.\u202e",
		[["a.ts", 1, 2, "TS1005: ';' expected."]],
	],
	["line 0 is no line", "a.py:0:1: error: nowhere", []],
];

describe("checker output", () => {
	it.each(CASES)("%s", (_, output, expected) => {
		const got = parseDiagnostics(output).map((d) => [d.file, d.line, d.column, d.message]);
		expect(got).toEqual(expected);
	});

	it("a long message is cut, a flood of lines is bounded", () => {
		const long = parseDiagnostics(`a.py:1:1: error: ${"x".repeat(10_000)}`);
		expect(long[0].message.length).toBe(MAX_MESSAGE_CHARS);
		const flood = parseDiagnostics(
			Array.from({ length: MAX_PARSED * 3 }, (_, i) => `a.py:${i + 1}:1: error: e`).join("\n"),
		);
		expect(flood).toHaveLength(MAX_PARSED);
	});
});
