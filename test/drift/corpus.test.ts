/**
 * The drift corpus (corpus.mjs) against keel's `edit` (Session.call, real temp files) and, in the
 * same run, pi 0.73.1's built-in edit on its own copy of each file. keel must land every case
 * exactly (the expected file byte for byte, the expected rung, the expected refusal), must never be
 * wrong, and must land at least as many as pi. The score table is printed.
 */
import { execFileSync } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { createEditToolDefinition } from "@mariozechner/pi-coding-agent";
import { beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";
import { CASES } from "./corpus.mjs";
import { keelApply, piApply, runCase, type ScoreRow, scoreTable } from "./score.mjs";

// keel edits in the workspace root; pi's edit tool gets a directory of its own beside it.
const ws = useWorkspace({ prefix: "keel-drift-", shared: true });
let session: Session;
const rows: ScoreRow[] = [];

beforeAll(async () => {
	session = ws().session;
	await mkdir(ws().outside("pi"));
});

function hasPython(): boolean {
	try {
		execFileSync("python3", ["-c", "pass"], { stdio: "ignore" });
		return true;
	} catch {
		return false;
	}
}

describe("drift corpus", () => {
	it("has at least 60 cases in every category the issue names", () => {
		expect(CASES.length).toBeGreaterThanOrEqual(60);
		const cats = new Set(CASES.map((c) => c.category));
		for (const c of [
			"quotes",
			"trailing-ws",
			"collapsed-spaces",
			"tabs-spaces",
			"indent-offset",
			"crlf",
			"eof-newline",
			"blank-lines",
			"python",
			"elided",
			"near-miss",
			"ambiguous",
		])
			expect(cats, c).toContain(c);
	});

	it.each(CASES.map((c, i) => [`${c.category}: ${c.name}`, i] as const))("%s", async (_, i) => {
		const c = CASES[i];
		const keel = await runCase(c, ws().root, `case-${i}`, keelApply(session));
		const pi = await runCase(
			c,
			ws().outside("pi"),
			`case-${i}`,
			piApply(createEditToolDefinition(ws().outside("pi"))),
		);
		rows.push({ category: c.category, name: c.name, keel: keel.score, pi: pi.score });
		if ("refuse" in c.expect) {
			expect(keel.outcome.code, keel.outcome.message).toBe(c.expect.refuse);
		} else {
			expect(keel.outcome.ok, keel.outcome.message).toBe(true);
			const rungs = Array.isArray(c.expect.rung) ? c.expect.rung : [c.expect.rung];
			expect(keel.outcome.matched).toEqual(rungs);
		}
		expect(keel.score, JSON.stringify(keel.after)).toBe("right");
	});

	it("Python cases stay valid Python", () => {
		if (!hasPython()) return;
		for (const c of CASES.filter((k) => k.category === "python" && "file" in k.expect)) {
			const src = (c.expect as { file: string }).file;
			execFileSync("python3", ["-c", "import ast, sys; ast.parse(sys.stdin.read())"], { input: src });
		}
	});

	it("keel is never wrong and lands at least as many as pi", () => {
		expect(rows.length).toBe(CASES.length);
		console.info(`drift corpus, ${rows.length} cases:\n${scoreTable(rows)}`);
		const n = (tool: "keel" | "pi", s: string) => rows.filter((r) => r[tool] === s).length;
		expect(n("keel", "wrong")).toBe(0);
		expect(n("keel", "right")).toBeGreaterThanOrEqual(n("pi", "right"));
		const piMisses = rows.filter((r) => r.pi !== "right").map((r) => `${r.pi}: ${r.category}: ${r.name}`);
		console.info(`pi did not land:\n${piMisses.join("\n")}`);
	});
});
