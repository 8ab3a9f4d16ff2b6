/**
 * `checkpoints`: the session's checkpoints (checkpoints/checkpoints.ts), offered when the session
 * keeps them. list; diff since one; restore to one (default: undo the last call that changed
 * something). A restore that would overwrite a change keel's calls did not make changes nothing
 * and names the paths, unless `force`.
 */
import { KeelError } from "../boundary/errors.js";
import { boolean, integer, object, oneOf, optional, withUnpublishedRange } from "../boundary/schema.js";
import type {
	CheckpointListing,
	Checkpoints,
	DiffResult,
	RestoreResult,
} from "../checkpoints/checkpoints.js";
import { type ArgsOf, defineTool, type ToolResult, text } from "./types.js";

/** checkpoints' result details: list gives the listing, diff the changes, restore what it restored. */
export type CheckpointsDetails = CheckpointListing | DiffResult | RestoreResult;

/** checkpoints' arguments: the schema's type. */
export type CheckpointsArgs = ArgsOf<typeof checkpointsTool>;

function when(at: number): string {
	return new Date(at).toISOString().slice(11, 19);
}

async function listing(cps: Checkpoints): Promise<ToolResult<CheckpointListing>> {
	const l = await cps.list();
	const lines = l.checkpoints.map(
		(cp) =>
			`${cp.id} ${when(cp.at)} ${cp.tool}${cp.fileCount ? `: ${cp.files.join(", ")}${cp.fileCount > cp.files.length ? ` (+${cp.fileCount - cp.files.length})` : ""}` : ""}`,
	);
	if (l.dropped) lines.push(`[${l.dropped} older checkpoints dropped by the budgets]`);
	if (l.leftOutCount)
		lines.push(
			`[left out by rule: ${l.leftOut.slice(0, 5).join(", ")}${l.leftOutCount > 5 ? ` and ${l.leftOutCount - 5} more` : ""}]`,
		);
	if (l.notRestorable.length)
		lines.push(`[kept by identity only, not restorable: ${l.notRestorable.join(", ")}]`);
	if (l.truncated)
		lines.push("[the workspace has more entries than the scan budget: only the first are checkpointed]");
	return { content: [text(lines.join("\n"))], details: l };
}

export const checkpointsTool = defineTool({
	name: "checkpoints",
	label: "checkpoints",
	description:
		"Every call that changed files (shell included) is a checkpoint. list; diff: changes since id; restore: the workspace as at id (default: undo the last change). Never overwrites changes made outside keel's calls unless force.",
	parameters: object({
		action: oneOf(["list", "diff", "restore"]),
		id: optional(withUnpublishedRange(integer(), { minimum: 0, maximum: 2 ** 31 })),
		force: optional(boolean()),
	}),
	annotations: { readOnly: false, destructive: true, idempotent: false },
	async execute(args, { host }): Promise<ToolResult<CheckpointsDetails>> {
		const cps = host.checkpoints;
		if (!cps)
			throw new KeelError("UNSUPPORTED", "This session keeps no checkpoints (SessionOptions.checkpoints).");
		if (args.action === "list") return listing(cps);
		if (args.action === "diff") {
			if (args.id === undefined) throw new KeelError("INVALID_ARGS", "diff needs the id of a checkpoint.");
			const d = await cps.diff(args.id);
			const head = d.changes.length
				? d.changes.map((c) => `${c.path}: ${c.was} -> ${c.now}`).join("\n")
				: `Nothing changed since checkpoint ${d.from}.`;
			return { content: [text(d.patch ? `${head}\n\n${d.patch}` : head)], details: d };
		}
		const r = await cps.restore(args.id, { force: args.force });
		const lines = [
			`Restored ${r.restored.length} path(s) to checkpoint ${r.to}${r.checkpoint !== undefined ? ` (undo this with restore id ${r.checkpoint - 1})` : ""}.`,
			...r.problems.map((p) => `left as is: ${p.path}: ${p.problem}`),
		];
		return { content: [text(lines.join("\n"))], details: r };
	},
});
