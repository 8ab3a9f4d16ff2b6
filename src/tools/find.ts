/** `find` (pi-compatible): files and directories by glob, through the backend's search engine. */

import { KeelError } from "../boundary/errors.js";
import { type Accepted, number, object, optional, string, withUnpublishedRange } from "../boundary/schema.js";
import { DEFAULT_MAX_BYTES, formatSize, type TruncationResult, truncateHead } from "../boundary/truncate.js";
import { requireDir, statPath } from "../edit/snapshot.js";
import { checkAborted, positiveInt, requireUnchanged } from "./common.js";
import { RANGES } from "./ranges.js";
import { timedOutOr } from "./search-budget.js";
import { defineTool, type ToolResult, text } from "./types.js";

const DEFAULT_LIMIT = 1000;

const schema = object({
	pattern: string({
		description: "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
	}),
	path: optional(string({ description: "Directory to search in (default: current directory)" })),
	limit: optional(
		withUnpublishedRange(
			number({ description: "Maximum number of results (default: 1000)" }),
			RANGES.resultCount,
		),
	),
});

/** find's result details: which limit cut the answer, when one did. */
export interface FindDetails {
	/** The result limit, when more paths matched than it. */
	resultLimitReached?: number;
	/** Set when the output was cut at the byte limit. */
	truncation?: TruncationResult;
}

/** find's arguments: the schema's type. */
export type FindArgs = Accepted<typeof schema>;

export const findTool = defineTool({
	name: "find",
	label: "find",
	description: `Find files by glob pattern; returns paths relative to the search directory. Respects .gitignore. Truncated to ${DEFAULT_LIMIT} results or ${DEFAULT_MAX_BYTES / 1024}KB.`,
	parameters: schema,
	annotations: { readOnly: true, destructive: false, idempotent: true },
	async execute(args, { host, signal, scope }): Promise<ToolResult<FindDetails>> {
		const limit = positiveInt("limit", args.limit, DEFAULT_LIMIT);
		if (args.pattern.length === 0) throw new KeelError("INVALID_ARGS", "pattern must not be empty.");
		if (args.pattern?.includes("\0"))
			throw new KeelError("INVALID_PATTERN", "Patterns must not contain a NUL byte.");
		const shownPath = args.path || ".";
		const target = await host.resolvePath(shownPath, "read");
		const st = await statPath(host, target.canonical);
		requireDir(st, target.canonical, shownPath);
		checkAborted(signal);
		const outcome = await host.search.find({
			pattern: args.pattern,
			path: target.canonical,
			limit,
			signal,
			owner: scope,
		});
		await requireUnchanged(host, target.canonical, st, shownPath);
		if (outcome.paths.length === 0)
			return timedOutOr("find", outcome.timedOut, { content: [text("No files found matching pattern")] });
		const truncation = truncateHead(outcome.paths.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
		const notices: string[] = [];
		const details: FindDetails = {};
		if (outcome.limitReached) {
			notices.push(`${limit} results limit reached. Use limit=${limit * 2} for more, or refine pattern`);
			details.resultLimitReached = limit;
		}
		if (truncation.truncated) {
			notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
			details.truncation = truncation;
		}
		const out = notices.length ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
		return timedOutOr("find", outcome.timedOut, {
			content: [text(out)],
			details: Object.keys(details).length ? details : undefined,
		});
	},
});
