/** A bounded pointer to where a missed anchor probably was. */
import { truncateLine } from "../boundary/truncate.js";

const MAX_HINTS = 3;
const MAX_HINT_CHARS = 120;

/** Lines of `text` that contain the first non-blank line of `anchor` (whitespace-trimmed). */
export function nearestLines(text: string, anchor: string): string {
	const probe = firstNonBlankLine(anchor);
	if (!probe) return "";
	const hits: string[] = [];
	const lines = text.split("\n");
	for (let i = 0; i < lines.length && hits.length < MAX_HINTS; i++) {
		if (lines[i].includes(probe))
			hits.push(`${i + 1}: ${truncateLine(lines[i].trim(), MAX_HINT_CHARS).text}`);
	}
	if (hits.length === 0) return " Read the file again to see its current text.";
	return ` The first anchor line appears at line ${hits.map((h) => h).join("; line ")}. Read those lines and copy them exactly.`;
}

/** The first line with non-whitespace text, trimmed; scans without splitting the whole anchor. */
function firstNonBlankLine(s: string): string | undefined {
	for (let start = 0; start < s.length; ) {
		const nl = s.indexOf("\n", start);
		const end = nl === -1 ? s.length : nl;
		const line = s.slice(start, Math.min(end, start + 10_000)).trim();
		if (line.length > 0) return line;
		start = end + 1;
	}
	return undefined;
}

/** A comment or bare `...` standing for omitted code: `...`, `…`, `// ...`, `# ... rest`, `/* ... *\/`. */
const ELISION = /^\s*(?:(?:\/\/|#|--|;|\/\*|\*|<!--)\s*)?(?:\.\.\.|…)(?:\s|\S*$)/;

/** A note when the anchor elides code: anchors must be copied whole, so it can never match. */
export function elisionHint(anchor: string): string {
	const lines = anchor.slice(0, 100_000).split("\n");
	const at = lines.findIndex((l) => ELISION.test(l) && l.trim().length < 80);
	if (at === -1) return "";
	return ` Line ${at + 1} of the anchor (${JSON.stringify(lines[at].trim())}) looks like it stands for omitted code; copy every line of the region instead.`;
}

/** Lines shown around a line range whose read went stale, in all. */
const MAX_CURRENT_LINES = 20;
const CURRENT_CONTEXT = 2;

/**
 * The file's current lines over 1-based ranges (each widened by a little context), numbered,
 * bounded: what a line-range edit planned on an older read needs to be redone without a new read.
 */
export function currentLines(text: string, ranges: Array<{ startLine: number; endLine: number }>): string {
	const lines = text.split("\n");
	const total = lines.length - (text.endsWith("\n") ? 1 : 0);
	const shown = new Set<number>();
	const out: string[] = [];
	for (const r of ranges) {
		const from = Math.max(1, r.startLine - CURRENT_CONTEXT);
		const to = Math.min(total, r.endLine + CURRENT_CONTEXT);
		for (let n = from; n <= to && out.length < MAX_CURRENT_LINES; n++) {
			if (shown.has(n)) continue;
			shown.add(n);
			out.push(`${n}: ${truncateLine(lines[n - 1], MAX_HINT_CHARS).text}`);
		}
	}
	if (out.length === 0) return ` The file has ${total} lines now.`;
	return ` Its current lines there (of ${total}):\n${out.join("\n")}`;
}
