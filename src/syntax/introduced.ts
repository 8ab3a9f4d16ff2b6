/**
 * Which errors a change introduced: the one edit between two texts, the error nodes of a tree
 * near the places that changed, and the comparison that drops those the text before already had.
 * Apart from the check, which decides what to parse and when, because this part only reads trees.
 */

import type { Edit, Tree } from "web-tree-sitter";
import { truncateLine } from "../boundary/truncate.js";
import type { SyntaxProblem } from "./report.js";

/** Errors collected from one tree before comparing (a broken file has thousands). */
const MAX_COLLECTED = 200;
const MAX_EXCERPT_CHARS = 80;

/** How much of the text around an edit a check compares, in UTF-16 units (a tree-sitter Range's indices). */
export interface Span {
	startIndex: number;
	endIndex: number;
}

/** An edit's fields: what Tree.edit reads (web-tree-sitter's Edit class is not loaded for it). */
export type EditFields = Pick<
	Edit,
	"startIndex" | "oldEndIndex" | "newEndIndex" | "startPosition" | "oldEndPosition" | "newEndPosition"
>;

/** The one edit between two texts: common prefix and suffix, in UTF-16 units and points. */
export function editBetween(before: string, after: string): EditFields {
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
export function spanBefore(span: Span, edit: EditFields): Span {
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
export function collect(
	tree: Tree,
	text: string,
	spans?: readonly Span[],
): Array<SyntaxProblem & { key: string }> {
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
export function introducedErrors<T extends { key: string }>(found: T[], had: T[]): T[] {
	const count = new Map<string, number>();
	for (const e of had) count.set(e.key, (count.get(e.key) ?? 0) + 1);
	return found.filter((e) => {
		const n = count.get(e.key) ?? 0;
		if (n === 0) return true;
		count.set(e.key, n - 1);
		return false;
	});
}
