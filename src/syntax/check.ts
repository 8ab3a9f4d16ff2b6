/**
 * The syntax check of a change: the file's text before the change is parsed (or its kept tree
 * reused), the text after is parsed on that tree edited to match, and the errors the change
 * introduced are reported: never the ones the file already had. Only where the two trees differ
 * (tree-sitter's changed ranges, and the edited text) can an error be new; there an error is
 * "already there" when the text before had one of the same kind on a line with the same text.
 * Reported per file: a few errors with line, column and a short excerpt; a call reports a few files.
 *
 * Cost: a whole parse of a 2,000-line file takes tens of milliseconds, an incremental one about one.
 * A session keeps parse trees by the text they parse (its SHA-256; a few, bounded), so a file's
 * next change reuses the tree of its last one, and the read of a source file parses it ahead, in
 * slices off the read's path (prepare), so that even a file's first change parses incrementally.
 * Only a change of a file the session never read nor changed pays a whole parse, of its new text;
 * when that has errors, the old text is parsed on the new text's tree edited back (incremental
 * too). The grammars load on first use (grammars.ts).
 *
 * Modes: "report" (the default) puts the errors in the result; "refuse" fails the change with
 * SYNTAX_ERROR before anything is written; "off" skips the check.
 */

import { createHash } from "node:crypto";
import type { Edit, Parser, Tree } from "web-tree-sitter";
import { KeelError } from "../boundary/errors.js";
import { truncateLine } from "../boundary/truncate.js";
import { Grammars } from "./grammars.js";

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
/** Parse trees kept for incremental re-parsing: at most this many, of at most this many characters in all. */
const MAX_KEPT_TREES = 16;
const MAX_KEPT_CHARS = 4 * 1024 * 1024;
/** A parse made ahead gives the event loop back after about this much work. */
const PARSE_SLICE_MS = 4;
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
	/** The file's canonical path: a parse of it made ahead (see SyntaxCheck.prepare) is waited for. */
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

/** How much of the text around an edit a check compares, in UTF-16 units (a tree-sitter Range's indices). */
interface Span {
	startIndex: number;
	endIndex: number;
}

/** The one edit between two texts: common prefix and suffix, in UTF-16 units and points. */
/** An edit's fields: what Tree.edit reads (web-tree-sitter's Edit class is not loaded for it). */
type EditFields = Pick<
	Edit,
	"startIndex" | "oldEndIndex" | "newEndIndex" | "startPosition" | "oldEndPosition" | "newEndPosition"
>;

function editBetween(before: string, after: string): EditFields {
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
	return {
		startIndex: p,
		oldEndIndex: before.length - s,
		newEndIndex: after.length - s,
		startPosition: point(before, p),
		oldEndPosition: point(before, before.length - s),
		newEndPosition: point(after, after.length - s),
	};
}

/** A span of the new text mapped onto the old one through `edit` (a span inside the edit covers its old text). */
function spanBefore(span: Span, edit: EditFields): Span {
	const at = (i: number, inside: number) =>
		i <= edit.startIndex ? i : i >= edit.newEndIndex ? i - edit.newEndIndex + edit.oldEndIndex : inside;
	return { startIndex: at(span.startIndex, edit.startIndex), endIndex: at(span.endIndex, edit.oldEndIndex) };
}

/** The line of `text` holding index `at`, without its ending. */
function lineAround(text: string, at: number): string {
	const start = text.lastIndexOf("\n", at - 1) + 1;
	const nl = text.indexOf("\n", at);
	return text.slice(start, nl === -1 ? text.length : nl).replace(/\r$/, "");
}

const touches = (node: Span, spans: readonly Span[]) =>
	spans.some((s) => node.startIndex <= s.endIndex && node.endIndex >= s.startIndex);

/**
 * The error and missing nodes of a tree that touch `spans` (all of it when undefined), in document
 * order, bounded; subtrees without errors, and those outside the spans, are skipped.
 */
function collect(tree: Tree, text: string, spans?: readonly Span[]): Array<SyntaxProblem & { key: string }> {
	const out: Array<SyntaxProblem & { key: string }> = [];
	const from = spans ? Math.min(...spans.map((s) => s.startIndex)) : 0;
	const to = spans ? Math.max(...spans.map((s) => s.endIndex)) : text.length;
	const cursor = tree.walk();
	const visit = () => {
		if (out.length >= MAX_COLLECTED) return;
		const node = cursor.currentNode;
		if (spans && !touches(node, spans)) return;
		if (node.isMissing || node.isError) {
			const line = lineAround(text, node.startIndex);
			const kind = node.isMissing ? "missing" : "error";
			const what = node.isMissing ? node.type : truncateLine(node.text.split("\n")[0].trim(), 20).text;
			out.push({
				line: node.startPosition.row + 1,
				column: node.startPosition.column + 1,
				kind,
				what,
				excerpt: truncateLine(line.trim(), MAX_EXCERPT_CHARS).text,
				key: `${kind}\0${line.trim()}`,
			});
			return;
		}
		if (!node.hasError) return;
		// Children that end before the spans are skipped without being made into nodes (the index
		// is one less: the cursor takes the first child that ends after it, and one may end at it).
		if (!cursor.gotoFirstChildForIndex(Math.max(0, from - 1))) return;
		do {
			if (cursor.startIndex > to) break;
			visit();
		} while (cursor.gotoNextSibling());
		cursor.gotoParent();
	};
	try {
		visit();
	} finally {
		cursor.delete();
	}
	return out;
}

/** The errors of `found` that `had` does not account for (same kind on a line with the same text). */
function introducedErrors<T extends { key: string }>(found: T[], had: T[]): T[] {
	const count = new Map<string, number>();
	for (const e of had) count.set(e.key, (count.get(e.key) ?? 0) + 1);
	return found.filter((e) => {
		const n = count.get(e.key) ?? 0;
		if (n === 0) return true;
		count.set(e.key, n - 1);
		return false;
	});
}

/** The key of a text's tree: its grammar and the SHA-256 of the text. */
function treeKey(language: string, text: string): string {
	return `${language}:${createHash("sha256").update(text).digest("base64")}`;
}

/**
 * Parse trees by the text they parse, least recently used first, bounded in count and in the
 * characters parsed (a tree's WebAssembly memory grows with its text). The cache owns its trees:
 * a tree it returns is used before the next await, and never deleted by the caller.
 */
class TreeCache {
	private readonly trees = new Map<string, { tree: Tree; chars: number }>();
	private chars = 0;

	get(key: string): Tree | undefined {
		const kept = this.trees.get(key);
		if (!kept) return undefined;
		this.trees.delete(key);
		this.trees.set(key, kept);
		return kept.tree;
	}

	put(key: string, tree: Tree, chars: number): void {
		const prior = this.trees.get(key);
		if (prior) {
			this.trees.delete(key);
			this.chars -= prior.chars;
			if (prior.tree !== tree) prior.tree.delete();
		}
		this.trees.set(key, { tree, chars });
		this.chars += chars;
		for (const [oldest, kept] of this.trees) {
			if (oldest === key || (this.trees.size <= MAX_KEPT_TREES && this.chars <= MAX_KEPT_CHARS)) break;
			kept.tree.delete();
			this.chars -= kept.chars;
			this.trees.delete(oldest);
		}
	}

	clear(): void {
		for (const kept of this.trees.values()) kept.tree.delete();
		this.trees.clear();
		this.chars = 0;
	}
}

/** How many parses of each kind a session's check did (a whole parse is the costly one). */
export interface ParseCounts {
	/** Whole parses on an edit's path. */
	whole: number;
	/** Parses that reused a kept tree. */
	incremental: number;
	/** Whole parses made ahead, off the edit's path (after a read). */
	ahead: number;
}

export class SyntaxCheck {
	private readonly kept = new TreeCache();
	/** Parses made ahead and not finished, by the file's canonical path; `hurry` stops their slicing. */
	private readonly ahead = new Map<string, { settled: Promise<void>; hurry: () => void }>();
	private closed = false;
	readonly parses: ParseCounts = { whole: 0, incremental: 0, ahead: 0 };

	// Private and made here: the published types never name web-tree-sitter's, whose declarations
	// need Emscripten's global types that a consumer's project does not have.
	private readonly grammars = new Grammars();

	/**
	 * Parses `text` ahead, off the caller's path, so that the check of the file's next change is
	 * incremental: the read of a file calls this. Returns at once; the work runs in slices after it.
	 */
	prepare(path: string, key: string, text: string): void {
		const language = languageFor(path);
		if (!language || text.length > MAX_CHECKED_CHARS || this.closed || this.ahead.has(key)) return;
		const wanted = () => !this.closed;
		let awaited = false;
		const job = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
			const k = treeKey(language, text);
			if (!wanted() || this.kept.get(k)) return;
			const tree = await this.grammars.parseInSlices(language, text, PARSE_SLICE_MS, wanted, () => awaited);
			if (!tree) return;
			if (!wanted()) return void tree.delete();
			this.parses.ahead++;
			this.kept.put(k, tree, text.length);
		});
		// Work made ahead never fails a call: without its tree the check parses whole.
		const settled = job.catch(() => undefined).finally(() => this.ahead.delete(key));
		this.ahead.set(key, {
			settled,
			hurry: () => {
				awaited = true;
			},
		});
	}

	/** The errors `change` introduced in one file; undefined when the file is not checked. */
	async file(change: CheckedChange): Promise<FileSyntax | undefined> {
		const language = languageFor(change.path);
		if (!language || change.after.length > MAX_CHECKED_CHARS) return undefined;
		const parser = await this.grammars.parser(language);
		if (!parser) return undefined;
		// A parse made ahead of this change (after a read) is waited for, not repeated.
		const ahead = this.ahead.get(change.key);
		if (ahead) {
			ahead.hurry();
			await ahead.settled;
		}
		if (this.closed) return undefined;
		const { after } = change;
		const afterKey = treeKey(language, after);
		const checkable = (text: string | undefined): text is string =>
			text !== undefined && text.length <= MAX_CHECKED_CHARS;
		let before = typeof change.before === "function" ? undefined : change.before;
		const beforeKey = checkable(before) ? treeKey(language, before) : undefined;
		let beforeTree = beforeKey && this.kept.get(beforeKey);
		if (!beforeTree) {
			// No tree of the old text: the new one is parsed whole, the old one only if the new has errors.
			const tree = this.treeOf(parser, afterKey, after);
			if (!tree) return undefined;
			if (!tree.rootNode.hasError) return this.result(change.path, language, []);
			if (typeof change.before === "function") {
				before = await change.before();
				if (this.closed) return undefined;
			}
			if (!checkable(before)) {
				// A new file (or an old text too large to check): every error is new.
				const now = this.treeOf(parser, afterKey, after);
				return now && this.result(change.path, language, collect(now, after));
			}
			// The old text parsed on the new one's tree, edited back: an incremental parse (about a
			// millisecond), not a second whole one. The new tree is taken again after the await above.
			const now = this.treeOf(parser, afterKey, after);
			if (!now) return undefined;
			beforeTree = this.treeFrom(parser, now, after, beforeKey ?? treeKey(language, before), before);
			if (!beforeTree) return undefined;
		}
		if (!checkable(before)) return undefined; // A kept tree of the old text implies the text.
		// From here on nothing awaits: the kept trees used cannot be evicted meanwhile.
		// The new text parsed on the old tree, edited to match: tree-sitter re-reads only what changed.
		const edit = editBetween(before, after);
		const edited = beforeTree.copy();
		let afterTree: Tree | null = null;
		try {
			edited.edit(edit as Edit);
			afterTree = parser.parse(after, edited);
			if (!afterTree) return undefined;
			this.parses.incremental++;
			if (!afterTree.rootNode.hasError) return this.result(change.path, language, []);
			// Only where the structure changed, and in the edit's own text, can an error be new.
			const spans: Span[] = [
				...edited.getChangedRanges(afterTree),
				{ startIndex: edit.startIndex, endIndex: edit.newEndIndex },
			];
			const found = collect(afterTree, after, spans);
			if (found.length === 0) return this.result(change.path, language, []);
			const had = collect(
				beforeTree,
				before,
				spans.map((s) => spanBefore(s, edit)),
			);
			return this.result(change.path, language, introducedErrors(found, had));
		} finally {
			edited.delete();
			// Kept last: keeping may evict the old tree, which the comparison reads.
			if (afterTree) this.kept.put(afterKey, afterTree, after.length);
		}
	}

	/** The kept tree of `text`, or `text` parsed on `from` (the tree of `fromText`) edited to match, and kept. */
	private treeFrom(
		parser: Parser,
		from: Tree,
		fromText: string,
		key: string,
		text: string,
	): Tree | undefined {
		const kept = this.kept.get(key);
		if (kept) return kept;
		const edited = from.copy();
		try {
			edited.edit(editBetween(fromText, text) as Edit);
			const tree = parser.parse(text, edited);
			if (!tree) return undefined;
			this.parses.incremental++;
			this.kept.put(key, tree, text.length);
			return tree;
		} finally {
			edited.delete();
		}
	}

	/** The kept tree of `text`, or `text` parsed whole and kept. */
	private treeOf(parser: Parser, key: string, text: string): Tree | undefined {
		const kept = this.kept.get(key);
		if (kept) return kept;
		const tree = parser.parse(text);
		if (!tree) return undefined;
		this.parses.whole++;
		this.kept.put(key, tree, text.length);
		return tree;
	}

	private result(
		path: string,
		language: string,
		introduced: Array<SyntaxProblem & { key: string }>,
	): FileSyntax {
		return {
			path,
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

	close(): void {
		this.closed = true;
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
