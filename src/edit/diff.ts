/**
 * The diff shown for an edit: changed lines with line numbers and a few lines of context
 * (the shape pi's edit result uses), plus the first changed line in the new text.
 */
import { createPatch, diffLines } from "diff";
import { diffWindow, lineCount, shiftHunks } from "./diff-window.js";

export interface DiffSummary {
	diff: string;
	firstChangedLine?: number;
}

const CONTEXT = 4;

export function renderDiff(before: string, after: string): DiffSummary {
	// One more context line than shown, so the "..." before and after the change still appears.
	const w = diffWindow(before, after, CONTEXT + 1);
	const parts = diffLines(w.before, w.after);
	const width = String(Math.max(lineCount(before), lineCount(after))).length;
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
	return shiftHunks(createPatch(path, w.before, w.after, "", "", { context: 3 }), w.lineOffset);
}
