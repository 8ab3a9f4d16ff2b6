/**
 * Finding where an anchor's lines may sit, in time linear in the file. The fast path: indexOf on
 * the anchor's longest run of characters no normalization touches gives the candidate lines, each
 * verified line by line. When that would cost too much (a common probe and a long anchor: n·m),
 * the rung runs KMP over the file's normalized lines instead, which reads each line once.
 */
import type { LineIndex } from "./lines.js";
import { stableRun } from "./normalize.js";

/** The non-empty key with the longest stable run (the rarest probe, likely), and that run. */
export function bestProbe(keys: string[]): { at: number; probe: string } {
	let at = -1;
	let probe = "";
	for (let j = 0; j < keys.length; j++) {
		if (keys[j] === "") continue;
		const run = stableRun(keys[j]);
		if (at === -1 || run.length > probe.length) [at, probe] = [j, run];
	}
	return { at, probe };
}

/**
 * Lines containing `probe` (all lines when it is empty), ascending, passed to `visit` until it
 * returns false; or, when verifying them would cost more than a few passes over the file
 * (`cost` line comparisons each), `fallback()` instead.
 */
export function searchLines(
	lines: LineIndex,
	probe: string,
	cost: number,
	visit: (line: number) => boolean,
	fallback: () => void,
): void {
	const cap = Math.floor((4 * lines.count + 100_000) / Math.max(1, cost));
	if (probe.length === 0) {
		if (lines.count > cap) {
			fallback();
			return;
		}
		for (let l = 0; l < lines.count; l++) if (!visit(l)) return;
		return;
	}
	const found: number[] = [];
	const text = lines.text;
	for (let at = text.indexOf(probe); at !== -1; ) {
		const l = lines.at(at);
		if (found.push(l) > cap) {
			fallback();
			return;
		}
		if (l + 1 >= lines.count) break;
		at = text.indexOf(probe, lines.start(l + 1));
	}
	for (const l of found) if (!visit(l)) return;
}

/**
 * Every start s where pattern[k] === key(s + k) for all k, ascending, until `visit` returns
 * false (Knuth–Morris–Pratt over a sequence of `count` keys, each computed once).
 */
export function kmp(
	pattern: string[],
	count: number,
	key: (i: number) => string,
	visit: (start: number) => boolean,
): void {
	const m = pattern.length;
	if (m === 0) {
		for (let s = 0; s <= count; s++) if (!visit(s)) return;
		return;
	}
	const fail = new Array<number>(m).fill(0);
	for (let i = 1, k = 0; i < m; i++) {
		while (k > 0 && pattern[i] !== pattern[k]) k = fail[k - 1];
		if (pattern[i] === pattern[k]) k++;
		fail[i] = k;
	}
	for (let i = 0, k = 0; i < count; i++) {
		const cur = key(i);
		while (k > 0 && cur !== pattern[k]) k = fail[k - 1];
		if (cur === pattern[k]) k++;
		if (k === m) {
			if (!visit(i - m + 1)) return;
			k = fail[k - 1];
		}
	}
}
