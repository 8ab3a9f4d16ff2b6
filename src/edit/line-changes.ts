/**
 * The line diff of an edit's window (diff.ts), found without running jsdiff's search where the
 * answer is forced. A window is its context lines, the changed lines and context again, so once
 * the common first and last lines are set aside what is left is usually lines removed and lines
 * added that share no line with each other or with the lines below them. Then every shortest edit
 * script removes exactly those lines and adds exactly those, and jsdiff's own choice among them
 * (removals first, right after the common first lines) is written down directly. Any other
 * window goes to jsdiff's diffLines as before; test/unit/line-changes.test.ts holds the two to the
 * same answers on random windows.
 */
import { jsdiff } from "./jsdiff.js";

/** One run of lines, as jsdiff's change objects carry it. */
export interface LineChange {
	value: string;
	added: boolean;
	removed: boolean;
	count: number;
}

/** Lines with their endings, as jsdiff's diffLines splits them ("\n" or "\r\n" end a line). */
function lineTokens(s: string): string[] {
	const out: string[] = [];
	let at = 0;
	for (let nl = s.indexOf("\n"); nl !== -1; nl = s.indexOf("\n", at)) {
		out.push(s.slice(at, nl + 1));
		at = nl + 1;
	}
	if (at < s.length) out.push(s.slice(at));
	return out;
}

/** Whether any line of `a` is also a line of `b` or of `c`, or any of `b` a line of `c`. */
function shareALine(a: string[], b: string[], c: string[]): boolean {
	const seen = new Set(c);
	for (const line of b) if (seen.has(line)) return true;
	for (const line of b) seen.add(line);
	for (const line of a) if (seen.has(line)) return true;
	return false;
}

function run(lines: string[], from: number, to: number, added: boolean, removed: boolean): LineChange {
	return { value: lines.slice(from, to).join(""), added, removed, count: to - from };
}

/** diffLines(before, after): the same runs, computed directly when the answer is forced. */
export function lineChanges(before: string, after: string): LineChange[] {
	return forcedLineChanges(before, after) ?? (jsdiff().diffLines(before, after) as LineChange[]);
}

/** The runs diffLines gives, when only one shortest edit script exists up to order; else undefined. */
export function forcedLineChanges(before: string, after: string): LineChange[] | undefined {
	const a = lineTokens(before);
	const b = lineTokens(after);
	let head = 0;
	while (head < a.length && head < b.length && a[head] === b[head]) head++;
	let tail = 0;
	while (
		tail < a.length - head &&
		tail < b.length - head &&
		a[a.length - 1 - tail] === b[b.length - 1 - tail]
	)
		tail++;
	const removedEnd = a.length - tail;
	const addedEnd = b.length - tail;
	const removed = a.slice(head, removedEnd);
	const added = b.slice(head, addedEnd);
	if (removed.length + added.length === 0 || shareALine(removed, added, a.slice(removedEnd)))
		return undefined;
	const out: LineChange[] = [];
	if (head > 0) out.push(run(a, 0, head, false, false));
	if (removed.length > 0) out.push(run(a, head, removedEnd, false, true));
	if (added.length > 0) out.push(run(b, head, addedEnd, true, false));
	if (tail > 0) out.push(run(a, removedEnd, a.length, false, false));
	return out;
}
