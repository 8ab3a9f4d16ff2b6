/**
 * Running a drift case against an edit tool on a real file and scoring it:
 *   right   the file is exactly the expected one (for a case that must be refused: the tool
 *           refused and the file is untouched);
 *   missed  the tool refused and the file is untouched, where an edit was expected;
 *   wrong   anything else: the file changed, but not into the expected one.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * @param {import("./corpus.d.mts").DriftCase} c
 * @param {string} dir  directory the tool works in
 * @param {string} name  file name to use
 * @param {(path: string, edits: Array<{oldText: string, newText: string}>) => Promise<import("./score.d.mts").ToolOutcome>} apply
 */
export async function runCase(c, dir, name, apply) {
	const abs = join(dir, name);
	const before = Buffer.from(c.file, "utf8");
	await writeFile(abs, before);
	const outcome = await apply(name, c.edits);
	const after = await readFile(abs);
	let score;
	if ("refuse" in c.expect) score = !outcome.ok && after.equals(before) ? "right" : "wrong";
	else if (after.equals(Buffer.from(c.expect.file, "utf8"))) score = "right";
	else score = after.equals(before) ? "missed" : "wrong";
	return { score, outcome, after: after.toString("utf8") };
}

/** pi 0.73.1's built-in edit tool as an apply function. */
export function piApply(def) {
	return async (path, edits) => {
		try {
			await def.execute("drift", { path, edits }, undefined, undefined, undefined);
			return { ok: true };
		} catch (e) {
			return { ok: false, message: e instanceof Error ? e.message : String(e) };
		}
	};
}

/** keel's edit through a Session (src or dist) as an apply function. */
export function keelApply(session) {
	return async (path, edits) => {
		const r = await session.call("edit", { path, edits });
		if (r.ok) return { ok: true, matched: r.details?.matched };
		return { ok: false, code: r.error.code, message: r.error.message };
	};
}

/** Per category and in total: right/missed/wrong for each tool, as a markdown table. */
export function scoreTable(rows) {
	const cats = [...new Set(rows.map((r) => r.category))];
	const count = (rs, tool, s) => rs.filter((r) => r[tool] === s).length;
	const cell = (rs, tool) =>
		`${count(rs, tool, "right")} / ${count(rs, tool, "missed")} / ${count(rs, tool, "wrong")}`;
	const line = (label, rs) => `| ${label} | ${rs.length} | ${cell(rs, "keel")} | ${cell(rs, "pi")} |`;
	return [
		"| category | cases | keel right / missed / wrong | pi 0.73.1 right / missed / wrong |",
		"|---|---|---|---|",
		...cats.map((cat) =>
			line(
				cat,
				rows.filter((r) => r.category === cat),
			),
		),
		line("**all**", rows),
	].join("\n");
}
