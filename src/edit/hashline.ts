/**
 * Hashline addressing. A read can show each line as `12#a3f|text`: its number and the first three
 * hex digits of the FNV-1a (32-bit) hash of its UTF-8 bytes, without the line ending (and without
 * the BOM on line 1). An edit then names lines by `start`/`end` refs like "12#a3f" instead of
 * repeating their text. The number says where, the hash proves the line is still the one that was
 * read: any mismatch is STALE_READ, with the current lines around it, never a guess. Three hex
 * digits leave a 1 in 4096 chance that a changed line keeps its hash; both ends of a range are
 * checked, and the number must match too, so a shifted file is caught unless both ends collide.
 */
import { KeelError } from "../boundary/errors.js";
import { truncateLine } from "../boundary/truncate.js";
import type { LineIndex } from "./lines.js";

const HASH_DIGITS = 3;
const CONTEXT_LINES = 3;
const MAX_SHOWN_CHARS = 200;

/** FNV-1a over the UTF-8 encoding of `line`, first HASH_DIGITS hex digits. */
export function lineHash(line: string): string {
	let h = 0x811c9dc5;
	const mix = (b: number) => {
		h = Math.imul(h ^ b, 0x01000193);
	};
	for (let i = 0; i < line.length; i++) {
		let c = line.charCodeAt(i);
		if (c >= 0xd800 && c <= 0xdbff && i + 1 < line.length) {
			const d = line.charCodeAt(i + 1);
			if (d >= 0xdc00 && d <= 0xdfff) {
				c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
				i++;
			}
		}
		if (c < 0x80) mix(c);
		else if (c < 0x800) {
			mix(0xc0 | (c >> 6));
			mix(0x80 | (c & 63));
		} else if (c < 0x10000) {
			mix(0xe0 | (c >> 12));
			mix(0x80 | ((c >> 6) & 63));
			mix(0x80 | (c & 63));
		} else {
			mix(0xf0 | (c >> 18));
			mix(0x80 | ((c >> 12) & 63));
			mix(0x80 | ((c >> 6) & 63));
			mix(0x80 | (c & 63));
		}
	}
	return (h >>> 0).toString(16).padStart(8, "0").slice(0, HASH_DIGITS);
}

/** `12#a3f|` for line 12 (1-based). */
export function hashlinePrefix(n: number, line: string): string {
	return `${n}#${lineHash(line)}|`;
}

interface LineRef {
	line: number;
	hash: string;
}

const REF = /^\s*(\d+)#([0-9a-fA-F]{3})(?:\|.*)?$/s;

function parseRef(ref: string, where: string, path: string): LineRef {
	const m = REF.exec(ref);
	const line = m ? Number(m[1]) : 0;
	if (!m || line < 1) {
		throw new KeelError(
			"INVALID_ARGS",
			`${where} must be a line ref like "12#a3f" (line number # hash, from a read with hashline: true); got ${JSON.stringify(ref.slice(0, 40))}.`,
			{ path },
		);
	}
	return { line, hash: m[2].toLowerCase() };
}

/** The current lines around 1-based line `n`, in hashline form, bounded. */
function around(lines: LineIndex, n: number, total: number): string {
	const from = Math.max(1, Math.min(n, total) - CONTEXT_LINES);
	const to = Math.min(total, n + CONTEXT_LINES);
	const out: string[] = [];
	for (let k = from; k <= to; k++) {
		const line = lines.line(k - 1);
		out.push(`${hashlinePrefix(k, line)}${truncateLine(line, MAX_SHOWN_CHARS).text}`);
	}
	return out.join("\n");
}

/**
 * The view range [start, end) of the whole lines start..end (end's line break included), after
 * checking both refs against the current text.
 */
export function locateHashRange(
	lines: LineIndex,
	refs: { start?: string; end?: string },
	where: string,
	path: string,
): [number, number] {
	if (refs.start === undefined) {
		throw new KeelError("INVALID_ARGS", `${where}: hashline needs start (and optionally end).`, { path });
	}
	const a = parseRef(refs.start, `${where}.start`, path);
	const b = refs.end === undefined ? a : parseRef(refs.end, `${where}.end`, path);
	if (b.line < a.line) {
		throw new KeelError("INVALID_ARGS", `${where}: end line ${b.line} is before start line ${a.line}.`, {
			path,
		});
	}
	// A text ending in "\n" has an empty last entry in the index that is not a line of the file.
	const total = lines.count - (lines.text.endsWith("\n") ? 1 : 0);
	for (const [ref, name] of [
		[a, "start"],
		[b, "end"],
	] as const) {
		const actual = ref.line <= total ? lineHash(lines.line(ref.line - 1)) : undefined;
		if (actual === ref.hash) continue;
		const now = actual === undefined ? `the file has ${total} lines now` : `its hash is ${actual} now`;
		throw new KeelError(
			"STALE_READ",
			`${where}.${name} ${ref.line}#${ref.hash} no longer matches ${path} (${now}): the file changed since it was read. Current lines:\n${around(lines, ref.line, total)}\nUse these refs, or read the file again.`,
			{ path, details: { hashline: { line: ref.line, expected: ref.hash, actual: actual ?? null } } },
		);
	}
	const end = lines.hasBreak(b.line - 1) ? lines.start(b.line) : lines.end(b.line - 1);
	return [lines.start(a.line - 1), end];
}
