/**
 * `read` (pi-compatible): text with line paging and pi's limits, images as attachments. The pi
 * profile's read keeps pi's schema exactly; the unified profile's adds `hashline`, which prefixes
 * each line with its number and content hash (`12#a3f|text`) for hashline-addressed file edits.
 * The bytes are taken, and the lines to show found, in read-window.ts.
 */

import type { FileStat } from "../backend/types.js";
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
import { checkAborted, positiveInt } from "./common.js";
import { RANGES } from "./ranges.js";
import type { ImageDetails } from "./read-image.js";
import {
	changedError,
	readWhole,
	STREAM_ABOVE_BYTES,
	streamWindow,
	WINDOW_ABOVE_BYTES,
	wholeWindow,
} from "./read-window.js";
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
