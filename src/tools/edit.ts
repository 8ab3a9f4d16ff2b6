/**
 * `edit` (pi-compatible): replacements matched against the original content through the matching
 * ladder (exact first, then tolerant of quote, blank, indentation and blank-line drift; see
 * edit/ladder.ts), committed by compare-and-swap. BOM and per-line endings are kept; non-UTF-8 or
 * binary files are refused. The schema stays pi's; details.matched says which rung each edit took.
 */

import { KeelError } from "../boundary/errors.js";
import { type Accepted, array, object, string } from "../boundary/schema.js";
import { type DiagnosticsReport, diagnosticsDetails, diagnosticsLine } from "../diagnostics/diagnostics.js";
import { applyEdits, driftNote, type Matched } from "../edit/apply.js";
import { renderEditDiff } from "../edit/diff.js";
import { loadDiffBeforeCommit } from "../edit/jsdiff.js";
import { commitReplanning, replanNote } from "../edit/replan.js";
import { readRegular } from "../edit/snapshot.js";
import { commit } from "../safety/commit.js";
import { expectBytes, sha256 } from "../safety/read-state.js";
import { decodeText, encodeText, undecodable } from "../safety/text-encoding.js";
import { type SyntaxReport, syntaxDetails, syntaxLine } from "../syntax/report.js";
import { type CheckInput, checkedCommit, checkLines, checkModeFor } from "./common.js";
import { defineTool, type ToolResult, text } from "./types.js";

const replaceSchema = object({
	oldText: string({
		description:
			"Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.",
	}),
	newText: string({ description: "Replacement text for this targeted edit." }),
});

const schema = object({
	path: string({ description: "Path to the file to edit (relative or absolute)" }),
	edits: array(replaceSchema, {
		description:
			"One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
	}),
});

/** Models sometimes send `edits` as a JSON string, or one edit as top-level oldText/newText. */
function prepareArguments(raw: unknown): unknown {
	if (!raw || typeof raw !== "object" || Array.isArray(raw)) return raw;
	const args = { ...(raw as Record<string, unknown>) };
	if (typeof args.edits === "string") {
		try {
			const parsed = JSON.parse(args.edits);
			if (Array.isArray(parsed)) args.edits = parsed;
		} catch {
			// Leave it for the validator to report.
		}
	}
	if (typeof args.oldText === "string" && typeof args.newText === "string") {
		const edits = Array.isArray(args.edits) ? [...args.edits] : [];
		edits.push({ oldText: args.oldText, newText: args.newText });
		delete args.oldText;
		delete args.newText;
		args.edits = edits;
	}
	return args;
}

/** From this size a read buffer is reused for the new bytes (below it a new one costs nothing). */
const SPARE_MIN_BYTES = 1024 * 1024;

/** The snapshot's spare buffer, once: a re-planned commit encodes into a new one. */
function takeSpare(snap: { spare?: Buffer }): Buffer | undefined {
	const spare = snap.spare;
	snap.spare = undefined;
	return spare;
}

/** edit's result details: the change as a diff, and how each replacement was matched. */
export interface EditDetails {
	/** The change as a unified-style diff with line numbers. */
	diff: string;
	/** The first line the change touched (1-based), when it touched one. */
	firstChangedLine: number | undefined;
	/** The rung of the matching ladder each edit matched on, in order (exact first). */
	matched: Matched[];
	/** How many times the edit was re-planned because another writer changed the file meanwhile. */
	replanned?: number;
	/** The syntax check of the new text (when the file has a grammar and the check is on). */
	syntax?: SyntaxReport;
	/** The workspace's own checkers' new errors (when `diagnostics` is configured). */
	diagnostics?: DiagnosticsReport;
}

/** edit's arguments: the schema's type. */
export type EditArgs = Accepted<typeof schema>;

export const editTool = defineTool({
	name: "edit",
	label: "edit",
	description:
		"Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
	parameters: schema,
	annotations: { readOnly: false, destructive: true, idempotent: false },
	prepareArguments,
	async execute(args, ctx): Promise<ToolResult<EditDetails>> {
		loadDiffBeforeCommit();
		const { host } = ctx;
		if (args.edits.length === 0) {
			throw new KeelError("INVALID_ARGS", "edits must contain at least one replacement.", {
				path: args.path,
			});
		}
		const target = await host.resolvePath(args.path, "write");
		// The file is stat'ed once, inside the queue (a stat before queueing would be repeated there).
		return host.queue.run(target.canonical, async () => {
			const read = async () => {
				// The stat is the opened file's own: a replace that lands mid-read yields the newer file.
				const { stat: st, bytes } = await readRegular(host, target.canonical, args.path);
				// The file's own encoding (safety/text-encoding.ts); binary or uncertain: refused.
				const decoded = decodeText(bytes);
				if ("unsure" in decoded) throw undecodable(args.path, decoded.unsure);
				// A large file's buffer (which the caller of readFile owns) takes the new bytes, so a 10 MB
				// edit holds the text and one buffer, not also a second one; its compare-and-swap then
				// needs the hash. A smaller one is kept for the compare itself.
				const spare = bytes.length >= SPARE_MIN_BYTES;
				return {
					expect: spare ? { stat: st, sha256: sha256(bytes) } : expectBytes(st, bytes),
					decoded,
					spare: spare ? bytes : undefined,
				};
			};
			// Anchored by text: a file another writer changed meanwhile is re-planned (edit/replan.ts).
			const mode = checkModeFor(ctx);
			const {
				result: { plan: applied, syntax, diagnostics },
				replans,
			} = await commitReplanning(
				{
					read,
					plan: (snap) => applyEdits(snap.decoded.text, args.edits, args.path),
					commit: async (plan, snap) => {
						const change: CheckInput = {
							path: args.path,
							key: target.canonical,
							before: snap.decoded.text,
							after: () => plan.text,
							length: snap.decoded.text.length,
						};
						// In "refuse" mode checked before the commit, so that nothing is written. The scope
						// answers without making the call's signal (boundary/call-scope.ts).
						const { syntax, diagnostics } = await checkedCommit(
							host,
							mode,
							[change],
							ctx.scope ?? ctx.signal,
							ctx.signal,
							() =>
								commit(host, {
									canonical: target.canonical,
									shown: args.path,
									data:
										snap.decoded.encoding === "utf-8"
											? plan.encode(snap.decoded.bom, takeSpare(snap))
											: encodeText(plan.text, snap.decoded, args.path),
									expect: snap.expect,
								}),
							args.path,
						);
						return { plan, syntax, diagnostics };
					},
				},
				{ replannable: true, shown: args.path },
			);
			const { diff, firstChangedLine } = renderEditDiff(applied);
			return {
				content: [
					text(
						`Successfully replaced ${args.edits.length} block(s) in ${args.path}.${driftNote(applied.matched)}${replanNote(replans)}${checkLines(syntaxLine(syntax), diagnosticsLine(diagnostics))}`,
					),
				],
				details: {
					diff,
					firstChangedLine,
					matched: applied.matched,
					...(replans ? { replanned: replans } : {}),
					...syntaxDetails(syntax),
					...diagnosticsDetails(diagnostics),
				},
			};
		});
	},
});
