/**
 * The call row of each keel tool as plain lines: a pure function of (tool, args, expanded, theme).
 * Every string argument is seen through a bounded preview; the full text of an argument is
 * walked only when the row is expanded. Arguments may be partial while the model streams them.
 */
import { allLines, firstLines, headPreview, type Preview, sizeLabel } from "./preview.js";
import type { ThemeLike } from "./theme.js";
import { sanitize } from "./view.js";

/** Lines of a collapsed text preview. */
export const COLLAPSED_LINES = 6;
/** Characters of an inline value (a path, a pattern, a command's first line). */
const INLINE_CHARS = 240;
/** Queries of a `file` call listed when collapsed. */
const COLLAPSED_QUERIES = 8;

type Args = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);

/** The first line of a bounded head of `s`, sanitized. */
export function inline(s: string | undefined, limit = INLINE_CHARS): string {
	if (s === undefined) return "";
	const p = headPreview(s, limit);
	const [first = ""] = firstLines(p.text, 1);
	return sanitize(first) + (p.truncated || p.lines > 1 ? "…" : "");
}

/**
 * A text argument as lines: when collapsed, the first COLLAPSED_LINES lines of its bounded head and
 * a count of the rest; when expanded, all of it.
 */
export function textBlock(
	s: string,
	expanded: boolean,
	theme: ThemeLike,
	style: (line: string) => string = (l) => theme.fg("toolOutput", l),
	max = COLLAPSED_LINES,
	preview?: Preview,
): string[] {
	if (expanded) return allLines(s).map((l) => style(sanitize(l)));
	const p = preview ?? headPreview(s);
	const shown = firstLines(p.text, max);
	const out = shown.map((l) => style(sanitize(l)));
	const rest = p.lines - shown.length;
	if (rest > 0) out.push(theme.fg("muted", `… ${rest} more line${rest === 1 ? "" : "s"}`));
	else if (p.truncated) out.push(theme.fg("muted", "…"));
	return out;
}

const title = (name: string, theme: ThemeLike) => theme.fg("toolTitle", theme.bold(name));
const pathText = (p: unknown, theme: ThemeLike) =>
	theme.fg("accent", inline(str(p)) || theme.fg("muted", "…"));
const note = (s: string, theme: ThemeLike) => theme.fg("muted", ` (${s})`);

function readCall(a: Args, theme: ThemeLike): string[] {
	const offset = num(a.offset);
	const limit = num(a.limit);
	let range = "";
	if (offset !== undefined || limit !== undefined) {
		const from = offset ?? 1;
		range = theme.fg("warning", `:${from}${limit !== undefined ? `-${from + limit - 1}` : ""}`);
	}
	return [`${title("read", theme)} ${pathText(a.path, theme)}${range}`];
}

function writeCall(a: Args, expanded: boolean, theme: ThemeLike): string[] {
	const content = str(a.content);
	if (content === undefined) return [`${title("write", theme)} ${pathText(a.path, theme)}`];
	const p = headPreview(content);
	return [
		`${title("write", theme)} ${pathText(a.path, theme)}${note(sizeLabel(p), theme)}`,
		...textBlock(content, expanded, theme, undefined, COLLAPSED_LINES, p),
	];
}

function editBlocks(edits: unknown, expanded: boolean, theme: ThemeLike, indent = ""): string[] {
	if (!Array.isArray(edits)) return [];
	const out: string[] = [];
	const shown = expanded ? edits : edits.slice(0, 3);
	for (const e of shown) {
		const item = (e ?? {}) as Args;
		const oldText = str(item.oldText);
		const newText = str(item.newText);
		const del = (l: string) => theme.fg("toolDiffRemoved", `${indent}- ${l}`);
		const add = (l: string) => theme.fg("toolDiffAdded", `${indent}+ ${l}`);
		if (item.matchMode === "lineRange") {
			out.push(theme.fg("muted", `${indent}lines ${num(item.startLine) ?? "?"}-${num(item.endLine) ?? "?"}`));
		}
		if (oldText !== undefined) out.push(...textBlock(oldText, expanded, theme, del, 2));
		if (newText !== undefined) out.push(...textBlock(newText, expanded, theme, add, 2));
	}
	if (shown.length < edits.length) {
		const rest = edits.length - shown.length;
		out.push(theme.fg("muted", `${indent}… ${rest} more edit${rest === 1 ? "" : "s"}`));
	}
	return out;
}

function editCall(a: Args, expanded: boolean, theme: ThemeLike): string[] {
	const n = Array.isArray(a.edits) ? a.edits.length : 0;
	return [
		`${title("edit", theme)} ${pathText(a.path, theme)}${note(`${n} edit${n === 1 ? "" : "s"}`, theme)}`,
		...editBlocks(a.edits, expanded, theme),
	];
}

function commandCall(
	name: string,
	prefix: string,
	code: string | undefined,
	extra: string,
	expanded: boolean,
	theme: ThemeLike,
): string[] {
	if (code === undefined) return [`${title(prefix, theme)} ${theme.fg("accent", "…")}${extra}`];
	const p = headPreview(code);
	if (p.lines <= 1) {
		const [line = ""] = firstLines(p.text, 1);
		return [
			`${title(prefix, theme)} ${theme.fg("accent", sanitize(line) + (p.truncated ? "…" : ""))}${extra}`,
		];
	}
	// A multi-line script: show it as a block under the tool name.
	const style = (l: string) => theme.fg("accent", l);
	return [title(name, theme) + extra, ...textBlock(code, expanded, theme, style, COLLAPSED_LINES, p)];
}

function bashCall(a: Args, expanded: boolean, theme: ThemeLike): string[] {
	const t = num(a.timeout);
	return commandCall("bash", "$", str(a.command), t ? note(`timeout ${t}s`, theme) : "", expanded, theme);
}

function pythonCall(a: Args, expanded: boolean, theme: ThemeLike): string[] {
	const script = str(a.scriptPath);
	if (script !== undefined) return [`${title("python", theme)} ${pathText(script, theme)}`];
	const t = num(a.timeout);
	return commandCall("python", ">>>", str(a.code), t ? note(`timeout ${t}s`, theme) : "", expanded, theme);
}

function flags(a: Args, keys: string[]): string {
	const parts: string[] = [];
	for (const k of keys) {
		const v = a[k];
		if (v === undefined || v === false) continue;
		parts.push(v === true ? k : `${k}=${typeof v === "string" ? inline(v, 80) : String(v)}`);
	}
	return parts.join(", ");
}

function searchCall(name: string, a: Args, keys: string[], theme: ThemeLike): string[] {
	let line = title(name, theme);
	const where = inline(str(a.path)) || ".";
	if (a.pattern !== undefined) {
		line += ` ${theme.fg("accent", inline(str(a.pattern)))}${theme.fg("muted", ` in ${where}`)}`;
	} else line += ` ${theme.fg("accent", where)}`;
	const f = flags(a, keys);
	return [f ? line + note(f, theme) : line];
}

function queryLines(q: Args, expanded: boolean, theme: ThemeLike): string[] {
	const type = str(q.type) ?? "?";
	let head = `  ${theme.fg("toolTitle", type)} ${pathText(q.path, theme)}`;
	const content = str(q.content);
	if (content !== undefined) head += note(sizeLabel(headPreview(content, 0)), theme);
	if (str(q.contentRef)) head += note(`contentRef ${inline(str(q.contentRef), 80)}`, theme);
	if (str(q.payloadRef)) head += note(`payloadRef ${inline(str(q.payloadRef), 80)}`, theme);
	if (Array.isArray(q.edits)) head += note(`${q.edits.length} edit${q.edits.length === 1 ? "" : "s"}`, theme);
	if (!expanded) return [head];
	const out = [head];
	if (content !== undefined)
		out.push(...textBlock(content, true, theme, (l) => theme.fg("toolOutput", `    ${l}`)));
	out.push(...editBlocks(q.edits, true, theme, "    "));
	return out;
}

function fileCall(a: Args, expanded: boolean, theme: ThemeLike): string[] {
	const queries = Array.isArray(a.queries) ? a.queries : [];
	const n = queries.length;
	const out = [`${title("file", theme)}${note(`${n} quer${n === 1 ? "y" : "ies"}`, theme)}`];
	const shown = expanded ? queries : queries.slice(0, COLLAPSED_QUERIES);
	for (const q of shown) out.push(...queryLines((q ?? {}) as Args, expanded, theme));
	if (shown.length < n) out.push(theme.fg("muted", `  … ${n - shown.length} more`));
	return out;
}

function genericCall(name: string, a: Args, theme: ThemeLike): string[] {
	const parts: string[] = [];
	for (const [k, v] of Object.entries(a)) {
		if (typeof v === "string") parts.push(`${k}=${inline(v, 80)}`);
		else if (typeof v === "number" || typeof v === "boolean") parts.push(`${k}=${v}`);
		else if (Array.isArray(v)) parts.push(`${k}=[${v.length}]`);
		else if (v && typeof v === "object") parts.push(`${k}={…}`);
	}
	return [title(name, theme) + (parts.length ? ` ${theme.fg("muted", parts.join(" "))}` : "")];
}

/** The call row of `tool` with `args`. */
export function callLines(tool: string, args: unknown, expanded: boolean, theme: ThemeLike): string[] {
	const a = (args && typeof args === "object" ? args : {}) as Args;
	switch (tool) {
		case "read":
			return readCall(a, theme);
		case "write":
			return writeCall(a, expanded, theme);
		case "edit":
			return editCall(a, expanded, theme);
		case "bash":
			return bashCall(a, expanded, theme);
		case "python":
			return pythonCall(a, expanded, theme);
		case "grep":
			return searchCall("grep", a, ["glob", "ignoreCase", "literal", "context", "limit"], theme);
		case "find":
			return searchCall("find", a, ["limit"], theme);
		case "ls":
			return searchCall("ls", a, ["limit"], theme);
		case "file":
			return fileCall(a, expanded, theme);
		default:
			return genericCall(tool, a, theme);
	}
}
