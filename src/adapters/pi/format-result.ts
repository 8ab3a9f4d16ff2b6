/**
 * The result row of each keel tool as plain lines: a pure function of (tool, result, options,
 * theme). Collapsed rows show a few lines of a bounded preview; expanded rows show everything.
 * edit and file results show their diffs. Timing is added by the caller (render.ts).
 */
import { COLLAPSED_LINES, textBlock } from "./format-call.js";
import { allLines, firstLines, headPreview, lastLines, tailPreview } from "./preview.js";
import type { ThemeLike } from "./theme.js";
import { sanitize } from "./view.js";

export interface ResultLike {
	content: ReadonlyArray<{ type: string; text?: string; mimeType?: string }>;
	details?: unknown;
}

export interface ResultOptions {
	expanded: boolean;
	isPartial: boolean;
	isError: boolean;
}

/** Diff lines shown per diff when collapsed. */
const COLLAPSED_DIFF_LINES = 12;
/** file results listed when collapsed. */
const COLLAPSED_RESULTS = 8;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === "object" ? (v as Obj) : undefined);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function textOf(result: ResultLike): string {
	const texts: string[] = [];
	for (const c of result.content) if (c.type === "text" && typeof c.text === "string") texts.push(c.text);
	return texts.length === 1 ? texts[0] : texts.join("\n");
}

function imageLines(result: ResultLike, theme: ThemeLike): string[] {
	const out: string[] = [];
	for (const c of result.content) {
		if (c.type === "image") out.push(theme.fg("muted", `[image ${c.mimeType ?? ""}]`.replace(" ]", "]")));
	}
	return out;
}

/** The last lines of command output; the end is what matters. */
function tailBlock(s: string, expanded: boolean, theme: ThemeLike, style: (l: string) => string): string[] {
	if (expanded) return allLines(s).map((l) => style(sanitize(l)));
	const p = tailPreview(s);
	const shown = lastLines(p.text, COLLAPSED_LINES);
	const hidden = p.lines - shown.length;
	const out = hidden > 0 ? [theme.fg("muted", `… ${plural(hidden, "earlier line")}`)] : [];
	for (const l of shown) out.push(style(sanitize(l)));
	return out;
}

/** A diff in pi's numbered format ("+12 text", "-12 text", " 12 text"), colored. */
export function diffLines(diff: string, expanded: boolean, theme: ThemeLike, indent = ""): string[] {
	const color = (l: string) =>
		theme.fg(
			l.startsWith("+") ? "toolDiffAdded" : l.startsWith("-") ? "toolDiffRemoved" : "toolDiffContext",
			indent + sanitize(l),
		);
	if (expanded) return allLines(diff).map(color);
	const p = headPreview(diff);
	const shown = firstLines(p.text, COLLAPSED_DIFF_LINES);
	const out = shown.map(color);
	const rest = p.lines - shown.length;
	if (rest > 0) out.push(theme.fg("muted", `${indent}… ${plural(rest, "more diff line")}`));
	return out;
}

/** "+3 -1": counted with startsWith at each line start, no copy of the diff. */
function diffStats(diff: string): string {
	let added = 0;
	let removed = 0;
	for (let at = 0; at < diff.length; ) {
		if (diff.startsWith("+", at)) added++;
		else if (diff.startsWith("-", at)) removed++;
		const nl = diff.indexOf("\n", at);
		if (nl === -1) break;
		at = nl + 1;
	}
	return `+${added} -${removed}`;
}

function editResult(result: ResultLike, o: ResultOptions, theme: ThemeLike): string[] {
	const diff = obj(result.details)?.diff;
	if (typeof diff !== "string" || diff === "") return textBlock(textOf(result), o.expanded, theme);
	const stats = diffStats(diff);
	return [
		`${theme.fg("success", "edited")} ${theme.fg("muted", stats)}`,
		...diffLines(diff, o.expanded, theme),
	];
}

function fileResults(details: unknown): Obj[] | undefined {
	const d = obj(details);
	const direct = d?.results;
	if (Array.isArray(direct)) return direct as Obj[];
	// A failed batch: pi hands back the error, whose details hold the per-query results.
	const nested = obj(obj(d?.error)?.details)?.results;
	return Array.isArray(nested) ? (nested as Obj[]) : undefined;
}

function fileResult(result: ResultLike, o: ResultOptions, theme: ThemeLike): string[] {
	const results = fileResults(result.details);
	if (!results) return textBlock(textOf(result), o.expanded, theme);
	const out: string[] = [];
	const shown = o.expanded ? results : results.slice(0, COLLAPSED_RESULTS);
	for (const r of shown) {
		const ok = r.ok === true;
		const mark = ok ? theme.fg("success", "✓") : theme.fg("error", "✗");
		const summary = typeof r.summary === "string" ? r.summary : `${r.type} ${r.path}`;
		out.push(`${mark} ${textBlock(summary, false, theme, (l) => l, 1)[0] ?? ""}`);
		if (typeof r.contentRef === "string")
			out.push(theme.fg("muted", `  contentRef ${sanitize(r.contentRef)}`));
		if (typeof r.diff === "string" && r.diff !== "") out.push(...diffLines(r.diff, o.expanded, theme, "  "));
	}
	if (shown.length < results.length) out.push(theme.fg("muted", `… ${results.length - shown.length} more`));
	return out;
}

function errorLines(tool: string, text: string, o: ResultOptions, theme: ThemeLike): string[] {
	const style = (l: string) => theme.fg("toolOutput", sanitize(l));
	const p = headPreview(text);
	const head = firstLines(p.text, o.expanded ? 1 : COLLAPSED_LINES);
	const out = [theme.fg("error", sanitize(head[0] ?? ""))];
	const rest = p.lines - 1;
	if (rest <= 0) return out;
	if (o.expanded) return [...out, ...allLines(text).slice(1).map(style)];
	if (tool === "bash" || tool === "python") {
		// Command output: its end (and the exit status) matters more than its start.
		const n = Math.min(COLLAPSED_LINES, rest);
		if (rest > n) out.push(theme.fg("muted", `… ${plural(rest - n, "earlier line")}`));
		return [...out, ...lastLines(tailPreview(text).text, n).map(style)];
	}
	out.push(...head.slice(1).map(style));
	if (p.lines > head.length) out.push(theme.fg("muted", `… ${plural(p.lines - head.length, "more line")}`));
	return out;
}

/** The result row of `tool` (without timing). */
export function resultLines(tool: string, result: ResultLike, o: ResultOptions, theme: ThemeLike): string[] {
	const images = imageLines(result, theme);
	const text = textOf(result);
	if (tool === "file" && fileResults(result.details)) {
		// A failed batch still lists each query: which ones ran, which failed, and their diffs.
		if (!o.isError) return fileResult(result, o, theme);
		const [first = ""] = firstLines(headPreview(text).text, 1);
		return [theme.fg("error", sanitize(first)), ...fileResult(result, o, theme)];
	}
	if (o.isError) return [...errorLines(tool, text, o, theme), ...images];
	if (o.isPartial && text === "") return images;
	switch (tool) {
		case "edit":
			if (!o.isPartial) return editResult(result, o, theme);
			break;
		case "bash":
		case "python":
			return [...tailBlock(text, o.expanded, theme, (l) => theme.fg("toolOutput", l)), ...images];
		case "write":
			return [theme.fg("success", sanitize(firstLines(headPreview(text, 512).text, 1)[0] ?? "written"))];
	}
	if (text === "") return images;
	return [...textBlock(text, o.expanded, theme), ...images];
}
