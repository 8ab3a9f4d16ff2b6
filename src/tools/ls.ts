/** `ls` (pi-compatible): one directory, sorted case-insensitively, directories marked with "/". */
import { posix } from "node:path";
import type { DirEntry } from "../backend/types.js";
import { shownAs } from "../boundary/path-facts.js";
import { type Accepted, number, object, optional, string, withUnpublishedRange } from "../boundary/schema.js";
import { fromSystemError } from "../boundary/system-errors.js";
import { DEFAULT_MAX_BYTES, formatSize, type TruncationResult, truncateHead } from "../boundary/truncate.js";
import { requireDir, statPath } from "../edit/snapshot.js";
import type { ToolHost } from "../tool-host.js";
import { checkAborted, positiveInt } from "./common.js";
import { RANGES } from "./ranges.js";
import { defineTool, type ToolResult, text } from "./types.js";

const DEFAULT_LIMIT = 500;

/**
 * A link lists like a directory only when the guard resolves it inside the roots and the target
 * is one there. A link to anything outside is a plain name: its mark must not tell whether the
 * outside path exists or what it is. Dangling and looping links are plain too.
 */
async function linksToDir(host: ToolHost, link: string): Promise<boolean> {
	try {
		const target = await host.resolvePath(link, "read");
		if (!target.exists) return false;
		return (await host.files.stat(target.canonical)).type === "dir";
	} catch {
		return false;
	}
}

const schema = object({
	path: optional(string({ description: "Directory to list (default: current directory)" })),
	limit: optional(
		withUnpublishedRange(
			number({ description: "Maximum number of entries to return (default: 500)" }),
			RANGES.resultCount,
		),
	),
});

/** ls's result details: which limit cut the listing, when one did. */
export interface LsDetails {
	/** The entry limit, when the directory has more entries than it. */
	entryLimitReached?: number;
	/** Set when the listing was cut at the byte limit. */
	truncation?: TruncationResult;
}

/** ls's arguments: the schema's type. */
export type LsArgs = Accepted<typeof schema>;

export const lsTool = defineTool({
	name: "ls",
	label: "ls",
	description: `List a directory: entries sorted, '/' after directories, dotfiles included. Truncated to ${DEFAULT_LIMIT} entries or ${DEFAULT_MAX_BYTES / 1024}KB.`,
	parameters: schema,
	annotations: { readOnly: true, destructive: false, idempotent: true },
	async execute(args, { host, signal }): Promise<ToolResult<LsDetails>> {
		const limit = positiveInt("limit", args.limit, DEFAULT_LIMIT);
		const shownPath = args.path || ".";
		const target = await host.resolvePath(shownPath, "read");
		const st = await statPath(host, target.canonical);
		requireDir(st, target.canonical, shownPath);
		checkAborted(signal);
		let entries: DirEntry[];
		try {
			entries = await host.files.readdir(target.canonical, st);
		} catch (e) {
			throw shownAs(fromSystemError(e, target.canonical), shownPath);
		}
		entries.sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()));
		const shown = entries.slice(0, limit);
		const names = await Promise.all(
			shown.map(async (e) => {
				if (e.type === "dir") return `${e.name}/`;
				if (e.type !== "symlink") return e.name;
				return (await linksToDir(host, posix.join(target.canonical, e.name))) ? `${e.name}/` : e.name;
			}),
		);
		if (names.length === 0) return { content: [text("(empty directory)")] };
		const truncation = truncateHead(names.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
		const notices: string[] = [];
		const details: LsDetails = {};
		if (entries.length > limit) {
			notices.push(`${limit} entries limit reached. Use limit=${limit * 2} for more`);
			details.entryLimitReached = limit;
		}
		if (truncation.truncated) {
			notices.push(`${formatSize(DEFAULT_MAX_BYTES)} limit reached`);
			details.truncation = truncation;
		}
		const out = notices.length ? `${truncation.content}\n\n[${notices.join(". ")}]` : truncation.content;
		return { content: [text(out)], details: Object.keys(details).length ? details : undefined };
	},
});
