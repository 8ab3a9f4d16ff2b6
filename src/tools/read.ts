/**
 * `read` (pi-compatible): text with line paging and pi's limits, images as attachments. The pi
 * profile's read keeps pi's schema exactly; the unified profile's adds `hashline`, which prefixes
 * each line with its number and content hash (`12#a3f|text`) for hashline-addressed file edits.
 */

import type { FileStat } from "../backend/types.js";
import { fromSystemError, KeelError } from "../boundary/errors.js";
import { boolean, number, object, optional, string, withUnpublishedRange } from "../boundary/schema.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, truncateHead } from "../boundary/truncate.js";
import { hashlinePrefix } from "../edit/hashline.js";
import { decodeUtf8Lenient, looksBinary } from "../safety/encoding.js";
import { checkAborted, positiveInt, requireFile } from "./common.js";
import { detectImage } from "./image-types.js";
import { RANGES } from "./ranges.js";
import { imageResult } from "./read-image.js";
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
			'Prefix each line with its number and a short content hash, as "12#a3f|text", so a file edit can name lines by these refs (matchMode "hashline") instead of repeating their text. The prefix is not part of the line.',
	}),
);

export interface ReadArgs {
	path: string;
	offset?: number;
	limit?: number;
	hashline?: boolean;
}

const DESCRIPTION = `Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.`;

const annotations = { readOnly: true, destructive: false, idempotent: true };

export const readTool = defineTool<ReadArgs>({
	name: "read",
	label: "read",
	description: DESCRIPTION,
	parameters: object(fields),
	annotations,
	execute: (args, ctx) => readFile({ ...args, hashline: false }, ctx),
});

/** The unified profile's read: pi's arguments plus `hashline`. */
export const unifiedReadTool = defineTool<ReadArgs>({
	name: "read",
	label: "read",
	description: `${DESCRIPTION} With hashline: true each line is shown as "12#a3f|text" (number#hash|text) for hashline file edits.`,
	parameters: object({ ...fields, hashline: hashlineField }),
	annotations,
	execute: readFile,
});

async function readFile(args: ReadArgs, { session, signal }: ToolContext): Promise<ToolResult> {
	const offset = positiveInt("offset", args.offset, 1);
	const limit = args.limit === undefined ? undefined : positiveInt("limit", args.limit, 1);
	const { target, fs } = await session.resolveReadable(args.path);
	let st: FileStat;
	let bytes: Buffer;
	try {
		st = await fs.stat(target.canonical);
		requireFile(st, args.path);
		checkAborted(signal);
		bytes = await fs.readFile(target.canonical, st);
	} catch (e) {
		throw fromSystemError(e, args.path);
	}
	session.readState.record(target.canonical, st, bytes);

	const mimeType = detectImage(bytes);
	if (mimeType) return imageResult(bytes, mimeType);
	if (looksBinary(bytes)) {
		throw new KeelError(
			"BINARY_FILE",
			`${args.path} is a binary file (${formatSize(bytes.length)}); inspect it with bash (file, xxd, strings) instead.`,
			{ path: args.path },
		);
	}
	const decoded = decodeUtf8Lenient(bytes);
	const body = decoded.text.endsWith("\n") ? decoded.text.slice(0, -1) : decoded.text;
	const split = body.length === 0 ? [""] : body.split("\n");
	// CRLF lines lose their \r; a file without one (most) skips the pass over every line.
	const allLines = body.includes("\r") ? split.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l)) : split;
	const total = allLines.length;
	const start = offset - 1;
	if (start >= total) {
		throw new KeelError(
			"OFFSET_OUT_OF_RANGE",
			`Offset ${offset} is beyond the end of ${args.path} (${total} lines).`,
			{
				path: args.path,
			},
		);
	}
	const end = limit === undefined ? total : Math.min(start + limit, total);
	const shown = allLines.slice(start, end);
	const selected = (args.hashline ? shown.map((l, k) => hashlinePrefix(start + 1 + k, l) + l) : shown).join(
		"\n",
	);
	const truncation = truncateHead(selected);
	const first = start + 1;
	let out: string;
	let details: { truncation?: typeof truncation; encoding?: string } | undefined;
	if (truncation.firstLineExceedsLimit) {
		const size = formatSize(Buffer.byteLength(allLines[start], "utf8"));
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
	if (!decoded.valid) {
		out +=
			"\n\n[This file is not valid UTF-8: invalid bytes are shown as \uFFFD. Text edits to it will be refused.]";
		details = { ...details, encoding: "invalid-utf8" };
	}
	return { content: [text(out)], details };
}
