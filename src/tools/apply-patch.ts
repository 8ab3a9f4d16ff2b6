/**
 * `apply_patch`: Codex's patch format under Codex's JSON function shape (one
 * string argument, `input`). The patch is parsed whole, every path resolved through the guard,
 * then, holding the mutation queue of every file, each file is planned (matched, encoded) and the
 * set is committed all-or-nothing (safety/transaction.ts). `applyPatch` is the library entry for
 * hosts that want an apply_patch editor over a session.
 */
import { KeelError } from "../boundary/errors.js";
import { type Accepted, object, string } from "../boundary/schema.js";
import { type DiagnosticsReport, diagnosticsDetails, diagnosticsLine } from "../diagnostics/diagnostics.js";
import { renderDiff } from "../edit/diff.js";
import { loadDiffBeforeCommit } from "../edit/jsdiff.js";
import { parsePatch } from "../patch/parse.js";
import { type PlannedFile, planOp, resolveOps } from "../patch/plan.js";
import { commitChanges, withPaths } from "../safety/transaction.js";
import { type CheckMode, type SyntaxReport, syntaxDetails, syntaxLine } from "../syntax/report.js";
import type { ToolHost } from "../tool-host.js";
import { type CheckInput, checkArgument, checkedCommit, checkLines, checkModeFor } from "./common.js";
import { defineTool, type ToolResult, text } from "./types.js";

const unifiedSchema = object({ input: string(), check: checkArgument(false) });

/** apply_patch's arguments (the unified profile's: Codex's shape has `input` alone). */
export type ApplyPatchArgs = Accepted<typeof unifiedSchema>;

/** One file of an applied patch: what happened to it, where it moved, how its hunks matched, its diff. */
export interface PatchFileResult {
	path: string;
	action: PlannedFile["action"];
	movedTo?: string;
	/** The rung each hunk matched on (exact, rstrip, trim, fold, blankLines, append). */
	matched?: string[];
	diff?: string;
}

/** apply_patch's result details: each file's outcome and diff, and the syntax check. */
export interface ApplyPatchDetails {
	files: PatchFileResult[];
	/** The syntax check of the new texts (when a file has a grammar and the check is on). */
	syntax?: SyntaxReport;
	/** The workspace's own checkers' new errors (when `diagnostics` is configured). */
	diagnostics?: DiagnosticsReport;
}

const LETTER: Record<PlannedFile["action"], string> = {
	added: "A",
	deleted: "D",
	updated: "M",
	moved: "M",
	unchanged: "=",
};

/** Apply a patch in Codex's format through `host` (a Session is one): every file changes, or none does. */
export async function applyPatch(
	host: ToolHost,
	input: string,
	signal?: AbortSignal,
	mode: CheckMode = host.checkMode,
): Promise<ToolResult<ApplyPatchDetails>> {
	let syntax: SyntaxReport | undefined;
	let diagnostics: DiagnosticsReport | undefined;
	const ops = parsePatch(input);
	const resolved = await resolveOps(host, ops);
	const keys = resolved.flatMap((r) =>
		r.dest ? [r.target.canonical, r.dest.canonical] : [r.target.canonical],
	);
	const planned = await withPaths(host, keys, async () => {
		const plans: PlannedFile[] = [];
		for (const r of resolved) {
			try {
				plans.push(await planOp(host, r));
			} catch (e) {
				const err = e instanceof KeelError ? e : new KeelError("INTERNAL", "planning failed", { cause: e });
				const note =
					ops.length > 1 && !err.message.includes("Nothing was changed") ? " Nothing was changed." : "";
				throw new KeelError(err.code, `${err.message}${note}`, {
					path: err.path ?? r.op.path,
					payloadRef: err.payloadRef,
					details: err.details,
				});
			}
		}
		// In "refuse" mode checked before the commit: a new syntax error changes no file.
		const inputs = plans.flatMap(patchSyntaxInput);
		const changes = plans.flatMap((p) => p.changes);
		({ syntax, diagnostics } = await checkedCommit(host, mode, inputs, signal, signal, async () => {
			for (const c of changes) if (c.after.kind !== "absent") await host.sweepOnce(parentOf(c.canonical));
			if (changes.length > 0) await commitChanges(host, changes);
		}));
		return plans;
	});
	const files: PatchFileResult[] = planned.map((p) => {
		const out: PatchFileResult = { path: p.path, action: p.action };
		if (p.movedTo) out.movedTo = p.movedTo;
		if (p.matched) out.matched = p.matched;
		if (p.beforeText !== undefined && p.afterText !== undefined && p.action !== "unchanged")
			out.diff = renderDiff(p.beforeText.replace(/\r\n/g, "\n"), p.afterText.replace(/\r\n/g, "\n")).diff;
		return out;
	});
	const lines = planned.map((p) => {
		const lenient = (p.matched ?? []).filter((m) => m !== "exact" && m !== "append");
		const how = lenient.length ? ` (matched: ${p.matched!.join(", ")})` : "";
		return `${LETTER[p.action]} ${p.path}${p.movedTo ? ` -> ${p.movedTo}` : ""}${how}`;
	});
	return {
		content: [
			text(
				`Success. Updated the following files:\n${lines.join("\n")}${checkLines(syntaxLine(syntax), diagnosticsLine(diagnostics))}`,
			),
		],
		details: { files, ...syntaxDetails(syntax), ...diagnosticsDetails(diagnostics) },
	};
}

/** The texts the syntax check needs of a planned file (an added file, or an update's result). */
function patchSyntaxInput(p: PlannedFile): CheckInput[] {
	const written = p.changes.find((c) => c.after.kind === "data");
	if (written?.after.kind !== "data") return [];
	const data = written.after.data;
	const path = p.movedTo ?? p.path;
	if (p.beforeText !== undefined && p.afterText !== undefined) {
		const after = p.afterText;
		return [{ path, key: written.canonical, before: p.beforeText, after: () => after, length: after.length }];
	}
	const prior = written.before;
	const before = prior.kind === "file" && prior.bytes ? Buffer.from(prior.bytes).toString("utf8") : undefined;
	return [
		{
			path,
			key: written.canonical,
			before,
			after: () => Buffer.from(data).toString("utf8"),
			length: data.length,
		},
	];
}

function parentOf(canonical: string): string {
	const i = canonical.lastIndexOf("/");
	return i <= 0 ? "/" : canonical.slice(0, i);
}

const DESCRIPTION = `Edit files with a patch, given whole as \`input\`:
*** Begin Patch
*** Add File: <path> (then + lines: the content)
*** Delete File: <path>
*** Update File: <path>
*** Move to: <path> (optional rename)
@@ <line near the change> (optional)
 context line
-removed line
+added line
*** End of File (optional: the hunk ends the file)
*** End Patch
~3 context lines around each change, hunks in file order. Matching tolerates whitespace,
punctuation and blank-line drift; endings and BOM are kept. All files change or none. Adding or
moving onto an existing file needs a read of it first.`;

export const applyPatchTool = defineTool({
	name: "apply_patch",
	label: "apply_patch",
	description: DESCRIPTION,
	parameters: object({
		input: string(),
	}),
	annotations: { readOnly: false, destructive: true, idempotent: false },
	execute(args: ApplyPatchArgs, ctx) {
		loadDiffBeforeCommit();
		return applyPatch(ctx.host, args.input, ctx.signal, checkModeFor(ctx, args.check));
	},
});

/** The unified profile's apply_patch: Codex's plus the `check` argument of keel's file tool (said there). */
export const unifiedApplyPatchTool = defineTool<ApplyPatchArgs, ApplyPatchDetails, "apply_patch">({
	...applyPatchTool,
	parameters: unifiedSchema,
});
