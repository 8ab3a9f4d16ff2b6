/**
 * keel's `file` tool as the Agents SDK's `Editor` (for `applyPatchTool({ editor })`). The SDK
 * hands the editor V4A diffs. An update becomes one `file` edit: each "@@" section's context and
 * "-" lines are the oldText, its context and "+" lines the newText, so keel's matching (unique,
 * tolerant of whitespace drift), its compare-and-swap commit and its encoding rules apply
 * unchanged. A create's diff is turned into content by the SDK's own applyDiff. A move is the edit,
 * then a write of the edited content (by contentRef) to the new path and a delete of the old one.
 */
import { type BoundResult, type BoundTool, bindTools, type ToolSource } from "../binding.js";
import { agents } from "./sdk.js";
import type { ApplyPatchOperation, ApplyPatchResult, Editor } from "./types.js";

interface Edit {
	oldText: string;
	newText: string;
}

type Query = Record<string, unknown>;

/** The sections of a V4A update diff as keel edits; throws on a line that is not V4A. */
export function v4aToEdits(diff: string): Edit[] {
	const lines = diff.split("\n");
	if (lines.at(-1) === "") lines.pop();
	const edits: Edit[] = [];
	let old: string[] = [];
	let neu: string[] = [];
	let changed = false;
	const flush = () => {
		if (changed) edits.push({ oldText: old.join("\n"), newText: neu.join("\n") });
		old = [];
		neu = [];
		changed = false;
	};
	for (const [i, line] of lines.entries()) {
		if (line.startsWith("@@")) flush();
		else if (line === "*** End of File") continue;
		else if (line === "" || line[0] === " ") {
			old.push(line.slice(1));
			neu.push(line.slice(1));
		} else if (line[0] === "-") {
			old.push(line.slice(1));
			changed = true;
		} else if (line[0] === "+") {
			neu.push(line.slice(1));
			changed = true;
		} else throw new Error(`line ${i + 1} of the diff starts with neither "@@", " ", "-" nor "+".`);
	}
	flush();
	return edits;
}

const failed = (output: string): ApplyPatchResult => ({ status: "failed", output });
const done = (r: BoundResult): ApplyPatchResult =>
	r.isError ? failed(r.text) : { status: "completed", output: r.text };

/** keel's file tool as the Agents SDK's `Editor`, for `applyPatchTool({ editor })`: all-or-nothing edits through the session. */
export function keelEditor(session: ToolSource): Editor {
	const [file] = bindTools(session, { only: ["file"] });
	if (!file) throw new Error('keel\'s Editor needs the file tool: open the session with profile "unified".');
	const run = (queries: Query[]) => file.call({ queries });
	return {
		async createFile(op) {
			let content: string;
			try {
				content = agents.applyDiff("", op.diff, "create");
			} catch (e) {
				return failed(
					`[INVALID_ARGS] The create diff for ${op.path} is not valid V4A: ${(e as Error).message}`,
				);
			}
			return done(await run([{ type: "write", path: op.path, content }]));
		},
		async updateFile(op) {
			let edits: Edit[];
			try {
				edits = v4aToEdits(op.diff);
			} catch (e) {
				return failed(`[INVALID_ARGS] The diff for ${op.path} is not valid V4A: ${(e as Error).message}`);
			}
			if (edits.some((e) => e.oldText === "")) {
				return failed(
					`[INVALID_ARGS] Every hunk of the diff for ${op.path} needs context or "-" lines to anchor it.`,
				);
			}
			if (edits.length === 0) {
				return failed(
					op.moveTo
						? `[INVALID_ARGS] keel moves ${op.path} only together with a change to it.`
						: `[NO_CHANGE] The diff for ${op.path} changes nothing.`,
				);
			}
			const edited = await run([{ type: "edit", path: op.path, edits }]);
			if (edited.isError || !op.moveTo) return done(edited);
			return move(file, op, edited);
		},
		async deleteFile(op) {
			return done(await run([{ type: "delete", path: op.path }]));
		},
	};
}

/** The edited file, written to moveTo from keel's contentRef of the edit, then the old path deleted. */
async function move(
	file: BoundTool,
	op: Extract<ApplyPatchOperation, { type: "update_file" }>,
	edited: BoundResult,
): Promise<ApplyPatchResult> {
	const results = (edited.details as { results?: Array<{ contentRef?: string }> } | undefined)?.results;
	const contentRef = results?.[0]?.contentRef;
	if (!contentRef)
		return failed(`[INTERNAL] keel returned no contentRef for ${op.path}; it was edited but not moved.`);
	const r = await file.call({
		queries: [
			{ type: "write", path: op.moveTo, contentRef },
			{ type: "delete", path: op.path },
		],
	});
	return done(r);
}
