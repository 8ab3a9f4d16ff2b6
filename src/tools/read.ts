/** `read` (pi-compatible): text with line paging and pi's limits, images as attachments. */

import { fromSystemError, KeelError } from "../boundary/errors.js";
import { number, object, optional, string } from "../boundary/schema.js";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, truncateHead } from "../boundary/truncate.js";
import { decodeUtf8Lenient, looksBinary } from "../safety/encoding.js";
import { checkAborted, positiveInt, requireFile, statPath } from "./common.js";
import { detectImage } from "./image-types.js";
import { defineTool, text } from "./types.js";

const schema = object({
	path: string({ description: "Path to the file to read (relative or absolute)" }),
	offset: optional(number({ description: "Line number to start reading from (1-indexed)" })),
	limit: optional(number({ description: "Maximum number of lines to read" })),
});

export interface ReadArgs {
	path: string;
	offset?: number;
	limit?: number;
}

export const readTool = defineTool<ReadArgs>({
	name: "read",
	label: "read",
	description: `Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.`,
	parameters: schema,
	annotations: { readOnly: true, destructive: false, idempotent: true },
	async execute(args, { session, signal }) {
		const offset = positiveInt("offset", args.offset, 1);
		const limit = args.limit === undefined ? undefined : positiveInt("limit", args.limit, 1);
		const target = await session.resolvePath(args.path, "read");
		const st = await statPath(session, target.canonical, args.path);
		requireFile(st, args.path);
		checkAborted(signal);
		let bytes: Buffer;
		try {
			bytes = await session.backend.fs.readFile(target.canonical, st);
		} catch (e) {
			throw fromSystemError(e, args.path);
		}
		session.readState.record(target.canonical, st, bytes);

		const mimeType = detectImage(bytes);
		if (mimeType) {
			return {
				content: [
					text(`Read image file [${mimeType}]`),
					{ type: "image", data: bytes.toString("base64"), mimeType },
				],
			};
		}
		if (looksBinary(bytes)) {
			throw new KeelError(
				"BINARY_FILE",
				`${args.path} is a binary file (${formatSize(bytes.length)}); inspect it with bash (file, xxd, strings) instead.`,
				{ path: args.path },
			);
		}
		const decoded = decodeUtf8Lenient(bytes);
		const body = decoded.text.endsWith("\n") ? decoded.text.slice(0, -1) : decoded.text;
		const allLines =
			body.length === 0 ? [""] : body.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
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
		const selected = allLines.slice(start, end).join("\n");
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
	},
});
