/**
 * Failed edits that say how to succeed, through the tools on real files: a NO_MATCH names the
 * closest region (its lines and, bounded, the lines that differ) well enough that the next call,
 * built only from the error, lands; a line-range edit whose read went stale carries the current
 * lines; an AMBIGUOUS_MATCH lists each candidate's line. The file never changes on a failure.
 */
import { readFile, writeFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import type { Closest } from "../../src/edit/closest.js";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

let pi: Session;
let unified: Session;

const ws = useWorkspace({ prefix: "keel-failures-", shared: true });
beforeAll(async () => {
	pi = ws().session;
	unified = await ws().open({ profile: "unified" });
});

/** 40 lines of a module: function fN returns N * 10. */
const MODULE = Array.from(
	{ length: 10 },
	(_, k) => `function f${k}(x) {\n  const y = x + ${k};\n  return y * 10;\n}\n`,
).join("");

async function failing(s: Session, tool: string, args: unknown, name: string, before: string) {
	const r = await s.call(tool, args);
	expect(r.ok, JSON.stringify(r)).toBe(false);
	if (r.ok) throw new Error("unreachable");
	expect(await readFile(ws().path(name), "utf8")).toBe(before);
	return r.error;
}

/** The anchor rebuilt from the error alone: each differing line replaced by the file's. */
function fixedAnchor(anchor: string, closest: Closest): string {
	const lines = anchor.split("\n");
	for (const d of closest.differing) lines[d.line - closest.startLine] = d.file;
	return lines.join("\n");
}

describe("NO_MATCH names the closest region", () => {
	const cases = [
		{
			name: "a misremembered middle line",
			anchor: "function f6(x) {\n  const y = x + 7;\n  return y * 10;",
			newText: "function f6(x) {\n  const y = x + 6;\n  return y * 100;",
			region: [25, 27],
			differs: [{ line: 26, file: "  const y = x + 6;" }],
		},
		{
			name: "no line equal: the most similar line is found",
			anchor: "  const yy = x + 33;\n  return yy * 10;",
			newText: "  const y = x + 3;\n  return y * 11;",
			region: undefined,
			differs: undefined,
		},
	];
	it.each(cases.map((c, i) => [c.name, i] as const))("edit: %s", async (_, i) => {
		const c = cases[i];
		const name = `nomatch-${i}.js`;
		await writeFile(ws().path(name), MODULE);
		const err = await failing(
			pi,
			"edit",
			{ path: name, edits: [{ oldText: c.anchor, newText: c.newText }] },
			name,
			MODULE,
		);
		expect(err.code).toBe("NO_MATCH");
		const closest = err.details?.closest as Closest;
		expect(closest, err.message).toBeDefined();
		if (c.region) expect([closest.startLine, closest.endLine]).toEqual(c.region);
		if (c.differs) expect(closest.differing.map((d) => ({ line: d.line, file: d.file }))).toEqual(c.differs);
		for (const d of closest.differing)
			expect(err.message).toContain(`line ${d.line}: the file has ${JSON.stringify(d.file)}`);
		// The next call, from the error alone, lands.
		const again = await pi.call("edit", {
			path: name,
			edits: [{ oldText: fixedAnchor(c.anchor, closest), newText: c.newText }],
		});
		expect(again.ok, JSON.stringify(again)).toBe(true);
	});

	it("edit: a long anchor that is wrong throughout stays bounded", async () => {
		const name = "nomatch-long.js";
		await writeFile(ws().path(name), MODULE);
		const anchor = MODULE.replace(/return y \* 10/g, "return y * 20").replace(/\+ /g, "- ");
		const err = await failing(
			pi,
			"edit",
			{ path: name, edits: [{ oldText: anchor, newText: "x" }] },
			name,
			MODULE,
		);
		const closest = err.details?.closest as Closest;
		expect(closest.differing.length).toBeLessThanOrEqual(6);
		expect(err.message).toMatch(/more lines differ/);
		expect(err.message.length).toBeLessThan(2000);
	});

	it("edit: nothing like the anchor in the file gives no region", async () => {
		const name = "nomatch-none.js";
		await writeFile(ws().path(name), MODULE);
		const err = await failing(
			pi,
			"edit",
			{ path: name, edits: [{ oldText: "zzqq", newText: "x" }] },
			name,
			MODULE,
		);
		expect(err.code).toBe("NO_MATCH");
		expect(err.details?.closest).toBeUndefined();
	});

	it("apply_patch: the hunk's closest region and its differing line", async () => {
		const name = "nomatch-patch.js";
		await writeFile(ws().path(name), MODULE);
		const patch = `*** Begin Patch\n*** Update File: ${name}\n@@\n function f3(x) {\n-  const y = x + 4;\n+  const y = x + 40;\n   return y * 10;\n*** End Patch\n`;
		const err = await failing(unified, "apply_patch", { input: patch }, name, MODULE);
		expect(err.code).toBe("NO_MATCH");
		const closest = err.details?.closest as Closest;
		expect([closest.startLine, closest.endLine]).toEqual([13, 15]);
		expect(closest.differing).toEqual([
			{ line: 14, file: "  const y = x + 3;", yours: "  const y = x + 4;" },
		]);
		expect(err.message).toContain('line 14: the file has "  const y = x + 3;"');
	});
});

describe("a stale line-range edit carries the current lines", () => {
	it("file: lineRange after another writer inserted lines", async () => {
		const name = "stale-range.js";
		await writeFile(ws().path(name), MODULE);
		expect((await unified.call("read", { path: name })).ok).toBe(true);
		const changed = `// header\n// more\n${MODULE}`;
		await writeFile(ws().path(name), changed);
		const err = await failing(
			unified,
			"file",
			{
				queries: [
					{
						type: "edit",
						path: name,
						edits: [{ matchMode: "lineRange", startLine: 6, endLine: 6, newText: "  return y * 11;" }],
					},
				],
			},
			name,
			changed,
		);
		expect(err.code).toBe("STALE_READ");
		expect(err.message).toContain(
			"Its current lines there (of 42):\n4:   const y = x + 0;\n5:   return y * 10;\n6: }\n7: function f1(x) {\n8:   const y = x + 1;",
		);
	});
});

describe("AMBIGUOUS_MATCH lists each candidate", () => {
	it("edit: the line of every candidate, in the message and the details", async () => {
		const name = "ambiguous.js";
		await writeFile(ws().path(name), MODULE);
		const err = await failing(
			pi,
			"edit",
			{ path: name, edits: [{ oldText: "  return y * 10;", newText: "  return y;" }] },
			name,
			MODULE,
		);
		expect(err.code).toBe("AMBIGUOUS_MATCH");
		expect(err.details?.candidates).toEqual([3, 7, 11, 15, 19]);
		expect(err.details?.more).toBe(true);
		expect(err.message).toContain("lines 3, 7, 11, 15, 19");
	});
});
