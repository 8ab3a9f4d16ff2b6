/** `grep` (pi-compatible): content search through the backend's search engine. */
import { posix } from "node:path";
import { MAX_PATTERN_CHARS, patternTooLarge } from "../backend/search/patterns.js";
import type { GrepMatch } from "../backend/types.js";
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
import {
	DEFAULT_MAX_BYTES,
	formatSize,
	GREP_MAX_LINE_CHARS,
	type TruncationResult,
	truncateHead,
	truncateLine,
} from "../boundary/truncate.js";
import { statPath } from "../edit/snapshot.js";
import { checkAborted, positiveInt, requireUnchanged } from "./common.js";
import { RANGES } from "./ranges.js";
import { timedOutOr } from "./search-budget.js";
import { defineTool, type ToolResult, text } from "./types.js";

const DEFAULT_LIMIT = 100;

const schema = object({
	pattern: string({ description: "Search pattern (regex or literal string)" }),
	path: optional(string({ description: "Directory or file to search (default: current directory)" })),
	glob: optional(string({ description: "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'" })),
	ignoreCase: optional(boolean({ description: "Case-insensitive search (default: false)" })),
	literal: optional(
		boolean({ description: "Treat pattern as literal string instead of regex (default: false)" }),
	),
	context: optional(
		withUnpublishedRange(
			number({ description: "Number of lines to show before and after each match (default: 0)" }),
			RANGES.contextLines,
		),
	),
	limit: optional(
		withUnpublishedRange(
			number({ description: "Maximum number of matches to return (default: 100)" }),
			RANGES.resultCount,
		),
	),
});

/** grep's result details: which limit cut the answer, when one did. */
export interface GrepDetails {
	/** The match limit, when more matches were found than it. */
	matchLimitReached?: number;
	/** Set when the output was cut at the byte limit. */
	truncation?: TruncationResult;
	/** Some lines were cut to the line-length limit. */
	linesTruncated?: true;
}

/** grep's arguments: the schema's type. */
export type GrepArgs = Accepted<typeof schema>;

export const grepTool = defineTool({
	name: "grep",
	label: "grep",
	description: `Search file contents for a regex or literal text; returns matching lines with paths and line numbers. Respects .gitignore. Truncated to ${DEFAULT_LIMIT} matches or ${DEFAULT_MAX_BYTES / 1024}KB, long lines to ${GREP_MAX_LINE_CHARS} chars.`,
	parameters: schema,
	annotations: { readOnly: true, destructive: false, idempotent: true },
	async execute(args, { host, signal, scope }): Promise<ToolResult<GrepDetails>> {
		// The schema checker has bounded both (RANGES.resultCount / contextLines); fractions are floored.
		const limit = positiveInt("limit", args.limit, DEFAULT_LIMIT);
		const context = args.context === undefined || args.context <= 0 ? 0 : Math.floor(args.context);
		if (args.pattern.length === 0) throw new KeelError("INVALID_ARGS", "pattern must not be empty.");
		// Every engine compiles the pattern before searching: a huge one is refused before any does.
		if (args.pattern.length > MAX_PATTERN_CHARS) {
			throw patternTooLarge(args.pattern, {
				measure: "characters",
				size: args.pattern.length,
				limit: MAX_PATTERN_CHARS,
			});
		}
		if (args.pattern?.includes("\0") || args.glob?.includes("\0"))
			throw new KeelError("INVALID_PATTERN", "Patterns must not contain a NUL byte.");
		const shownPath = args.path || ".";
		const target = await host.resolvePath(shownPath, "read");
		const st = await statPath(host, target.canonical);
		const isDir = st.type === "dir";
		if (!isDir && st.type !== "file") {
			// A FIFO would block the search forever and a device (/dev/zero) never ends: never opened.
			throw new KeelError(
				"NOT_A_FILE",
				`${shownPath} is not a regular file or directory (a FIFO, device or socket); grep searches regular files only.`,
				{ path: shownPath },
			);
		}
		checkAborted(signal);
		const outcome = await host.search.grep({
			pattern: args.pattern,
			path: target.canonical,
			glob: args.glob || undefined,
			ignoreCase: args.ignoreCase,
			literal: args.literal,
			context,
			limit,
			signal,
			owner: scope,
		});
		await requireUnchanged(host, target.canonical, st, shownPath);
		if (outcome.matches.length === 0)
			return timedOutOr("grep", outcome.timedOut, { content: [text("No matches found")] });
		const rel = (p: string) => (isDir ? posix.relative(target.canonical, p) : posix.basename(p));
		let linesTruncated = false;
		const clip = (s: string) => {
			const r = truncateLine(s.replace(/\r/g, ""));
			if (r.wasTruncated) linesTruncated = true;
			return r.text;
		};
		const rows: string[] = [];
		const block = (m: GrepMatch) => {
			const name = rel(m.path);
			for (const c of m.before) rows.push(`${name}-${c.line}- ${clip(c.text)}`);
			rows.push(`${name}:${m.line}: ${clip(m.text)}`);
			for (const c of m.after) rows.push(`${name}-${c.line}- ${clip(c.text)}`);
		};
		outcome.matches.forEach(block);
		const truncation = truncateHead(rows.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
		const notices: string[] = [];
		const details: GrepDetails = {};
		if (outcome.limitReached) {
			notices.push(`${limit} matches limit reached. Use limit=${limit * 2} for more, or refine pattern`);
			details.matchLimitReached = limit;
		}
		if (truncation.truncated) {
			notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
			details.truncation = truncation;
		}
		if (linesTruncated) {
			notices.push(`Some lines truncated to ${GREP_MAX_LINE_CHARS} chars. Use read tool to see full lines`);
			details.linesTruncated = true;
		}
		const out = notices.length ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
		return timedOutOr("grep", outcome.timedOut, {
			content: [text(out)],
			details: Object.keys(details).length ? details : undefined,
		});
	},
});
