/**
 * The syntax check of a change: the file is parsed after the change (and, only when that parse has
 * errors, before it) and the errors the change introduced are reported: never the ones the file
 * already had. An error is "already there" when the text before had an error of the same kind on a
 * line with the same text (so lines moved by the change still match). Reported per file: a few
 * errors with line, column and a short excerpt; a call reports a few files.
 *
 * Cost: a session keeps the last parse tree of each file it changed (a few files, bounded), so the
 * next change of that file is parsed incrementally (tree-sitter re-reads only what changed); the
 * first change of a file pays a whole parse. The grammars load on first use (grammars.ts).
 *
 * Modes: "report" (the default) puts the errors in the result; "refuse" fails the change with
 * SYNTAX_ERROR before anything is written; "off" skips the check.
 */

import type { Node, Tree } from "web-tree-sitter";
import { KeelError } from "../boundary/errors.js";
import { truncateLine } from "../boundary/truncate.js";
import { Grammars, treeSitter } from "./grammars.js";

export type CheckMode = "report" | "refuse" | "off";

export const CHECK_MODES: readonly CheckMode[] = ["report", "refuse", "off"];

/** `value` as a mode; INVALID_ARGS naming `what` when it is none. */
export function checkModeOf(value: unknown, what: string): CheckMode {
	if (CHECK_MODES.includes(value as CheckMode)) return value as CheckMode;
	throw new KeelError(
		"INVALID_ARGS",
		`${what} must be one of ${CHECK_MODES.join(", ")} (got ${JSON.stringify(value)}).`,
	);
}

/** Errors shown per file, files shown per call. */
export const MAX_ERRORS_PER_FILE = 3;
export const MAX_FILES_PER_CALL = 5;
/** Errors collected from one tree before comparing (a broken file has thousands). */
const MAX_COLLECTED = 200;
/** Files above this size are not checked (a parse that long would hold the event loop). */
const MAX_CHECKED_CHARS = 2 * 1024 * 1024;
/** Parse trees kept for incremental re-parsing. */
const MAX_KEPT_TREES = 8;
const MAX_EXCERPT_CHARS = 80;

/** The grammar for a file, by its extension (or name). */
const BY_EXTENSION: Record<string, string> = {
	ts: "typescript",
	mts: "typescript",
	cts: "typescript",
	tsx: "tsx",
	js: "javascript",
	mjs: "javascript",
	cjs: "javascript",
	jsx: "javascript",
	py: "python",
	pyi: "python",
	go: "go",
	rs: "rust",
	java: "java",
	c: "c",
	h: "cpp",
	cc: "cpp",
	cpp: "cpp",
	cxx: "cpp",
	hh: "cpp",
	hpp: "cpp",
	hxx: "cpp",
	cs: "c_sharp",
	rb: "ruby",
	php: "php",
	sh: "bash",
	bash: "bash",
	json: "json",
	yml: "yaml",
	yaml: "yaml",
	toml: "toml",
	html: "html",
	htm: "html",
	css: "css",
};

/** The grammar that checks `path`, or undefined when keel has none for it. */
export function languageFor(path: string): string | undefined {
	const base = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
	const dot = base.lastIndexOf(".");
	if (dot <= 0) return undefined;
	return BY_EXTENSION[base.slice(dot + 1)];
}

/** Whether a change of `path` to a text of `length` characters is checked at all (cheap: no text built). */
export function isChecked(path: string, length: number): boolean {
	return languageFor(path) !== undefined && length <= MAX_CHECKED_CHARS;
}

export interface SyntaxProblem {
	/** 1-based line and column. */
	line: number;
	column: number;
	/** "missing": the parser needed a token that is not there; "error": text it could not place. */
	kind: "missing" | "error";
	/** What is missing, or the start of the text that does not fit. */
	what: string;
	/** The line, trimmed and cut short. */
	excerpt: string;
}

export interface FileSyntax {
	path: string;
	language: string;
	/** The errors this change introduced, at most MAX_ERRORS_PER_FILE. */
	errors: SyntaxProblem[];
	/** How many more it introduced. */
	more: number;
}

/** One file's texts for the check; `before` undefined: a new file. */
export interface CheckedChange {
	/** The path as the model wrote it. */
	path: string;
	/** A stable key for the file (its canonical path), for the kept parse tree. */
	key: string;
	before: string | undefined | (() => Promise<string | undefined>);
	after: string;
}

export interface SyntaxReport {
	/** Files with errors the change introduced (at most MAX_FILES_PER_CALL). */
	files: FileSyntax[];
	/** Paths checked (those with a grammar). */
	checked: string[];
	/** Files with new errors beyond MAX_FILES_PER_CALL. */
	moreFiles: number;
}

interface Kept {
	text: string;
	language: string;
	tree: Tree;
}

/** The one edit between two texts: common prefix and suffix, in UTF-16 units and points. */
function editBetween(before: string, after: string) {
	const max = Math.min(before.length, after.length);
	let p = 0;
	while (p < max && before.charCodeAt(p) === after.charCodeAt(p)) p++;
	let s = 0;
	while (s < max - p && before.charCodeAt(before.length - 1 - s) === after.charCodeAt(after.length - 1 - s))
		s++;
	const point = (text: string, at: number) => {
		let row = 0;
		let lineStart = 0;
		for (let i = text.indexOf("\n"); i !== -1 && i < at; i = text.indexOf("\n", i + 1)) {
			row++;
			lineStart = i + 1;
		}
		return { row, column: at - lineStart };
	};
	const start = point(before, p);
	return {
		startIndex: p,
		oldEndIndex: before.length - s,
		newEndIndex: after.length - s,
		startPosition: start,
		oldEndPosition: point(before, before.length - s),
		newEndPosition: point(after, after.length - s),
	};
}

function lineAt(text: string, row: number): string {
	let at = 0;
	for (let r = 0; r < row; r++) {
		const nl = text.indexOf("\n", at);
		if (nl === -1) return "";
		at = nl + 1;
	}
	const end = text.indexOf("\n", at);
	return text.slice(at, end === -1 ? text.length : end).replace(/\r$/, "");
}

/** The error and missing nodes of a tree, in document order, bounded; subtrees without errors are skipped. */
function collect(tree: Tree, text: string): Array<SyntaxProblem & { key: string }> {
	const out: Array<SyntaxProblem & { key: string }> = [];
	const visit = (node: Node) => {
		if (out.length >= MAX_COLLECTED) return;
		if (node.isMissing || node.isError) {
			const row = node.startPosition.row;
			const line = lineAt(text, row);
			const kind = node.isMissing ? "missing" : "error";
			const what = node.isMissing ? node.type : truncateLine(node.text.split("\n")[0].trim(), 20).text;
			const excerpt = truncateLine(line.trim(), MAX_EXCERPT_CHARS).text;
			out.push({
				line: row + 1,
				column: node.startPosition.column + 1,
				kind,
				what,
				excerpt,
				key: `${kind}\0${line.trim()}`,
			});
			return;
		}
		if (!node.hasError) return;
		for (const child of node.children) if (child) visit(child);
	};
	visit(tree.rootNode);
	return out;
}

export class SyntaxCheck {
	private readonly kept = new Map<string, Kept>();

	// Private and made here: the published types never name web-tree-sitter's, whose declarations
	// need Emscripten's global types that a consumer's project does not have.
	private readonly grammars = new Grammars();

	/** The errors `change` introduced in one file; undefined when the file is not checked. */
	async file(change: CheckedChange): Promise<FileSyntax | undefined> {
		const language = languageFor(change.path);
		if (!language || change.after.length > MAX_CHECKED_CHARS) return undefined;
		const parser = await this.grammars.parser(language);
		if (!parser) return undefined;
		const before = typeof change.before === "function" ? undefined : change.before;
		const prior = this.kept.get(change.key);
		const reusable = prior && before !== undefined && prior.text === before && prior.language === language;
		let old: Tree | undefined;
		if (reusable) {
			old = prior.tree.copy();
			old.edit(new (await treeSitter()).Edit(editBetween(before, change.after)));
		}
		const after = parser.parse(change.after, old);
		old?.delete();
		if (!after) return undefined;
		const found = collect(after, change.after);
		let introduced = found;
		if (found.length > 0) {
			const beforeText = typeof change.before === "function" ? await change.before() : before;
			if (beforeText !== undefined && beforeText.length <= MAX_CHECKED_CHARS) {
				const tree = reusable ? prior.tree : parser.parse(beforeText);
				const had = new Map<string, number>();
				if (tree) for (const e of collect(tree, beforeText)) had.set(e.key, (had.get(e.key) ?? 0) + 1);
				if (tree && tree !== prior?.tree) tree.delete();
				introduced = found.filter((e) => {
					const n = had.get(e.key) ?? 0;
					if (n === 0) return true;
					had.set(e.key, n - 1);
					return false;
				});
			}
		}
		this.keep(change.key, { text: change.after, language, tree: after });
		return {
			path: change.path,
			language,
			errors: introduced.slice(0, MAX_ERRORS_PER_FILE).map(({ key: _, ...e }) => e),
			more: Math.max(0, introduced.length - MAX_ERRORS_PER_FILE),
		};
	}

	/** The check of a call's changes, file by file. */
	async files(changes: CheckedChange[]): Promise<SyntaxReport> {
		const report: SyntaxReport = { files: [], checked: [], moreFiles: 0 };
		for (const c of changes) {
			const r = await this.file(c);
			if (!r) continue;
			report.checked.push(c.path);
			if (r.errors.length === 0) continue;
			if (report.files.length < MAX_FILES_PER_CALL) report.files.push(r);
			else report.moreFiles++;
		}
		return report;
	}

	/** Forget a file's kept tree (a change was refused or not committed: the file keeps its old text). */
	forget(key: string): void {
		const k = this.kept.get(key);
		if (!k) return;
		k.tree.delete();
		this.kept.delete(key);
	}

	private keep(key: string, k: Kept): void {
		const prior = this.kept.get(key);
		if (prior) {
			prior.tree.delete();
			this.kept.delete(key);
		}
		this.kept.set(key, k);
		if (this.kept.size > MAX_KEPT_TREES) {
			const [oldest, v] = this.kept.entries().next().value as [string, Kept];
			v.tree.delete();
			this.kept.delete(oldest);
		}
	}

	close(): void {
		for (const k of this.kept.values()) k.tree.delete();
		this.kept.clear();
		this.grammars.close();
	}
}

function describe(f: FileSyntax): string {
	const first = f.errors
		.map(
			(e) =>
				`${e.line}:${e.column} ${e.kind === "missing" ? `missing ${JSON.stringify(e.what)}` : `unexpected ${JSON.stringify(e.what)}`}`,
		)
		.join("; ");
	const n = f.errors.length + f.more;
	return `${f.path} ${n} new syntax error${n === 1 ? "" : "s"} (${first}${f.more ? "; ..." : ""})`;
}

/** The one line a result carries when the change introduced syntax errors; "" when it did not. */
export function syntaxLine(report: SyntaxReport | undefined): string {
	if (!report || report.files.length === 0) return "";
	const more = report.moreFiles ? `; and ${report.moreFiles} more file(s)` : "";
	return `Syntax check: ${report.files.map(describe).join("; ")}${more}. details.syntax has each error's excerpt.`;
}

/** The result's structured part: what was checked and what it found. */
export function syntaxDetails(
	report: SyntaxReport | undefined,
): { syntax: SyntaxReport } | Record<string, never> {
	return report && report.checked.length > 0 ? { syntax: report } : {};
}

/** In "refuse" mode, a change that introduced syntax errors fails here, before anything is written. */
export function refuseIfIntroduced(report: SyntaxReport | undefined, mode: CheckMode, path?: string): void {
	if (mode !== "refuse" || !report || report.files.length === 0) return;
	throw new KeelError(
		"SYNTAX_ERROR",
		`The change was refused: it would introduce syntax errors. ${syntaxLine(report).replace(" details.syntax has each error's excerpt.", "")} Nothing was changed; fix the new text and send it again.`,
		{ path, details: { syntax: report } },
	);
}
