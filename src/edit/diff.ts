/**
 * The diff shown for an edit: changed lines with line numbers and a few lines of context
 * (the shape pi's edit result uses), plus the first changed line in the new text.
 */
import { diffLines } from "diff";

export interface DiffSummary {
	diff: string;
	firstChangedLine?: number;
}

const CONTEXT = 4;

export function renderDiff(before: string, after: string): DiffSummary {
	const parts = diffLines(before, after);
	const width = String(Math.max(before.split("\n").length, after.split("\n").length)).length;
	const num = (n: number) => String(n).padStart(width, " ");
	const gap = ` ${" ".repeat(width)} ...`;
	const out: string[] = [];
	let oldLine = 1;
	let newLine = 1;
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
