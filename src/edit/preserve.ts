/**
 * Building the replacement for a tolerant match. The model's newText repeats the anchor lines it
 * keeps, in the model's drifted form; those lines are written back as the file had them (so an
 * unchanged line keeps its quotes, spacing and indentation byte for byte), and only the lines the
 * model added are taken from newText, re-indented into the file's style.
 */
import { jsdiff } from "./jsdiff.js";

/** Anchor lines [from, to) and the file lines that stand for them. */
export interface Unit {
	from: number;
	to: number;
	file: string[];
	/** A run of blank anchor lines standing for the file's run of blank lines there. */
	run?: boolean;
	/** A run of blank anchor lines at the anchor's edge, outside the matched region. */
	outside?: boolean;
}

/** Above this many lines, keep only the common prefix and suffix (Myers' diff is O(N·D)). */
const MAX_DIFF_LINES = 4000;

interface Ops {
	kept: boolean[];
	/** inserts[j]: newText lines that go before anchor line j (j = anchor.length: at the end). */
	inserts: string[][];
}

function lineOps(anchor: string[], next: string[]): Ops {
	const kept: boolean[] = new Array(anchor.length).fill(false);
	const inserts: string[][] = Array.from({ length: anchor.length + 1 }, () => []);
	if (anchor.length + next.length > MAX_DIFF_LINES) {
		let pre = 0;
		while (pre < anchor.length && pre < next.length && anchor[pre] === next[pre]) kept[pre++] = true;
		let suf = 0;
		while (
			suf < anchor.length - pre &&
			suf < next.length - pre &&
			anchor[anchor.length - 1 - suf] === next[next.length - 1 - suf]
		)
			kept[anchor.length - 1 - suf++] = true;
		inserts[anchor.length - suf].push(...next.slice(pre, next.length - suf));
		return { kept, inserts };
	}
	let j = 0;
	for (const part of jsdiff().diffArrays(anchor, next)) {
		if (part.added) inserts[j].push(...part.value);
		else {
			if (!part.removed) for (let k = 0; k < part.value.length; k++) kept[j + k] = true;
			j += part.value.length;
		}
	}
	return { kept, inserts };
}

/**
 * The replacement lines. `units` cover the anchor lines in order; a unit with from === to is a
 * run of file lines the anchor left out (blank lines): it stays when a neighbour stays, right
 * before the next anchor line, so lines the model added after a line stay next to it.
 */
export function rebuild(
	anchor: string[],
	next: string[],
	units: Unit[],
	fresh: (line: string) => string,
): string[] {
	const { kept, inserts } = lineOps(anchor, next);
	const out: string[] = [];
	let gap: { file: string[]; keep: boolean } | undefined;
	let lastKept = false;
	for (const u of units) {
		if (u.from === u.to) {
			gap = { file: u.file, keep: lastKept };
			continue;
		}
		// A blank run the model kept whole stands for the file's run, however long that is.
		const whole = u.run && allKept(kept, u.from, u.to) && noInserts(inserts, u);
		for (let j = u.from; j < u.to; j++) {
			for (const l of inserts[j]) out.push(fresh(l));
			if (gap && j === u.from) {
				if (gap.keep || kept[j]) out.push(...gap.file);
				gap = undefined;
			}
			if (!kept[j] || u.outside) continue;
			if (!u.run) out.push(u.file[0]);
			else if (whole) {
				if (j === u.from) out.push(...u.file);
			} else out.push("");
		}
		lastKept = kept[u.to - 1];
	}
	for (const l of inserts[anchor.length]) out.push(fresh(l));
	return out;
}

function allKept(kept: boolean[], from: number, to: number): boolean {
	for (let j = from; j < to; j++) if (!kept[j]) return false;
	return true;
}

function noInserts(inserts: string[][], u: Unit): boolean {
	for (let j = u.from + 1; j < u.to; j++) if (inserts[j].length > 0) return false;
	return true;
}
