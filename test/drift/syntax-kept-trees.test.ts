/**
 * The syntax check's kept trees, through the tools on real files: a read parses the file ahead so
 * the first edit's check reuses that tree (no whole parse on the edit's path), a tree is found by
 * the text it parses (a rival's change between the read and the edit is parsed as it is, and its
 * own error is not blamed on the edit), an incremental parse gives the same lines and columns as a
 * whole one in text with characters outside the BMP, and a change in a file with hundreds of old
 * errors still finds its one new error.
 */
import { readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { Session } from "../../src/session.js";
import type { SyntaxReport } from "../../src/syntax/report.js";
import { useWorkspace } from "../fixtures/workspace.js";

// One workspace for the file; each test opens (and closes) its own sessions, whose parse counts it checks.
const ws = useWorkspace({ prefix: "keel-syntax-kept-", shared: true, session: false });

/** A 2,000-line TypeScript file of small functions. */
function bigTs(): string {
	let text = "";
	for (let k = 0; k < 500; k++)
		text += `export function f${k}(a: number): number {\n  const x = a + ${k};\n  return x * 2;\n}\n`;
	return text;
}

type Result = Awaited<ReturnType<Session["call"]>>;
const errorsOf = (r: Result) =>
	r.ok ? ((r.details as { syntax?: SyntaxReport }).syntax?.files.flatMap((f) => f.errors) ?? []) : [];

/** Waits until the session's parse made ahead has landed (polling its count; no clock asserted). */
async function parsedAhead(s: Session, n: number): Promise<void> {
	for (let i = 0; i < 500 && s.syntax.parses.ahead < n; i++) await new Promise((r) => setTimeout(r, 10));
	expect(s.syntax.parses.ahead).toBe(n);
}

describe("trees kept for the check", () => {
	it("a read parses the file ahead: the first edit's check parses nothing whole", async () => {
		const s = await ws().open();
		try {
			await writeFile(ws().path("big.ts"), bigTs());
			expect((await s.call("read", { path: "big.ts" })).ok).toBe(true);
			await parsedAhead(s, 1);
			const r = await s.call("edit", {
				path: "big.ts",
				edits: [{ oldText: "const x = a + 250;", newText: "const x = a + ;" }],
			});
			expect(r.ok).toBe(true);
			expect(errorsOf(r).map((e) => e.line)).toEqual([1002]);
			expect(s.syntax.parses).toMatchObject({ whole: 0, incremental: 1 });
			const next = await s.call("edit", {
				path: "big.ts",
				edits: [{ oldText: "const x = a + ;", newText: "const x = a + 250;" }],
			});
			expect(errorsOf(next)).toEqual([]);
			expect(s.syntax.parses).toMatchObject({ whole: 0, incremental: 2 });
		} finally {
			await s.close();
		}
	});

	it("an edit right after the read waits for the parse made ahead rather than repeating it", async () => {
		const s = await ws().open();
		try {
			await writeFile(ws().path("quick.ts"), bigTs());
			expect((await s.call("read", { path: "quick.ts" })).ok).toBe(true);
			const r = await s.call("edit", {
				path: "quick.ts",
				edits: [
					{ oldText: "return x * 2;\n}\nexport function f7(", newText: "return x * 2;\nexport function f7(" },
				],
			});
			expect(r.ok).toBe(true);
			expect(errorsOf(r).length).toBeGreaterThan(0);
			expect(s.syntax.parses).toMatchObject({ whole: 0, ahead: 1, incremental: 1 });
		} finally {
			await s.close();
		}
	});

	it("a rival's change between the read and the edit: the tree of the read is not used, the rival's error is not blamed", async () => {
		const s = await ws().open();
		try {
			const path = "rival.py";
			const clean = "def f(x):\n    return x\n\ndef g(y):\n    return y\n";
			await writeFile(ws().path(path), clean);
			expect((await s.call("read", { path })).ok).toBe(true);
			await parsedAhead(s, 1);
			// Another writer breaks line 2 after the read; the model's edit changes line 5.
			await writeFile(ws().path(path), clean.replace("return x", "return = x"));
			const r = await s.call("edit", { path, edits: [{ oldText: "return y", newText: "return y + 1" }] });
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect(await readFile(ws().path(path), "utf8")).toBe(
				clean.replace("return x", "return = x").replace("return y", "return y + 1"),
			);
			expect(errorsOf(r)).toEqual([]);
			// The tree of the read is of other text: the new text (with the rival's error) is parsed whole,
			// the old one on its tree edited back, then the new one on the old one's (both incremental).
			expect(s.syntax.parses).toMatchObject({ whole: 1, incremental: 2 });
		} finally {
			await s.close();
		}
	});

	it("a never-read file that already has an error: the old text is parsed on the new one's tree, the old error is not blamed", async () => {
		const s = await ws().open();
		try {
			const path = "cold-broken.py";
			await writeFile(ws().path(path), "def f(x):\n    x = = 1\n\ndef g(y):\n    return y\n");
			const r = await s.call("edit", { path, edits: [{ oldText: "return y", newText: "return (y" }] });
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect(errorsOf(r).map((e) => e.line)).toEqual([5]);
			expect(s.syntax.parses).toMatchObject({ whole: 1, incremental: 2 });
		} finally {
			await s.close();
		}
	});

	it("lines and columns after characters outside the BMP are those of a whole parse", async () => {
		const s = await ws().open();
		const fresh = await ws().open();
		try {
			const text = 'const a = "😀é😀";\nconst b = "ü😀"; const c = 1;\nconst d = 2;\n';
			const broken = text.replace("const c = 1;", "const c = ;");
			await writeFile(ws().path("u.ts"), text);
			await writeFile(ws().path("u2.ts"), text);
			expect((await s.call("read", { path: "u.ts" })).ok).toBe(true);
			await parsedAhead(s, 1);
			const incremental = await s.call("edit", {
				path: "u.ts",
				edits: [{ oldText: "const c = 1;", newText: "const c = ;" }],
			});
			const whole = await fresh.call("edit", {
				path: "u2.ts",
				edits: [{ oldText: "const c = 1;", newText: "const c = ;" }],
			});
			expect(await readFile(ws().path("u.ts"), "utf8")).toBe(broken);
			expect(s.syntax.parses.whole).toBe(0);
			expect(errorsOf(incremental).length).toBeGreaterThan(0);
			expect(errorsOf(incremental)).toEqual(errorsOf(whole));
			expect(errorsOf(incremental)[0]).toMatchObject({ line: 2 });
		} finally {
			await s.close();
			await fresh.close();
		}
	});

	it("a file with hundreds of old errors: the one new error at its end is reported, no old one", async () => {
		const s = await ws().open();
		try {
			let text = "";
			for (let k = 0; k < 300; k++) text += `def f${k}(x):\n    x = = ${k}\n\n`;
			text += "def last(y):\n    return y\n";
			await writeFile(ws().path("broken.py"), text);
			const r = await s.call("edit", {
				path: "broken.py",
				edits: [{ oldText: "return y", newText: "return (y" }],
			});
			expect(r.ok).toBe(true);
			const lines = errorsOf(r).map((e) => e.line);
			expect(lines).toEqual([902]);
		} finally {
			await s.close();
		}
	});

	it("a session closed while a read's parse is still ahead closes cleanly", async () => {
		const s = await ws().open();
		await writeFile(ws().path("closing.ts"), bigTs());
		expect((await s.call("read", { path: "closing.ts" })).ok).toBe(true);
		await s.close();
		const atClose = s.syntax.parses.ahead;
		// Work still queued must neither land nor touch the freed parsers (vitest fails on a stray error).
		await new Promise((r) => setTimeout(r, 300));
		expect(s.syntax.parses.ahead).toBe(atClose);
	});
});
