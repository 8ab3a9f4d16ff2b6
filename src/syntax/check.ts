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
 * SYNTAX_ERROR before anything is written; "off" skips the check (report.ts).
 * Apart: the language table (languages.ts), the kept trees (kept-trees.ts), the comparison of
 * two trees (introduced.ts), and what a report says (report.ts).
 */

import type { Edit, Parser, Tree } from "web-tree-sitter";
import { Grammars } from "./grammars.js";
import { collect, editBetween, introducedErrors, type Span, spanBefore } from "./introduced.js";
import { TreeCache, treeKey } from "./kept-trees.js";
import { languageFor } from "./languages.js";
import {
	type FileSyntax,
	MAX_ERRORS_PER_FILE,
	MAX_FILES_PER_CALL,
	type SyntaxProblem,
	type SyntaxReport,
} from "./report.js";

/** Files above this size are not checked (a parse that long would hold the event loop). */
const MAX_CHECKED_CHARS = 2 * 1024 * 1024;
/** A parse made ahead gives the event loop back after about this much work. */
const PARSE_SLICE_MS = 4;

/** Whether a change of `path` to a text of `length` characters is checked at all (cheap: no text built). */
export function isChecked(path: string, length: number): boolean {
	return languageFor(path) !== undefined && length <= MAX_CHECKED_CHARS;
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
