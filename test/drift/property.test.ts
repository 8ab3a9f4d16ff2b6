/**
 * Property: for any file and any unique anchor, drifting the anchor the way models drift and then
 * editing gives exactly the file the undrifted edit gives, or a refusal; never a different file.
 *
 * Files are code-like: nested lines (tabs, 2 or 4 spaces), each with a unique token, some with
 * curly quotes, double spaces or trailing blanks, blank lines (some of blanks), LF or CRLF, with
 * or without a final newline. The anchor is a run of whole lines with at least two non-blank ones;
 * the edit inserts a line after one of them (at the next one's depth; right after it, before any
 * blank lines, which is where keel puts lines added next to blank lines the model did not see) and
 * may change another (never the first, nor a last
 * one with trailing blanks: an anchor that drops those is an exact substring there, and exact
 * semantics replace only the substring). The model's copy of the anchor and of its
 * newText are rendered with a random set of drifts: another indentation style, a uniform offset
 * (flush left or deeper), straight quotes, collapsed spaces, no trailing blanks, blank lines
 * dropped or added, CRLF, a final newline the file lacks.
 */
import { readFile, writeFile } from "node:fs/promises";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

/** DRIFT_RUNS=3000 for a longer search. */
const RUNS = Number(process.env.DRIFT_RUNS ?? 250);

type Style = "tab" | "s2" | "s4";
const indent = (depth: number, style: Style) =>
	style === "tab" ? "\t".repeat(depth) : " ".repeat(depth * (style === "s2" ? 2 : 4));

interface Line {
	blank: boolean;
	depth: number;
	/** Content as the file has it, and as a model that folds quotes and spaces sees it. */
	content: string;
	plain: string;
	trailing: string;
}

const lineArb = fc.record({
	/** 0: a blank line (one in six). */
	blankWeight: fc.nat(5),
	delta: fc.integer({ min: -2, max: 1 }),
	curly: fc.boolean(),
	double: fc.boolean(),
	trailing: fc.constantFrom("", "", "", " ", "\t", "  "),
});

const fileArb = fc.record({
	style: fc.constantFrom<Style>("tab", "s2", "s4"),
	lines: fc.array(lineArb, { minLength: 3, maxLength: 30 }),
	crlf: fc.boolean(),
	finalNewline: fc.boolean(),
});

const driftArb = fc.record({
	style: fc.constantFrom<Style>("tab", "s2", "s4"),
	offset: fc.constantFrom<"none" | "flush" | "deeper">("none", "flush", "deeper"),
	straightQuotes: fc.boolean(),
	collapse: fc.boolean(),
	stripTrailing: fc.boolean(),
	blanks: fc.constantFrom<"keep" | "drop" | "add">("keep", "drop", "add"),
	crlf: fc.boolean(),
	eofNewline: fc.boolean(),
});

const editArb = fc.record({
	from: fc.nat(),
	len: fc.nat(8),
	insertAt: fc.nat(),
	change: fc.option(fc.nat()),
});

type FileSpec = typeof fileArb extends fc.Arbitrary<infer T> ? T : never;
type Drift = typeof driftArb extends fc.Arbitrary<infer T> ? T : never;
type EditSpec = typeof editArb extends fc.Arbitrary<infer T> ? T : never;

function buildLines(spec: FileSpec): Line[] {
	let depth = 0;
	return spec.lines.map((l, id) => {
		if (l.blankWeight === 0) return { blank: true, depth: 0, content: "", plain: "", trailing: l.trailing };
		depth = Math.max(0, Math.min(4, depth + l.delta));
		const q = l.curly ? ["“", "”"] : ['"', '"'];
		const eq = l.double ? "  =  " : " = ";
		return {
			blank: false,
			depth,
			content: `v${id}${eq}f${id}(${q[0]}s${id}${q[1]})`,
			plain: `v${id} = f${id}("s${id}")`,
			trailing: l.trailing,
		};
	});
}

function renderFile(lines: Line[], spec: FileSpec): string {
	const eol = spec.crlf ? "\r\n" : "\n";
	const body = lines.map((l) =>
		l.blank ? l.trailing : indent(l.depth, spec.style) + l.content + l.trailing,
	);
	return body.join(eol) + (spec.finalNewline ? eol : "");
}

/** A line the edit adds or puts in place of another. */
interface Extra {
	depth: number;
	text: string;
}

interface Planned {
	from: number;
	to: number;
	/** The new line goes right after this line (before any blank lines that follow it). */
	insertAfter: number;
	insert: Extra;
	change?: { at: number; extra: Extra };
}

function plan(lines: Line[], e: EditSpec, caseNo: number): Planned | undefined {
	const code = lines.map((l, i) => (l.blank ? -1 : i)).filter((i) => i >= 0);
	if (code.length < 2) return undefined;
	const a = e.from % (code.length - 1);
	const b = a + 1 + (e.len % (code.length - a - 1));
	const from = code[a];
	const to = code[b];
	const inRange = code.slice(a + 1, b + 1);
	const insertBefore = inRange[e.insertAt % inRange.length];
	const insertAfter = code[code.indexOf(insertBefore) - 1];
	const insert = { depth: lines[insertBefore].depth, text: `added${caseNo}()` };
	const change =
		e.change === null
			? undefined
			: (() => {
					// Changing the last line when it has trailing blanks: an anchor without them is an
					// exact substring there, and exact semantics leave the blanks after the replacement.
					const can = inRange.filter((i) => i !== to || lines[i].trailing === "");
					if (can.length === 0) return undefined;
					const at = can[e.change % can.length];
					return { at, extra: { depth: lines[at].depth, text: `changed${caseNo}()` } };
				})();
	return { from, to, insertAfter, insert, change };
}

/** oldText and newText for lines [from, to], rendered by `line` (a file line) and `extra` (a new one). */
function texts(
	lines: Line[],
	p: Planned,
	line: (l: Line) => string,
	extra: (x: Extra) => string,
	blanks: Drift["blanks"],
): { oldText: string; newText: string } {
	const old: string[] = [];
	const next: string[] = [];
	for (let i = p.from; i <= p.to; i++) {
		const l = lines[i];
		if (l.blank && blanks === "drop") continue;
		old.push(line(l));
		next.push(p.change?.at === i ? extra(p.change.extra) : line(l));
		if (i === p.insertAfter) next.push(extra(p.insert));
		if (i === p.from && blanks === "add") {
			old.push("");
			next.push("");
		}
	}
	return { oldText: old.join("\n"), newText: next.join("\n") };
}

let session: Session;
let fileNo = 0;

const ws = useWorkspace({ prefix: "keel-drift-prop-", shared: true });
beforeAll(async () => {
	session = ws().session;
});

async function edit(text: string, oldText: string, newText: string) {
	const path = `f${fileNo++}.txt`;
	await writeFile(ws().path(path), text);
	const r = await session.call("edit", { path, edits: [{ oldText, newText }] });
	return { r, after: await readFile(ws().path(path), "utf8") };
}

describe("drifted anchors edit like the undrifted ones, or are refused", () => {
	it(`through the pi-profile edit tool (${RUNS} runs)`, async () => {
		const stats = { runs: 0, landed: 0, refused: 0, rungs: {} as Record<string, number> };
		await fc.assert(
			fc.asyncProperty(fileArb, driftArb, editArb, async (spec, drift, e) => {
				const lines = buildLines(spec);
				const caseNo = fileNo;
				const p = plan(lines, e, caseNo);
				if (!p) return;
				const original = renderFile(lines, spec);
				const fileLine = (l: Line) =>
					l.blank ? l.trailing : indent(l.depth, spec.style) + l.content + l.trailing;
				const base = texts(lines, p, fileLine, (x) => indent(x.depth, spec.style) + x.text, "keep");
				const undrifted = await edit(original, base.oldText, base.newText);
				if (!undrifted.r.ok) throw new Error(`undrifted edit failed: ${JSON.stringify(undrifted.r.error)}`);

				const shift = (d: number) => {
					if (drift.offset === "flush") {
						const min = Math.min(
							...lines
								.slice(p.from, p.to + 1)
								.filter((l) => !l.blank)
								.map((l) => l.depth),
						);
						return d - min;
					}
					return drift.offset === "deeper" ? d + 1 : d;
				};
				const modelLine = (l: Line) => {
					if (l.blank) return drift.stripTrailing ? "" : l.trailing;
					let c = l.content;
					if (drift.straightQuotes) c = c.replace(/[“”]/g, '"');
					if (drift.collapse) c = c.replace(/ {2,}/g, " ");
					return indent(shift(l.depth), drift.style) + c + (drift.stripTrailing ? "" : l.trailing);
				};
				const model = texts(
					lines,
					p,
					modelLine,
					(x) => indent(shift(x.depth), drift.style) + x.text,
					drift.blanks,
				);
				// Blank lines the model does not see, next to a line it replaced and one it added: its
				// text cannot say on which side of them the new line goes. Not pinned here.
				const hidden = drift.blanks === "drop" && lines.slice(p.from, p.to + 1).some((l) => l.blank);
				if (hidden && p.change) return;
				const atEnd = p.to === lines.length - 1 && !spec.finalNewline && drift.eofNewline;
				let { oldText, newText } = model;
				if (atEnd) [oldText, newText] = [`${oldText}\n`, `${newText}\n`];
				if (drift.crlf) [oldText, newText] = [oldText.replace(/\n/g, "\r\n"), newText.replace(/\n/g, "\r\n")];
				const drifted = await edit(original, oldText, newText);
				stats.runs++;
				if (!drifted.r.ok) {
					expect(["NO_MATCH", "AMBIGUOUS_MATCH"]).toContain(drifted.r.error.code);
					expect(drifted.after).toBe(original);
					stats.refused++;
					return;
				}
				stats.landed++;
				const rung = String((drifted.r.details as { matched: string[] }).matched[0]);
				stats.rungs[rung] = (stats.rungs[rung] ?? 0) + 1;
				expect(
					drifted.after,
					`drift ${JSON.stringify(drift)}\noldText ${JSON.stringify(oldText)}\nnewText ${JSON.stringify(newText)}\nfile ${JSON.stringify(original)}`,
				).toBe(undrifted.after);
			}),
			{ numRuns: RUNS },
		);
		console.info(`drift property: ${JSON.stringify(stats)}`);
		// Every line carries a unique token, so a drifted anchor is never ambiguous: all must land.
		expect(stats.refused).toBe(0);
		for (const r of ["exact", "normalized", "indentation", "blankLines"])
			expect(stats.rungs[r], r).toBeGreaterThan(0);
	}, 120_000);
});
