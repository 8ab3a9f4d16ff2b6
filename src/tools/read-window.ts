/**
 * The window of a file a read shows: the whole file read as opened (recorded, an image attached,
 * the text decoded in its own encoding and split into lines), or, past a size, one streamed pass
 * through the backend that keeps the shown lines only. Apart from the read tool, which pages and
 * words the result, because this is where the bytes are taken and the read state recorded.
 */

import type { FileOps, FileStat } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { fromSystemError } from "../boundary/system-errors.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize } from "../boundary/truncate.js";
import { decodeUtf8Lenient, looksBinary } from "../safety/encoding.js";
import { decodeText } from "../safety/text-encoding.js";
import { detectImage } from "./image-types.js";
import { type ImageDetails, imageResult } from "./read-image.js";
import type { ToolContext, ToolResult } from "./types.js";

/** Files above this size are never read whole: the backend must stream the window (readWindow). */
export const STREAM_ABOVE_BYTES = 16 * 1024 * 1024;
/**
 * Above this size a backend with readWindow streams the window: one pass that hashes the file
 * (the read state) and counts its lines, without decoding or splitting what is not shown.
 */
export const WINDOW_ABOVE_BYTES = 256 * 1024;

/** The lines of a file a read shows, and what the result says about them. */
export interface TextWindow {
	/** Lines from `offset` on (at least what the output can show), without line endings. */
	shown: string[];
	total: number;
	/** Byte length of line `offset` (for the "line too long" hint). */
	firstLineBytes: number;
	valid: boolean;
	/** The encoding the text was decoded from, when it is not UTF-8. */
	encoding?: string;
	/**
	 * Streamed only: bytes of the selected lines in the file (the shown lines may be fewer), so
	 * the truncation details count what a whole read would.
	 */
	selectedBytes?: number;
}

function binaryError(path: string, size: number): KeelError {
	return new KeelError(
		"BINARY_FILE",
		`${path} is a binary file (${formatSize(size)}); inspect it with bash (file, xxd, strings) instead.`,
		{ path },
	);
}

function offsetError(path: string, offset: number, total: number): KeelError {
	return new KeelError(
		"OFFSET_OUT_OF_RANGE",
		`Offset ${offset} is beyond the end of ${path} (${total} lines).`,
		{
			path,
		},
	);
}

export function changedError(path: string): KeelError {
	return new KeelError("CHANGED_ON_DISK", `${path} changed while it was being read; read it again.`, {
		path,
	});
}

/**
 * A large file: one streamed pass keeps the window only (memory bounded by what is shown).
 * Undefined for an image small enough to attach: the caller reads it whole.
 */
export async function streamWindow(
	args: { path: string },
	{ host }: ToolContext,
	fs: FileOps,
	canonical: string,
	st: FileStat,
	offset: number,
	limit: number | undefined,
): Promise<TextWindow | undefined> {
	if (!fs.readWindow) {
		throw new KeelError(
			"INVALID_ARGS",
			`${args.path} is ${formatSize(st.size)}, more than this backend reads at once (${formatSize(STREAM_ABOVE_BYTES)}). Search it with grep, or take lines with bash (sed -n '100,200p').`,
			{ path: args.path },
		);
	}
	const maxLines = Math.min(limit ?? DEFAULT_MAX_LINES + 1, DEFAULT_MAX_LINES + 1);
	// Files are read as opened (the window's stat is the handle's), so no earlier stat is imposed.
	const w = await fs
		.readWindow(canonical, undefined, {
			startLine: offset,
			maxLines,
			maxBytes: DEFAULT_MAX_BYTES,
			// A cut line must still be over the cap once shown: less a BOM (3 bytes), and a
			// character cut in two decodes to one U+FFFD.
			maxLineBytes: DEFAULT_MAX_BYTES + 8,
			selectLines: limit,
		})
		.catch((e) => {
			throw fromSystemError(e, canonical);
		});
	const size = w.stat.size;
	if (detectImage(w.head) && size <= STREAM_ABOVE_BYTES) return undefined;
	// The stat of the bytes hashed (taken at the open), not the guard's earlier one.
	host.readState.recordHash(canonical, w.stat, w.sha256);
	if (detectImage(w.head)) {
		throw new KeelError(
			"INVALID_ARGS",
			`${args.path} is an image of ${formatSize(size)}, too large to attach; make a smaller copy with bash (e.g. convert -resize) and read that.`,
			{ path: args.path },
		);
	}
	if (looksBinary(w.head)) throw binaryError(args.path, size);
	if (offset > w.totalLines) throw offsetError(args.path, offset, w.totalLines);
	let firstLineBytes = w.lineBytes[0] ?? 0;
	let selectedBytes = w.selectedBytes;
	const shown = w.lines.map((b, k) => {
		let line = b.toString("utf8");
		if (k === 0 && offset === 1 && line.startsWith("\uFEFF")) {
			line = line.slice(1);
			firstLineBytes -= 3;
			selectedBytes -= 3;
		}
		return line.endsWith("\r") ? line.slice(0, -1) : line;
	});
	return { shown, total: w.totalLines, firstLineBytes, valid: w.validUtf8, selectedBytes };
}

/** A file read whole: recorded, attached when an image, else decoded and split into lines. */
export async function wholeWindow(
	args: { path: string },
	{ host }: ToolContext,
	canonical: string,
	st: FileStat,
	bytes: Buffer,
	offset: number,
	limit: number | undefined,
): Promise<TextWindow | ToolResult<{ image: ImageDetails }>> {
	host.readState.record(canonical, st, bytes);
	const mimeType = detectImage(bytes);
	if (mimeType) return imageResult(bytes, mimeType);
	// A UTF-16 file has NUL bytes but a BOM that says what it is.
	const utf16 = (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
	if (!utf16 && looksBinary(bytes)) throw binaryError(args.path, bytes.length);
	let decoded = decodeUtf8Lenient(bytes);
	let encoding: string | undefined;
	if (utf16 || !decoded.valid) {
		// The file's own encoding when keel is sure of it (safety/text-encoding.ts); edits keep it.
		const own = decodeText(bytes);
		if (!("unsure" in own)) {
			decoded = { bom: own.bom, text: own.text, valid: true };
			encoding = own.encoding;
		} else if (utf16) throw binaryError(args.path, bytes.length);
	}
	// A read usually comes before an edit: its syntax check's whole parse is made now, off this path.
	if (decoded.valid && host.checkMode !== "off") host.syntax.prepare(args.path, canonical, decoded.text);
	const body = decoded.text.endsWith("\n") ? decoded.text.slice(0, -1) : decoded.text;
	const split = body.length === 0 ? [""] : body.split("\n");
	// CRLF lines lose their \r; a file without one (most) skips the pass over every line.
	const allLines = body.includes("\r") ? split.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l)) : split;
	if (offset > allLines.length) throw offsetError(args.path, offset, allLines.length);
	const end = limit === undefined ? allLines.length : Math.min(offset - 1 + limit, allLines.length);
	return {
		shown: allLines.slice(offset - 1, end),
		total: allLines.length,
		firstLineBytes: Buffer.byteLength(allLines[offset - 1], "utf8"),
		valid: decoded.valid,
		encoding,
	};
}

/**
 * The whole file if it is at most `maxBytes`, read as opened (its stat from the handle): a rival's
 * replace after the guard's stat is the newer file read, not a failure, and its size decides again.
 */
export function readWhole(
	fs: FileOps,
	canonical: string,
	maxBytes: number,
): Promise<{ stat: FileStat; bytes: Buffer | null }> {
	return fs.readCurrent(canonical, maxBytes);
}
