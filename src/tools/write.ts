/**
 * `write` (pi-compatible): create or replace a file, atomically. A new path is created exclusively
 * (a file that appears meanwhile is never clobbered); an existing file is replaced only if this
 * session read it and it is unchanged since (compare-and-swap against that read).
 */

import { KeelError } from "../boundary/errors.js";
import { pathFactShown } from "../boundary/path-facts.js";
import { type Accepted, object, string } from "../boundary/schema.js";
import { type DiagnosticsReport, diagnosticsDetails, diagnosticsLine } from "../diagnostics/diagnostics.js";
import { isWellFormed } from "../edit/apply.js";
import { overwriteExpectation, requireFile, statOrNull } from "../edit/snapshot.js";
import { commit } from "../safety/commit.js";
import { type SyntaxReport, syntaxDetails, syntaxLine } from "../syntax/report.js";
import {
	type CheckInput,
	checkedCommit,
	checkLines,
	checkModeFor,
	refuseWrittenPlaceholder,
} from "./common.js";
import { defineTool, type ToolResult, text } from "./types.js";

const schema = object({
	path: string({ description: "Path to the file to write (relative or absolute)" }),
	content: string({ description: "Content to write to the file" }),
});

/** write's result details: the syntax check of the new text, when it ran. */
export interface WriteDetails {
	syntax?: SyntaxReport;
	/** The workspace's own checkers' new errors (when `diagnostics` is configured). */
	diagnostics?: DiagnosticsReport;
}

/** write's arguments: the schema's type. */
export type WriteArgs = Accepted<typeof schema>;

export const writeTool = defineTool({
	name: "write",
	label: "write",
	description:
		"Create a file, or replace one read in this session and unchanged since; any other existing file is refused (read it first). Creates parent directories.",
	parameters: schema,
	annotations: { readOnly: false, destructive: true, idempotent: true },
	async execute(args, ctx): Promise<ToolResult<WriteDetails>> {
		const { host, signal } = ctx;
		const target = await host.resolvePath(args.path, "write");
		if (target.canonical === target.root) {
			throw pathFactShown("wants-a-file", target.canonical, args.path);
		}
		if (!isWellFormed(args.content)) {
			throw new KeelError(
				"INVALID_ARGS",
				"content has a broken character (a lone UTF-16 surrogate); send whole characters.",
				{ path: args.path },
			);
		}
		const data = Buffer.from(args.content, "utf8");
		return host.queue.run(target.canonical, async () => {
			const before = await statOrNull(host, target.canonical);
			if (before) requireFile(before, target.canonical);
			const expect = before ? overwriteExpectation(host, target.canonical, before, args.path) : "absent";
			await refuseWrittenPlaceholder(host, target.canonical, before, args.content, args.path);
			const mode = checkModeFor(ctx);
			// The file's old text is read only when the new one has errors (to leave out the old ones).
			let beforeText: Promise<string> | undefined;
			const change: CheckInput = {
				path: args.path,
				key: target.canonical,
				// Read once, and only when a check needs it.
				before: before
					? () => {
							beforeText ??= host.files.readFile(target.canonical, before).then((b) => b.toString("utf8"));
							return beforeText;
						}
					: undefined,
				after: () => args.content,
				length: args.content.length,
			};
			const { syntax, diagnostics } = await checkedCommit(
				host,
				mode,
				[change],
				signal,
				signal,
				() => commit(host, { canonical: target.canonical, shown: args.path, data, expect }),
				args.path,
			);
			const details = { ...syntaxDetails(syntax), ...diagnosticsDetails(diagnostics) };
			return {
				content: [
					text(
						`Successfully wrote ${data.length} bytes to ${args.path}${checkLines(syntaxLine(syntax), diagnosticsLine(diagnostics))}`,
					),
				],
				...(syntax || diagnostics ? { details } : {}),
			};
		});
	},
});
