/**
 * Property tests of text edits on real files, through the unified `file`
 * tool and through the pi `edit` tool.
 *
 * Files: 1–24 lines of ASCII, punctuation (incl. `$&`, quotes, backslashes), tabs, trailing
 * blanks, BMP and astral Unicode (emoji with modifiers, flags, combining marks, U+2028); endings
 * all LF, all CRLF or mixed per line; a final line with or without an ending; BOM or not.
 * Edits: 1–3 per call, each anchored on a marker token inserted into a distinct line, so every
 * oldText is unique by construction; oldText reaches a random distance around its marker, up to
 * two lines either way, and is sent either LF-normalized or exactly as on disk; newText is random
 * text (with newlines) around its own unique marker, so the inverse edit is unique as well.
 *
 * For every run:
 *  (a) the inverse edit (newText → oldText) restores the original bytes exactly, whenever the
 *      forward edit kept the information needed to do so (see `lossless` below). When it did not,
 *      the inverse still restores the text (LF view), and every byte outside the edited regions;
 *  (b) every line the edit did not touch is byte-identical, ending included, at its shifted
 *      position; more strictly, every byte outside the edited regions is unchanged, and a
 *      replacement's newlines use the ending of the lines it replaced when those agree;
 *  (c) the BOM is kept (and never added), and the result is valid UTF-8.
 *
 * Why (a) is exact only for "lossless" edits: both tools take oldText/newText LF-normalized (a
 * "\r\n" in them is read as "\n"), so once an edit has replaced CRLF lines by text without a line
 * break, or lines with mixed endings by one text, the file no longer says which ending each
 * restored line had; the inverse then uses the file's dominant ending. No tool with this input
 * contract can restore those bytes, so for such edits (a) asserts the text and the bytes around.
 *
 * Last, an edit that would split an astral character, or that brings a lone surrogate, must be
 * refused with the file left byte-identical.
 */
import { readFile, writeFile } from "node:fs/promises";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

const RUNS = 150;
const BOM = "\uFEFF";
const BOM_BYTES = Buffer.from([0xef, 0xbb, 0xbf]);

type Ending = "\n" | "\r\n";

const ASCII = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"];
const SPECIAL = [
	" ",
	" ",
	"\t",
	"$",
	"&",
	"$&",
	"$1",
	"'",
	'"',
	"`",
	"\\",
	"{",
	"}",
	"(",
	")",
	"[",
	"]",
	"<",
	">",
];
const SPECIAL2 = [";", ":", ",", ".", "!", "?", "-", "_", "=", "+", "*", "/", "%", "^", "|", "~", "#", "@"];
const UNICODE = [
	"é",
	"e\u0301",
	"ß",
	"中",
	"文",
	"ж",
	"ع",
	"→",
	"—",
	"\u00a0",
	"\u200b",
	"\u2028",
	"\u000b",
	"\u000c",
	"\u001b",
	"\uE000",
	"😀",
	"𝄞",
	"𠜎",
	"👍🏽",
	"🇫🇷",
	"\u{10FFFD}",
];
const ASTRAL = /[\uD800-\uDBFF][\uDC00-\uDFFF]/;

// One unit is one or more whole code points: never half a surrogate pair, never "\r" or "\n",
// never U+FEFF, never the marker brackets.
const unitArb = fc.oneof(
	{ weight: 6, arbitrary: fc.constantFrom(...ASCII) },
	{ weight: 3, arbitrary: fc.constantFrom(...SPECIAL, ...SPECIAL2) },
	{ weight: 3, arbitrary: fc.constantFrom(...UNICODE) },
);

const fileArb = fc.record({
	bom: fc.boolean(),
	lines: fc.array(fc.array(unitArb, { maxLength: 16 }), { minLength: 1, maxLength: 24 }),
	style: fc.constantFrom("lf", "crlf", "mixed"),
	crlfAt: fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
	finalEnding: fc.boolean(),
});

const editSeedArb = fc.record({
	line: fc.nat(),
	col: fc.nat(),
	back: fc.nat(),
	fwd: fc.nat(),
	backLines: fc.constantFrom(0, 0, 0, 1, 2),
	fwdLines: fc.constantFrom(0, 0, 0, 1, 2),
	newText: fc.array(
		fc.oneof({ weight: 6, arbitrary: unitArb }, { weight: 1, arbitrary: fc.constant("\n") }),
		{ maxLength: 20 },
	),
	markAt: fc.nat(),
	asOnDisk: fc.boolean(),
});

const caseArb = fileArb.chain((file) =>
	fc
		.uniqueArray(editSeedArb, {
			minLength: 1,
			maxLength: Math.min(3, file.lines.length),
			selector: (e) => e.line % file.lines.length,
		})
		.map((edits) => ({ file, edits })),
);

/** The value type of an arbitrary. */
type Infer<A> = A extends fc.Arbitrary<infer T> ? T : never;

type Case = { file: Infer<typeof fileArb>; edits: Infer<typeof editSeedArb>[] };

interface Unit {
	/** The unit in the LF view. */
	lf: string;
	/** The unit as on disk ("\r\n" for a CRLF line break). */
	raw: string;
}

interface PlannedEdit {
	oldText: string;
	newText: string;
	/** oldText and newText in LF form. */
	oldLf: string;
	newLf: string;
	/** Region in the original body (without BOM), in UTF-16 offsets. */
	start: number;
	end: number;
	/** The ending all line breaks in the region use; "mixed"; or undefined when it has none. */
	regionEnding: Ending | "mixed" | undefined;
	/** Send anchors as on disk (CRLF kept) rather than LF-normalized. */
	asOnDisk: boolean;
	/** The inverse can restore the bytes: no line break replaced, or the replaced ones agree and newText keeps one. */
	lossless: boolean;
}

interface Built {
	bom: boolean;
	body: string;
	original: Buffer;
	edits: PlannedEdit[];
	mixed: boolean;
}

function build(c: Case, caseNo: number): Built {
	const n = c.file.lines.length;
	const endingOf = (i: number): Ending =>
		c.file.style === "crlf" || (c.file.style === "mixed" && c.file.crlfAt[i]) ? "\r\n" : "\n";
	const lines = c.file.lines.map((l) => [...l]);
	// A marker per edit, in a distinct line: the anchors are unique by construction.
	const seeds = [...c.edits].sort((a, b) => (a.line % n) - (b.line % n));
	seeds.forEach((s, j) => {
		const line = lines[s.line % n];
		line.splice(s.col % (line.length + 1), 0, `⟦O${caseNo}.${j}⟧`);
	});
	const units: Unit[] = [];
	const lineStart: number[] = [];
	const lineEnd: number[] = [];
	lines.forEach((line, i) => {
		lineStart.push(units.length);
		for (const u of line) units.push({ lf: u, raw: u });
		if (i < n - 1 || c.file.finalEnding) units.push({ lf: "\n", raw: endingOf(i) });
		lineEnd.push(units.length);
	});
	const offsets = [0];
	for (const u of units) offsets.push(offsets[offsets.length - 1] + u.raw.length);
	const body = units.map((u) => u.raw).join("");
	const markerAt = seeds.map((_, j) => units.findIndex((u) => u.lf === `⟦O${caseNo}.${j}⟧`));

	const edits: PlannedEdit[] = [];
	let prevEnd = 0;
	seeds.forEach((s, j) => {
		const p = markerAt[j];
		const line = s.line % n;
		const lo = Math.max(prevEnd, lineStart[Math.max(0, line - s.backLines)]);
		const hi = Math.min(
			j + 1 < seeds.length ? markerAt[j + 1] : units.length,
			lineEnd[Math.min(n - 1, line + s.fwdLines)],
		);
		const start = p - (s.back % (p - lo + 1));
		const end = p + 1 + (s.fwd % (hi - p));
		prevEnd = end;
		const region = units.slice(start, end);
		const newUnits = [...s.newText];
		newUnits.splice(s.markAt % (newUnits.length + 1), 0, `⟦N${caseNo}.${j}⟧`);
		const oldLf = region.map((u) => u.lf).join("");
		const newLf = newUnits.join("");
		const breaks = new Set(region.filter((u) => u.lf === "\n").map((u) => u.raw as Ending));
		const regionEnding = breaks.size === 0 ? undefined : breaks.size === 1 ? [...breaks][0] : "mixed";
		edits.push({
			oldText: s.asOnDisk ? region.map((u) => u.raw).join("") : oldLf,
			newText: newLf,
			oldLf,
			newLf,
			start: offsets[start],
			end: offsets[end],
			regionEnding,
			asOnDisk: s.asOnDisk,
			lossless: regionEnding === undefined || (regionEnding !== "mixed" && newLf.includes("\n")),
		});
	});
	const original = Buffer.from((c.file.bom ? BOM : "") + body, "utf8");
	const breaks = new Set(units.filter((u) => u.lf === "\n").map((u) => u.raw));
	return { bom: c.file.bom, body, original, edits, mixed: breaks.size > 1 };
}

const render = (lf: string, ending: Ending) => (ending === "\n" ? lf : lf.replace(/\n/g, "\r\n"));

interface Replacement {
	start: number;
	end: number;
	lf: string;
	/** The ending the replacement's line breaks must use; undefined: either, but all the same. */
	required?: Ending;
}

interface Placed {
	start: number;
	end: number;
	text: string;
}

/**
 * `actual` must be `before` with each region replaced by its text rendered with one line ending,
 * and nothing else changed. Returns where each replacement landed in `actual`.
 */
function checkSplice(actual: string, before: string, replacements: Replacement[], what: string): Placed[] {
	const placed: Placed[] = [];
	let pos = 0;
	let cursor = 0;
	for (const [j, r] of replacements.entries()) {
		const seg = before.slice(cursor, r.start);
		if (actual.slice(pos, pos + seg.length) !== seg) {
			throw new Error(
				`${what}: bytes before region ${j} changed: expected ${JSON.stringify(seg)} at ${pos}, got ${JSON.stringify(actual.slice(pos, pos + seg.length))}`,
			);
		}
		pos += seg.length;
		const candidates = r.required
			? [render(r.lf, r.required)]
			: [...new Set([render(r.lf, "\n"), render(r.lf, "\r\n")])];
		const hit = candidates.find((t) => actual.startsWith(t, pos));
		if (hit === undefined) {
			throw new Error(
				`${what}: region ${j} is not its replacement${r.required ? ` with ${JSON.stringify(r.required)} endings` : ""}: expected one of ${JSON.stringify(candidates)} at ${pos}, got ${JSON.stringify(actual.slice(pos, pos + candidates[0].length + 4))}`,
			);
		}
		placed.push({ start: pos, end: pos + hit.length, text: hit });
		pos += hit.length;
		cursor = r.end;
	}
	const tail = before.slice(cursor);
	if (actual.slice(pos) !== tail) {
		throw new Error(
			`${what}: bytes after the last region changed: expected ${JSON.stringify(tail)}, got ${JSON.stringify(actual.slice(pos))}`,
		);
	}
	return placed;
}

/** [start, end) of each line of `text`, its ending included. */
function lineSpans(text: string): Array<[number, number]> {
	const spans: Array<[number, number]> = [];
	let at = 0;
	while (at < text.length) {
		const nl = text.indexOf("\n", at);
		const end = nl === -1 ? text.length : nl + 1;
		spans.push([at, end]);
		at = end;
	}
	return spans;
}

/**
 * Line by line: every line of `before` that no region touches is in `after`, byte for byte with its
 * ending, as a whole line, shifted by the size changes of the regions before it.
 */
function checkUntouchedLines(
	after: string,
	before: string,
	regions: Array<{ start: number; end: number; newLength: number }>,
	what: string,
): number {
	let untouched = 0;
	for (const [ls, le] of lineSpans(before)) {
		if (!regions.every((r) => le <= r.start || ls > r.end)) continue;
		const shift = regions.filter((r) => r.end < ls).reduce((d, r) => d + r.newLength - (r.end - r.start), 0);
		const at = ls + shift;
		const line = before.slice(ls, le);
		const whole =
			(at === 0 || after[at - 1] === "\n") && (le < before.length || at + line.length === after.length);
		if (after.slice(at, at + line.length) !== line || !whole) {
			throw new Error(
				`${what}: untouched line ${JSON.stringify(line)} is not intact at ${at}: ${JSON.stringify(after.slice(at, at + line.length))}`,
			);
		}
		untouched++;
	}
	return untouched;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decode a file strictly; check its BOM is as expected; return the body. */
function bodyOf(bytes: Buffer, bom: boolean, what: string): string {
	expect(bytes.subarray(0, 3).equals(BOM_BYTES), `${what}: BOM ${bom ? "lost" : "added"}`).toBe(bom);
	const text = strictUtf8.decode(bytes);
	return bom ? text.slice(1) : text;
}

type Apply = (path: string, edits: Array<{ oldText: string; newText: string }>) => Promise<void>;

interface Stats {
	runs: number;
	lossless: number;
	lossy: number;
	bom: number;
	mixed: number;
	crlf: number;
	astral: number;
	multiEdit: number;
	multiLine: number;
	untouchedLines: number;
}

function newStats(): Stats {
	return {
		runs: 0,
		lossless: 0,
		lossy: 0,
		bom: 0,
		mixed: 0,
		crlf: 0,
		astral: 0,
		multiEdit: 0,
		multiLine: 0,
		untouchedLines: 0,
	};
}

let pi: Session;
let unified: Session;
let fileNo = 0;

async function checkCase(c: Case, apply: Apply, stats: Stats): Promise<void> {
	const caseNo = fileNo++;
	const b = build(c, caseNo);
	const path = `case-${caseNo}.txt`;
	const abs = ws().path(path);
	await writeFile(abs, b.original);

	// Forward edit.
	await apply(
		path,
		b.edits.map((e) => ({ oldText: e.oldText, newText: e.newText })),
	);
	const edited = bodyOf(await readFile(abs), b.bom, "after the edit");
	const forward = checkSplice(
		edited,
		b.body,
		b.edits.map((e) => ({
			start: e.start,
			end: e.end,
			lf: e.newLf,
			// (b) a replacement takes the ending of the line breaks it replaced, when they agree.
			required: e.regionEnding === "\n" || e.regionEnding === "\r\n" ? e.regionEnding : undefined,
		})),
		"after the edit",
	);
	stats.untouchedLines += checkUntouchedLines(
		edited,
		b.body,
		b.edits.map((e, j) => ({ start: e.start, end: e.end, newLength: forward[j].text.length })),
		"after the edit",
	);

	// Inverse edit: newText -> oldText, anchored on the new markers.
	await apply(
		path,
		b.edits.map((e, j) => ({ oldText: e.asOnDisk ? forward[j].text : e.newLf, newText: e.oldText })),
	);
	const restoredBytes = await readFile(abs);
	const restored = bodyOf(restoredBytes, b.bom, "after the inverse edit");
	const backward = checkSplice(
		restored,
		edited,
		b.edits.map((e, j) => ({
			start: forward[j].start,
			end: forward[j].end,
			lf: e.oldLf,
			required: e.newLf.includes("\n") ? (forward[j].text.includes("\r\n") ? "\r\n" : "\n") : undefined,
		})),
		"after the inverse edit",
	);
	checkUntouchedLines(
		restored,
		edited,
		forward.map((f, j) => ({ start: f.start, end: f.end, newLength: backward[j].text.length })),
		"after the inverse edit",
	);
	expect(restored.replace(/\r\n/g, "\n"), "the inverse edit restores the text").toBe(
		b.body.replace(/\r\n/g, "\n"),
	);
	const lossless = b.edits.every((e) => e.lossless);
	if (lossless) {
		// (a) exact bytes, BOM and every line ending included.
		expect(
			restoredBytes.equals(b.original),
			`the inverse edit restores the bytes: ${JSON.stringify(restored)} vs ${JSON.stringify(b.body)}`,
		).toBe(true);
	}

	stats.runs++;
	if (lossless) stats.lossless++;
	else stats.lossy++;
	if (b.bom) stats.bom++;
	if (b.mixed) stats.mixed++;
	if (b.body.includes("\r\n")) stats.crlf++;
	if (ASTRAL.test(b.body)) stats.astral++;
	if (b.edits.length > 1) stats.multiEdit++;
	if (b.edits.some((e) => e.oldLf.includes("\n") || e.newLf.includes("\n"))) stats.multiLine++;
}

function expectCoverage(stats: Stats): void {
	console.info(`property: ${JSON.stringify(stats)}`);
	expect(stats.runs).toBeGreaterThanOrEqual(RUNS);
	// Exact restoration was checked on a good share of the runs, and every kind of file came up.
	expect(stats.lossless).toBeGreaterThanOrEqual(RUNS / 4);
	for (const k of ["lossy", "bom", "mixed", "crlf", "astral", "multiEdit", "multiLine"] as const) {
		expect(stats[k], k).toBeGreaterThan(0);
	}
}

const ws = useWorkspace({ prefix: "keel-property-", shared: true });
beforeAll(async () => {
	pi = ws().session;
	unified = await ws().open({ profile: "unified" });
});

describe("edit, then its inverse, on real files", () => {
	it(`through the file tool (${RUNS} runs)`, async () => {
		const stats = newStats();
		const apply: Apply = async (path, edits) => {
			const r = await unified.call("file", { queries: [{ type: "edit", path, edits }] });
			if (!r.ok) throw new Error(`file edit failed: ${r.error.code}: ${r.error.message}`);
		};
		await fc.assert(
			fc.asyncProperty(caseArb, (c) => checkCase(c, apply, stats)),
			{ numRuns: RUNS },
		);
		expectCoverage(stats);
	}, 120_000);

	it(`through the pi edit tool (${RUNS} runs)`, async () => {
		const stats = newStats();
		const apply: Apply = async (path, edits) => {
			const r = await pi.call("edit", { path, edits });
			if (!r.ok) throw new Error(`edit failed: ${r.error.code}: ${r.error.message}`);
		};
		await fc.assert(
			fc.asyncProperty(caseArb, (c) => checkCase(c, apply, stats)),
			{ numRuns: RUNS },
		);
		expectCoverage(stats);
	}, 120_000);
});

/**
 * An edit whose result cannot be encoded (it would split an astral character, or it brings a
 * lone surrogate) is refused as "change approach" and the file stays byte-identical. Without the
 * check, the orphaned half is written as U+FFFD: a byte outside the replaced text changes.
 */
const splitArb = fc.record({
	file: fileArb,
	line: fc.nat(),
	col: fc.nat(),
	astral: fc.constantFrom("😀", "𝄞", "𠜎", "👍🏽", "🇫🇷", "\u{10FFFD}"),
	how: fc.constantFrom(
		"oldText ends in a high surrogate",
		"oldText starts with a low surrogate",
		"newText has a lone high surrogate",
		"newText has a lone low surrogate",
	),
	newText: fc.array(unitArb, { maxLength: 8 }),
});

async function checkSplit(
	c: Infer<typeof splitArb>,
	apply: (
		path: string,
		edits: Array<{ oldText: string; newText: string }>,
	) => Promise<{ ok: boolean; retry?: string }>,
): Promise<void> {
	const caseNo = fileNo++;
	const marker = `⟦S${caseNo}⟧`;
	const lines = c.file.lines.map((l) => [...l]);
	const line = lines[c.line % lines.length];
	const lowFirst = c.how === "oldText starts with a low surrogate";
	line.splice(c.col % (line.length + 1), 0, ...(lowFirst ? [c.astral, marker] : [marker, c.astral]));
	const ending: Ending = c.file.style === "crlf" ? "\r\n" : "\n";
	const text = lines.map((l) => l.join("")).join(ending) + (c.file.finalEnding ? ending : "");
	const original = Buffer.from((c.file.bom ? BOM : "") + text, "utf8");
	const path = `split-${caseNo}.txt`;
	await writeFile(ws().path(path), original);
	const tail = c.newText.join("");
	const edit =
		c.how === "oldText ends in a high surrogate"
			? { oldText: marker + c.astral[0], newText: `X${tail}` }
			: lowFirst
				? { oldText: c.astral.slice(-1) + marker, newText: `X${tail}` }
				: c.how === "newText has a lone high surrogate"
					? { oldText: marker, newText: `${tail}\uD83D` }
					: { oldText: marker, newText: `\uDE00${tail}` };
	const r = await apply(path, [edit]);
	const after = await readFile(ws().path(path));
	expect(
		{ ok: r.ok, retry: r.retry, unchanged: after.equals(original) },
		`${c.how}: ${JSON.stringify(edit)} on ${JSON.stringify(text)} gave ${JSON.stringify(after.toString("utf8"))}`,
	).toEqual({
		ok: false,
		retry: "change-approach",
		unchanged: true,
	});
}

describe("an edit that would split a character is refused, the file untouched", () => {
	it("through the file tool", async () => {
		await fc.assert(
			fc.asyncProperty(splitArb, (c) =>
				checkSplit(c, async (path, edits) => {
					const r = await unified.call("file", { queries: [{ type: "edit", path, edits }] });
					return r.ok ? { ok: true } : { ok: false, retry: r.error.retry };
				}),
			),
			{ numRuns: 100 },
		);
	}, 60_000);

	it("through the pi edit tool", async () => {
		await fc.assert(
			fc.asyncProperty(splitArb, (c) =>
				checkSplit(c, async (path, edits) => {
					const r = await pi.call("edit", { path, edits });
					return r.ok ? { ok: true } : { ok: false, retry: r.error.retry };
				}),
			),
			{ numRuns: 100 },
		);
	}, 60_000);
});
