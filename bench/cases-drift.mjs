/**
 * Drifted edits: keel's matching ladder against pi 0.73.1's edit, on a 10 MB file with the anchor
 * at the very end (the worst case: every rung scans the whole file), and the drift corpus's score.
 *
 * "match only" cases time the matchers alone on the same in-memory 10 MB text: keel's applyEdits
 * (the ladder, then the splice) against pi's applyEditsToNormalizedContent (exact, then its fuzzy
 * pass over the whole normalized file, then the splice), the function pi's edit tool runs between
 * reading and writing. pi does not export it, so it is imported from its file. An "edit call" case
 * times the whole tools (keel through Session.call, pi through execute).
 *
 * report() returns the corpus score table (test/drift/corpus.mjs: keel right/missed/wrong against
 * pi's). Standalone: `node --expose-gc bench/cases-drift.mjs` (after npm run build) prints both.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createEditToolDefinition } from "@mariozechner/pi-coding-agent";
import { applyEdits } from "../dist/edit/apply.js";
import { createSession } from "../dist/index.js";
import { CASES } from "../test/drift/corpus.mjs";
import { keelApply, piApply, runCase, scoreTable } from "../test/drift/score.mjs";
import { assert } from "./lib.mjs";

export const area = "drift";
export const title =
	"Drifted edits: keel's matching ladder vs pi 0.73.1's edit (10 MB file, anchor at the end)";
export const candidate = "keel";
export const baseline = "pi";

/** pi's matcher, from the file its edit tool imports it from. */
async function piMatcher() {
	const index = fileURLToPath(import.meta.resolve("@mariozechner/pi-coding-agent"));
	const file = join(dirname(index), "core", "tools", "edit-diff.js");
	return (await import(pathToFileURL(file).href)).applyEditsToNormalizedContent;
}

const LOREM = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt";

/** ~10 MB of indented Python-like lines (every tenth blank), a method at the very end. */
function bigText(value) {
	const lines = [];
	for (let i = 0; i < 100_000; i++)
		lines.push(i % 10 === 9 ? "" : `    ${"  ".repeat(i % 3)}x${i % 97} = call(${i % 13})  # ${LOREM}`);
	lines.push("    def tail(self):", `        a = ${value}`, "", "", "        return a");
	return `${lines.join("\n")}\n`;
}

const exact = (v) => `    def tail(self):\n        a = ${v}\n\n\n        return a`;
const lastRung = (v) => `def tail(self):\n    a = ${v}\n\n    return a\n`;

/** [oldText, newText] changing the method at the end from a = 1 to a = 2, drifted as each case needs. */
const EDITS = {
	exact: [exact(1), exact(2)],
	// trailing blanks the file lacks: keel's "normalized" rung, pi's fuzzy pass
	trailing: [`    def tail(self):  \n        a = 1  \n\n\n        return a  `, exact(2)],
	// flush left, one blank line where the file has two: keel's last rung; pi cannot match
	lastRung: [lastRung(1), lastRung(2)],
};
const edit = (kind) => [{ oldText: EDITS[kind][0], newText: EDITS[kind][1] }];

let rows = [];

export function report() {
	const n = (tool, s) => rows.filter((r) => r[tool] === s).length;
	return [
		`#### Drift corpus (${rows.length} cases, test/drift/corpus.mjs)`,
		"",
		scoreTable(rows),
		"",
		`keel lands ${n("keel", "right")} of ${rows.length}, pi ${n("pi", "right")}; wrong (the file changed, but not into the expected one): keel ${n("keel", "wrong")}, pi ${n("pi", "wrong")}.`,
	].join("\n");
}

async function scoreCorpus(dir) {
	await mkdir(join(dir, "keel"), { recursive: true });
	await mkdir(join(dir, "pi"), { recursive: true });
	const session = await createSession({ root: join(dir, "keel") });
	const keel = keelApply(session);
	const pi = piApply(createEditToolDefinition(join(dir, "pi")));
	rows = [];
	try {
		for (const [i, c] of CASES.entries()) {
			const k = await runCase(c, join(dir, "keel"), `case-${i}`, keel);
			const p = await runCase(c, join(dir, "pi"), `case-${i}`, pi);
			rows.push({ category: c.category, name: c.name, keel: k.score, pi: p.score });
		}
	} finally {
		await session.close();
	}
	assert(
		rows.every((r) => r.keel !== "wrong"),
		"keel got a drift case wrong: run npx vitest run test/drift",
	);
}

/**
 * @param {{dir: string}} env  a fresh temp directory owned by this area
 */
export async function setup({ dir }) {
	await scoreCorpus(join(dir, "corpus"));
	const applyPi = await piMatcher();
	const text = { 1: bigText(1), 2: bigText(2) };
	assert(text[1].length > 10_000_000, "the big file is 10 MB");

	// In memory: each call edits the 1-version into the 2-version; nothing is written.
	const keelMatch = (kind) => () => {
		const r = applyEdits(text[1], edit(kind), "big.py");
		if (r.text.length !== text[2].length) throw new Error("keel: unexpected result");
	};
	const piMatch = (kind, lands) => () => {
		try {
			applyPi(text[1], edit(kind), "big.py");
			if (!lands) throw new Error("pi matched an anchor it was expected to miss");
		} catch (e) {
			if (lands || !/Could not find/.test(String(e))) throw e;
		}
	};
	const matchCase = (name, kind, rung, piLands) => ({
		name,
		iterations: 20,
		warmup: 3,
		gcEach: true,
		check() {
			const r = applyEdits(text[1], edit(kind), "big.py");
			assert(r.matched[0] === rung, `${name}: keel matched on ${r.matched[0]}, expected ${rung}`);
			assert(r.text === text[2], `${name}: keel's result is not the expected file`);
			piMatch(kind, piLands)();
		},
		contenders: [
			{ label: "keel", run: keelMatch(kind) },
			{ label: "pi", run: piMatch(kind, piLands) },
		],
	});
	const noMatch = {
		name: "match only: no match anywhere (keel: all four rungs; pi: exact, then fuzzy)",
		iterations: 20,
		warmup: 3,
		gcEach: true,
		contenders: [
			{
				label: "keel",
				run: () => {
					try {
						applyEdits(text[1], [{ oldText: lastRung(7), newText: "x" }], "big.py");
					} catch (e) {
						if (e.code !== "NO_MATCH") throw e;
						return;
					}
					throw new Error("keel matched an anchor that is not in the file");
				},
			},
			{
				label: "pi",
				run: () => {
					try {
						applyPi(text[1], [{ oldText: lastRung(7), newText: "x" }], "big.py");
					} catch (e) {
						if (/Could not find/.test(String(e))) return;
						throw e;
					}
					throw new Error("pi matched an anchor that is not in the file");
				},
			},
		],
	};

	// Whole tool calls on a real file: keel lands the drifted edit (toggling 1 <-> 2), pi refuses it.
	const path = "big.py";
	const abs = join(dir, path);
	writeFileSync(abs, text[1]);
	const session = await createSession({ root: dir });
	const piEdit = createEditToolDefinition(dir);
	let cur = 1;
	const keelCall = async () => {
		const next = 3 - cur;
		const r = await session.call("edit", {
			path,
			edits: [{ oldText: lastRung(cur), newText: lastRung(next) }],
		});
		if (!r.ok) throw new Error(`keel edit failed: ${r.error.code}: ${r.error.message}`);
		cur = next;
	};
	const piCall = async () => {
		try {
			await piEdit.execute(
				"bench",
				{ path, edits: [{ oldText: lastRung(cur), newText: lastRung(3 - cur) }] },
				undefined,
				undefined,
				undefined,
			);
		} catch (e) {
			if (/Could not find/.test(String(e))) return;
			throw e;
		}
		throw new Error("pi landed the drifted edit");
	};
	const callCase = {
		name: "edit call: drifted anchor at the end (keel lands on its last rung and writes; pi reads and refuses)",
		iterations: 20,
		warmup: 3,
		gcEach: true,
		async check() {
			await keelCall();
			assert(readFileSync(abs, "utf8") === text[2], "keel's drifted edit did not land");
			await keelCall();
			assert(readFileSync(abs, "utf8") === text[1], "keel's drifted edit did not land back");
			await piCall();
		},
		contenders: [
			{ label: "keel", run: keelCall },
			{ label: "pi", run: piCall },
		],
	};

	return {
		cases: [
			matchCase("match only: exact anchor at the end (both: exact)", "exact", "exact", true),
			matchCase(
				"match only: trailing-blank drift at the end (keel: normalized rung; pi: fuzzy)",
				"trailing",
				"normalized",
				true,
			),
			matchCase(
				"match only: indentation + blank-line drift at the end (keel: last rung; pi: not found)",
				"lastRung",
				"blankLines",
				false,
			),
			noMatch,
			callCase,
		],
		teardown: () => session.close(),
	};
}

// Standalone run: both tables on stdout.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const { compare, comparisonTable } = await import("./lib.mjs");
	const root = await mkdtemp(join(tmpdir(), "keel-bench-drift-"));
	try {
		const { cases, teardown } = await setup({ dir: root });
		const results = [];
		try {
			for (const c of cases) {
				await c.check?.();
				results.push(await compare(c));
				process.stderr.write(`[drift] ${c.name}\n`);
			}
		} finally {
			await teardown();
		}
		process.stdout.write(
			`### ${title}\n\n${comparisonTable(results, { candidate, baseline })}\n\n${report()}\n`,
		);
	} finally {
		await rm(root, { recursive: true, force: true });
	}
}
