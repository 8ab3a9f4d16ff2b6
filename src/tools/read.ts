/**
 * `read` (pi-compatible): text with line paging and pi's limits, images as attachments. The pi
 * profile's read keeps pi's schema exactly; the unified profile's adds `hashline`, which prefixes
 * each line with its number and content hash (`12#a3f|text`) for hashline-addressed file edits.
 */

import type { FileOps, FileStat } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import {
	type Accepted,
	boolean,
	number,
	object,
	optional,
	string,
	withUnpublishedRange,
} from "../boundary/schema.js";
import { fromSystemError } from "../boundary/system-errors.js";
import {
	DEFAULT_MAX_BYTES,
	DEFAULT_MAX_LINES,
	formatSize,
	type TruncationResult,
	truncateHead,
} from "../boundary/truncate.js";
import { hashlinePrefix } from "../edit/hashline.js";
import { requireFile } from "../edit/snapshot.js";
import { decodeUtf8Lenient, looksBinary } from "../safety/encoding.js";
import { decodeText } from "../safety/text-encoding.js";
import { checkAborted, positiveInt } from "./common.js";
import { detectImage } from "./image-types.js";
import { RANGES } from "./ranges.js";
import { type ImageDetails, imageResult } from "./read-image.js";
import { defineTool, type ToolContext, type ToolResult, text } from "./types.js";

const fields = {
	path: string({ description: "Path to the file to read (relative or absolute)" }),
	offset: optional(
		withUnpublishedRange(
			number({ description: "Line number to start reading from (1-indexed)" }),
			RANGES.lineNumber,
		),
	),
	limit: optional(
		withUnpublishedRange(number({ description: "Maximum number of lines to read" }), RANGES.lineCount),
	),
};

const hashlineField = optional(
	boolean({
		description:
			'Lines as "12#a3f|text": refs for file edits (matchMode hashline); the prefix is not content.',
	}),
);

const unifiedSchema = object({ ...fields, hashline: hashlineField });

/**
 * read's result details: where a text was cut (page on with offset), the encoding a non-UTF-8
 * file was decoded from, or what was done to an image.
 */
export interface ReadDetails {
	/** Set when the text shown was cut at the line or byte limit. */
	truncation?: TruncationResult;
	/** The file's encoding when it is not UTF-8 ("invalid-utf8": invalid bytes shown as U+FFFD). */
	encoding?: string;
	/** An image: its size before and after scaling, or why it was left out. */
	image?: ImageDetails;
}

/** read's arguments (the unified profile's; pi's schema has no hashline). */
export type ReadArgs = Accepted<typeof unifiedSchema>;

const DESCRIPTION = `Read a file: text, or an image (jpg, png, gif, webp) sent as an attachment. Text is truncated to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB; page with offset/limit, continuing with offset until done.`;

const annotations = { readOnly: true, destructive: false, idempotent: true };

export const readTool = defineTool({
	name: "read",
	label: "read",
	description: DESCRIPTION,
	parameters: object(fields),
	annotations,
	execute: (args, ctx) => readFile({ ...args, hashline: false }, ctx),
});

/** The unified profile's read: pi's arguments plus `hashline`. */
export const unifiedReadTool = defineTool({
	name: "read",
	label: "read",
	description: DESCRIPTION,
	parameters: unifiedSchema,
	annotations,
	execute: readFile,
});

/** Files above this size are never read whole: the backend must stream the window (readWindow). */
const STREAM_ABOVE_BYTES = 16 * 1024 * 1024;
/**
 * Above this size a backend with readWindow streams the window: one pass that hashes the file
 * (the read state) and counts its lines, without decoding or splitting what is not shown.
 */
const WINDOW_ABOVE_BYTES = 256 * 1024;

interface TextWindow {
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

function changedError(path: string): KeelError {
	return new KeelError("CHANGED_ON_DISK", `${path} changed while it was being read; read it again.`, {
		path,
	});
}

/**
 * A large file: one streamed pass keeps the window only (memory bounded by what is shown).
 * Undefined for an image small enough to attach: the caller reads it whole.
 */
async function streamWindow(
	args: ReadArgs,
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
async function wholeWindow(
	args: ReadArgs,
	{ host }: ToolContext,
	canonical: string,
	st: FileStat,
	bytes: Buffer,
	offset: number,
	limit: number | undefined,
): Promise<TextWindow | ToolResult<ReadDetails>> {
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
function readWhole(
	fs: FileOps,
	canonical: string,
	maxBytes: number,
): Promise<{ stat: FileStat; bytes: Buffer | null }> {
	return fs.readCurrent(canonical, maxBytes);
}

async function readFile(args: ReadArgs, ctx: ToolContext): Promise<ToolResult<ReadDetails>> {
	const { host, signal } = ctx;
	// The schema checker has bounded both (RANGES.lineNumber / lineCount); fractions are floored.
	const offset = positiveInt("offset", args.offset, 1);
	const limit = args.limit === undefined ? undefined : positiveInt("limit", args.limit, 1);
	const { target, fs } = await host.resolveReadable(args.path);
	let st: FileStat;
	let bytes: Buffer | null = null;
	try {
		st = await fs.stat(target.canonical);
		requireFile(st, target.canonical);
		checkAborted(signal);
		// Read whole up to this size; larger (then, or as opened) goes to the streamed window.
		const wholeUpTo = fs.readWindow ? WINDOW_ABOVE_BYTES : STREAM_ABOVE_BYTES;
		if (st.size <= wholeUpTo) ({ stat: st, bytes } = await readWhole(fs, target.canonical, wholeUpTo));
	} catch (e) {
		throw fromSystemError(e, target.canonical);
	}
	let win =
		bytes === null ? await streamWindow(args, ctx, fs, target.canonical, st, offset, limit) : undefined;
	if (win === undefined) {
		// Small enough to read whole, or an image (attached whole, as a smaller file is).
		if (bytes === null) {
			({ stat: st, bytes } = await readWhole(fs, target.canonical, STREAM_ABOVE_BYTES).catch((e) => {
				throw fromSystemError(e, target.canonical);
			}));
			// Replaced by one too large since the window found an image: read it again.
			if (bytes === null) throw changedError(target.canonical);
		}
		const whole = await wholeWindow(args, ctx, target.canonical, st, bytes, offset, limit);
		if ("content" in whole) return whole;
		win = whole;
	}
	const { shown, total } = win;
	const start = offset - 1;
	const end = limit === undefined ? total : Math.min(start + limit, total);
	const selected = (args.hashline ? shown.map((l, k) => hashlinePrefix(start + 1 + k, l) + l) : shown).join(
		"\n",
	);
	const truncation = truncateHead(selected);
	if (truncation.truncated && win.selectedBytes !== undefined) {
		// The window held only what can be shown: the totals are the selection's in the file
		// (its raw bytes: a "\r" before each "\n" and invalid bytes count as they are stored).
		truncation.totalLines = end - start;
		truncation.totalBytes = win.selectedBytes;
	}
	const first = start + 1;
	let out: string;
	let details: { truncation?: typeof truncation; encoding?: string } | undefined;
	if (truncation.firstLineExceedsLimit) {
		const size = formatSize(win.firstLineBytes);
		out = `[Line ${first} is ${size}, exceeds ${formatSize(DEFAULT_MAX_BYTES)} limit. Use bash: sed -n '${first}p' ${args.path} | head -c ${DEFAULT_MAX_BYTES}]`;
		details = { truncation };
	} else if (truncation.truncated) {
		const last = first + truncation.outputLines - 1;
		const why = truncation.truncatedBy === "lines" ? "" : ` (${formatSize(DEFAULT_MAX_BYTES)} limit)`;
		out = `${truncation.content}\n\n[Showing lines ${first}-${last} of ${total}${why}. Use offset=${last + 1} to continue.]`;
		details = { truncation };
	} else if (end < total) {
		out = `${truncation.content}\n\n[${total - end} more lines in file. Use offset=${end + 1} to continue.]`;
	} else {
		out = truncation.content;
	}
	if (win.encoding) {
		out += `\n\n[Decoded from ${win.encoding}; edits write the file back in ${win.encoding}.]`;
		details = { ...details, encoding: win.encoding };
	}
	if (!win.valid) {
		out +=
			"\n\n[This file is not valid UTF-8: invalid bytes are shown as \uFFFD. Text edits to it will be refused.]";
		details = { ...details, encoding: "invalid-utf8" };
	}
	return { content: [text(out)], details };
}
