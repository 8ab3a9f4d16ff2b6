/**
 * Omission placeholders through the tools: a write, edit, file query or patch whose new text holds
 * "// ... rest of code unchanged" (and the like) that the replaced text did not hold is refused
 * with PLACEHOLDER_TEXT and the file's bytes stay as they were; a placeholder the file already had,
 * and code that only looks like one (Python's `...`, a trailing comment), goes through.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { isPlaceholder } from "../../src/edit/placeholder.js";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

let session: Session;
/** The unified profile: the file and apply_patch tools. */
let unified: Session;

const ws = useWorkspace({ prefix: "keel-placeholder-", shared: true });
beforeAll(async () => {
	session = ws().session;
	unified = await ws().open({ profile: "unified" });
});

const PY =
	"def area(r):\n    pi = 3.14\n    return pi * r * r\n\n\ndef perimeter(r):\n    return 2 * 3.14 * r\n";
const TS = "export function a() {\n  return 1;\n}\n\nexport function b() {\n  return 2;\n}\n";

interface Case {
	name: string;
	/** The file before the call; undefined: it does not exist. */
	file?: string;
	tool: string;
	/** The call's arguments; FILE stands for the file's path. */
	args: (path: string) => Record<string, unknown>;
	expect: { refuse: "PLACEHOLDER_TEXT" } | { file: string };
}

const CASES: Case[] = [
	{
		name: "edit: '# ... rest of the function unchanged' replacing real lines",
		file: PY,
		tool: "edit",
		args: (path) => ({
			path,
			edits: [
				{
					oldText: "    pi = 3.14\n    return pi * r * r",
					newText: "    pi = 3.14159\n    # ... rest of the function unchanged",
				},
			],
		}),
		expect: { refuse: "PLACEHOLDER_TEXT" },
	},
	{
		name: "edit: '// existing code here'",
		file: TS,
		tool: "edit",
		args: (path) => ({
			path,
			edits: [{ oldText: "  return 2;\n}", newText: "  // existing code here\n  return 3;\n}" }],
		}),
		expect: { refuse: "PLACEHOLDER_TEXT" },
	},
	{
		name: "edit: '/* ... */ unchanged'",
		file: TS,
		tool: "edit",
		args: (path) => ({
			path,
			edits: [{ oldText: "export function b() {\n  return 2;\n}", newText: "/* ... */ unchanged\n" }],
		}),
		expect: { refuse: "PLACEHOLDER_TEXT" },
	},
	{
		name: "edit: a placeholder the anchor already held stays allowed",
		file: "x = 1\n# ... rest unchanged\ny = 2\n",
		tool: "edit",
		args: (path) => ({
			path,
			edits: [{ oldText: "x = 1\n# ... rest unchanged", newText: "x = 10\n# ... rest unchanged" }],
		}),
		expect: { file: "x = 10\n# ... rest unchanged\ny = 2\n" },
	},
	{
		name: "edit: Python's Ellipsis as a stub body is code",
		file: "def f():\n    pass\n",
		tool: "edit",
		args: (path) => ({ path, edits: [{ oldText: "    pass", newText: "    ..." }] }),
		expect: { file: "def f():\n    ...\n" },
	},
	{
		name: "edit: a trailing comment after code is code",
		file: "a = 1\n",
		tool: "edit",
		args: (path) => ({ path, edits: [{ oldText: "a = 1", newText: "a = 2  # rest of code unchanged" }] }),
		expect: { file: "a = 2  # rest of code unchanged\n" },
	},
	{
		name: "edit: a comment about existing users is not a placeholder",
		file: "a = 1\n",
		tool: "edit",
		args: (path) => ({ path, edits: [{ oldText: "a = 1", newText: "# check existing users first\na = 1" }] }),
		expect: { file: "# check existing users first\na = 1\n" },
	},
	{
		name: "write: new file with '// ... other methods omitted for brevity'",
		tool: "write",
		args: (path) => ({
			path,
			content: "class A {\n  m() {}\n  // ... other methods omitted for brevity\n}\n",
		}),
		expect: { refuse: "PLACEHOLDER_TEXT" },
	},
	{
		name: "write: overwrite with '<!-- ... -->'",
		file: "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n",
		tool: "write",
		args: (path) => ({ path, content: "<ul>\n<li>a</li>\n<!-- ... -->\n</ul>\n" }),
		expect: { refuse: "PLACEHOLDER_TEXT" },
	},
	{
		name: "file write: '# Rest of the code remains the same'",
		tool: "file",
		args: (path) => ({
			queries: [{ type: "write", path, content: "import os\n\n# Rest of the code remains the same\n" }],
		}),
		expect: { refuse: "PLACEHOLDER_TEXT" },
	},
	{
		name: "file edit: '// ...' in the newText",
		file: TS,
		tool: "file",
		args: (path) => ({
			queries: [
				{ type: "edit", path, edits: [{ oldText: "  return 1;", newText: "  // ...\n  return 11;" }] },
			],
		}),
		expect: { refuse: "PLACEHOLDER_TEXT" },
	},
	{
		name: "apply_patch: an added '# ... existing code ...' line",
		file: PY,
		tool: "apply_patch",
		args: (path) => ({
			input: `*** Begin Patch\n*** Update File: ${path}\n@@\n def area(r):\n-    pi = 3.14\n-    return pi * r * r\n+    # ... existing code ...\n+    return 3.14159 * r * r\n*** End Patch\n`,
		}),
		expect: { refuse: "PLACEHOLDER_TEXT" },
	},
	{
		name: "apply_patch: an added file with '// rest of the file unchanged'",
		tool: "apply_patch",
		args: (path) => ({
			input: `*** Begin Patch\n*** Add File: ${path}\n+const a = 1;\n+// rest of the file unchanged\n*** End Patch\n`,
		}),
		expect: { refuse: "PLACEHOLDER_TEXT" },
	},
];

describe("placeholders through the tools", () => {
	it.each(CASES.map((c, i) => [c.name, i] as const))("%s", async (_, i) => {
		const c = CASES[i];
		const name = `case-${i}.txt`;
		const abs = ws().path(name);
		const s = c.tool === "file" || c.tool === "apply_patch" ? unified : session;
		if (c.file !== undefined) {
			await writeFile(abs, c.file);
			const read = await s.call("read", { path: name });
			expect(read.ok).toBe(true);
		}
		const r = await s.call(c.tool, c.args(name));
		if ("refuse" in c.expect) {
			expect(r.ok, JSON.stringify(r)).toBe(false);
			if (r.ok) return;
			expect(r.error.code).toBe(c.expect.refuse);
			expect(r.error.retry).toBe("change-approach");
			expect(r.error.message).toMatch(/left out/);
			if (c.file === undefined) await expect(stat(abs)).rejects.toThrow();
			else expect(await readFile(abs, "utf8")).toBe(c.file);
		} else {
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect(await readFile(abs, "utf8")).toBe(c.expect.file);
		}
	});
});

describe("what counts as a placeholder", () => {
	const yes = [
		"// ... rest of code unchanged",
		"# existing code here",
		"/* ... */ unchanged",
		"// ...",
		"    # ...",
		"  /* ... */",
		"{/* ... */}",
		"// ... (rest of the function)",
		"# Rest of the code remains the same",
		"// Existing imports...",
		"// [previous implementation]",
		"# (unchanged)",
		"// other methods omitted for brevity",
		"-- ... rest of the query",
		"<!-- ... existing markup ... -->",
		"// … remaining cases",
		"// keep existing code",
		"# ... etc",
	];
	const no = [
		"...",
		"    ...",
		"def f(): ...",
		"// Check existing users",
		"# TODO: handle the rest",
		"print('...')",
		"// wait for it...",
		"x = y  # unchanged",
		"//",
		"# the rest of the code assumes x > 0",
		"const rest = [...args];",
		"// Copyright (c) the original authors",
		"#!/usr/bin/env bash",
	];
	it.each(yes)("placeholder: %s", (line) => expect(isPlaceholder(line)).toBe(true));
	it.each(no)("not a placeholder: %s", (line) => expect(isPlaceholder(line)).toBe(false));
});
