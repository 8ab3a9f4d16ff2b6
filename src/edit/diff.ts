/**
 * The diff shown for an edit: changed lines with line numbers and a few lines of context
 * (the shape pi's edit result uses), plus the first changed line in the new text.
 */

import { type DiffWindow, diffWindow, lineCount, shiftHunks } from "./diff-window.js";
import { jsdiff } from "./jsdiff.js";
import { lineChanges } from "./line-changes.js";

export interface DiffSummary {
	diff: string;
	firstChangedLine?: number;
}

const CONTEXT = 4;

/** What renderDiff needs of an edit; AppliedEdits.window gives it without a whole copy. */
interface Windowed {
	window(context: number): DiffWindow & { beforeLines: number; afterLines: number };
}

export function renderDiff(before: string, after: string): DiffSummary {
	// One more context line than shown, so the "..." before and after the change still appears.
	return renderWindow(diffWindow(before, after, CONTEXT + 1), Math.max(lineCount(before), lineCount(after)));
}

/** renderDiff of an applied edit, from its regions (no copy of the whole new text). */
export function renderEditDiff(applied: Windowed): DiffSummary {
	const w = applied.window(CONTEXT + 1);
	return renderWindow(w, Math.max(w.beforeLines, w.afterLines));
}

function renderWindow(w: DiffWindow, lines: number): DiffSummary {
	const parts = lineChanges(w.before, w.after);
	const width = String(lines).length;
	const num = (n: number) => String(n).padStart(width, " ");
	const gap = ` ${" ".repeat(width)} ...`;
	const out: string[] = [];
	let oldLine = 1 + w.lineOffset;
	let newLine = 1 + w.lineOffset;
	let firstChangedLine: number | undefined;
	parts.forEach((part, i) => {
		const lines = part.value.split("\n");
		if (lines[lines.length - 1] === "") lines.pop();
		if (part.added || part.removed) {
			firstChangedLine ??= newLine;
			for (const line of lines) {
				if (part.added) out.push(`+${num(newLine++)} ${line}`);
				else out.push(`-${num(oldLine++)} ${line}`);
			}
			return;
		}
		const afterChange = i > 0;
		const beforeChange = i < parts.length - 1;
		const show = (from: number, to: number) => {
			for (let k = from; k < to; k++) out.push(` ${num(oldLine + k)} ${lines[k]}`);
		};
		const n = lines.length;
		if (afterChange && beforeChange && n <= CONTEXT * 2) show(0, n);
		else if (afterChange && beforeChange) {
			show(0, CONTEXT);
			out.push(gap);
			show(n - CONTEXT, n);
		} else if (afterChange) {
			show(0, Math.min(CONTEXT, n));
			if (n > CONTEXT) out.push(gap);
		} else if (beforeChange) {
			if (n > CONTEXT) out.push(gap);
			show(Math.max(0, n - CONTEXT), n);
		}
		oldLine += n;
		newLine += n;
	});
	return { diff: out.join("\n"), firstChangedLine };
}

/** A unified patch (3 lines of context) of an edit, computed on the changed window only. */
export function unifiedPatch(path: string, before: string, after: string): string {
	const w = diffWindow(before, after, 3);
	return shiftHunks(jsdiff().createPatch(path, w.before, w.after, "", "", { context: 3 }), w.lineOffset);
}

/** unifiedPatch of an applied edit, from its regions. */
export function unifiedEditPatch(path: string, applied: Windowed): string {
	const w = applied.window(3);
	return shiftHunks(jsdiff().createPatch(path, w.before, w.after, "", "", { context: 3 }), w.lineOffset);
}
