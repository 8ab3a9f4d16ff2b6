/**
 * Bounded results. The result shape matches pi's TruncationResult so hosts that
 * know pi's tools can read it. Cuts never split a UTF-8 sequence or a UTF-16 surrogate pair.
 */

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
export const GREP_MAX_LINE_CHARS = 500;

export interface TruncationResult {
	content: string;
	truncated: boolean;
	truncatedBy: "lines" | "bytes" | null;
	totalLines: number;
	totalBytes: number;
	outputLines: number;
	outputBytes: number;
	lastLinePartial: boolean;
	firstLineExceedsLimit: boolean;
	maxLines: number;
	maxBytes: number;
}

export interface TruncationLimits {
	maxLines?: number;
	maxBytes?: number;
}

export function formatSize(bytes: number): string {
	if (bytes < 1024) return `${bytes}B`;
	if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
	return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

const utf8Bytes = (s: string) => Buffer.byteLength(s, "utf8");

function untruncated(
	content: string,
	lines: number,
	bytes: number,
	maxLines: number,
	maxBytes: number,
): TruncationResult {
	return {
		content,
		truncated: false,
		truncatedBy: null,
		totalLines: lines,
		totalBytes: bytes,
		outputLines: lines,
		outputBytes: bytes,
		lastLinePartial: false,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
}

/** Keep the first whole lines within both limits (file reads, search results). */
export function truncateHead(content: string, limits: TruncationLimits = {}): TruncationResult {
	const maxLines = limits.maxLines ?? DEFAULT_MAX_LINES;
	const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
	const totalBytes = utf8Bytes(content);
	const lines = content.split("\n");
	if (lines.length <= maxLines && totalBytes <= maxBytes) {
		return untruncated(content, lines.length, totalBytes, maxLines, maxBytes);
	}
	const base = {
		totalLines: lines.length,
		totalBytes,
		lastLinePartial: false,
		maxLines,
		maxBytes,
		truncated: true,
	};
	if (utf8Bytes(lines[0]) > maxBytes) {
		return {
			...base,
			content: "",
			truncatedBy: "bytes",
			outputLines: 0,
			outputBytes: 0,
			firstLineExceedsLimit: true,
		};
	}
	let bytes = 0;
	let count = 0;
	let by: "lines" | "bytes" = "lines";
	for (; count < lines.length && count < maxLines; count++) {
		const add = utf8Bytes(lines[count]) + (count > 0 ? 1 : 0);
		if (bytes + add > maxBytes) {
			by = "bytes";
			break;
		}
		bytes += add;
	}
	const out = lines.slice(0, count).join("\n");
	return {
		...base,
		content: out,
		truncatedBy: by,
		outputLines: count,
		outputBytes: bytes,
		firstLineExceedsLimit: false,
	};
}

/** Keep the last whole lines within both limits (command output); a huge last line keeps its tail. */
export function truncateTail(
	content: string,
	limits: TruncationLimits = {},
	totals?: { lines: number; bytes: number },
): TruncationResult {
	const maxLines = limits.maxLines ?? DEFAULT_MAX_LINES;
	const maxBytes = limits.maxBytes ?? DEFAULT_MAX_BYTES;
	const totalBytes = totals?.bytes ?? utf8Bytes(content);
	const lines = content.split("\n");
	const totalLines = totals?.lines ?? lines.length;
	if (!totals && lines.length <= maxLines && totalBytes <= maxBytes) {
		return untruncated(content, lines.length, totalBytes, maxLines, maxBytes);
	}
	const kept: string[] = [];
	let bytes = 0;
	let by: "lines" | "bytes" = "lines";
	let partial = false;
	for (let i = lines.length - 1; i >= 0 && kept.length < maxLines; i--) {
		const add = utf8Bytes(lines[i]) + (kept.length > 0 ? 1 : 0);
		if (bytes + add > maxBytes) {
			by = "bytes";
			if (kept.length === 0) {
				const tail = utf8Tail(lines[i], maxBytes);
				kept.unshift(tail);
				bytes = utf8Bytes(tail);
				partial = true;
			}
			break;
		}
		kept.unshift(lines[i]);
		bytes += add;
	}
	const truncated = totals ? totalBytes > bytes || totalLines > kept.length : true;
	return {
		content: kept.join("\n"),
		truncated,
		truncatedBy: truncated ? by : null,
		totalLines,
		totalBytes,
		outputLines: kept.length,
		outputBytes: bytes,
		lastLinePartial: partial,
		firstLineExceedsLimit: false,
		maxLines,
		maxBytes,
	};
}

/** The longest suffix of `s` whose UTF-8 encoding fits in `maxBytes`, cut on a character boundary. */
export function utf8Tail(s: string, maxBytes: number): string {
	const buf = Buffer.from(s, "utf8");
	if (buf.length <= maxBytes) return s;
	let start = buf.length - maxBytes;
	while (start < buf.length && (buf[start] & 0xc0) === 0x80) start++;
	return buf.subarray(start).toString("utf8");
}

/** Index at which to cut a byte buffer so that no UTF-8 sequence is split (moves forward). */
export function utf8BoundaryForward(buf: Uint8Array, index: number): number {
	let i = index;
	while (i < buf.length && (buf[i] & 0xc0) === 0x80) i++;
	return i;
}

/** Length of `buf` without a trailing incomplete UTF-8 sequence. */
export function utf8CompleteEnd(buf: Uint8Array): number {
	const n = buf.length;
	for (let back = 1; back <= Math.min(4, n); back++) {
		const b = buf[n - back];
		if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
		const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
		return need > back ? n - back : n;
	}
	return n;
}

/** Shorten a line to `maxChars` UTF-16 units without splitting a surrogate pair. */
export function truncateLine(
	text: string,
	maxChars: number = GREP_MAX_LINE_CHARS,
): { text: string; wasTruncated: boolean } {
	if (text.length <= maxChars) return { text, wasTruncated: false };
	let cut = maxChars;
	const code = text.charCodeAt(cut - 1);
	if (code >= 0xd800 && code <= 0xdbff) cut--;
	return { text: `${text.slice(0, cut)}... [truncated]`, wasTruncated: true };
}
