/**
 * `file`: every mutation through one schema. All queries are preflighted
 * before the first side effect; then, holding the mutation queue of every path, each is re-checked
 * against the bytes on disk and the whole set is committed all-or-nothing (safety/transaction.ts):
 * every query's file changes, or none does.
 */
import { KeelError } from "../boundary/errors.js";
import { fromSystemError } from "../boundary/system-errors.js";
import { type DiagnosticsReport, diagnosticsDetails, diagnosticsLine } from "../diagnostics/diagnostics.js";
import { loadDiffBeforeCommit } from "../edit/jsdiff.js";
import { MAX_REPLANS, replanBackoff, replansExhausted } from "../edit/replan.js";
import { outcomeNote } from "../safety/commit-outcome.js";
import { commitChanges, withPaths } from "../safety/transaction.js";
import { type SyntaxReport, syntaxDetails, syntaxLine } from "../syntax/report.js";
import { checkAborted, checkedCommit, checkLines, checkModeFor } from "./common.js";
import {
	type Prepared,
	preparePlan,
	type QueryResult,
	replannable,
	resultOf,
	syntaxInput,
} from "./file-commit.js";
import { type Plan, planQuery } from "./file-plan.js";
import { checkQueryFields, type FileArgs, fileSchema, fileSchemaFor } from "./file-schema.js";
import { defineTool, type ToolContext, type ToolResult, text } from "./types.js";

export type { QueryResult } from "./file-commit.js";

/** file's result details: each query's outcome (diff, matches, contentRef) and the syntax check. */
export interface FileDetails {
	results: QueryResult[];
	/** The syntax check of the new texts (when a file has a grammar and the check is on). */
	syntax?: SyntaxReport;
	/** The workspace's own checkers' new errors (when `diagnostics` is configured). */
	diagnostics?: DiagnosticsReport;
}

const fileSpec = {
	name: "file" as const,
	label: "file",
	description:
		"Create, edit or delete files: queries [{type, path, ...}] are checked together, then run in order; all apply or none. edit: edits [{oldText, newText}], each matched in the original file exactly, else tolerating quote, whitespace, indentation and blank-line drift, uniquely unless replaceAll; or matchMode lineRange: startLine..endLine (1-based, inclusive) of a fresh read. write: content (or contentRef from an earlier result) for a new file or one you have read. delete: a file or symlink.",
	parameters: fileSchema,
	annotations: { readOnly: false, destructive: true, idempotent: false },
	async execute(args: FileArgs, ctx: ToolContext): Promise<ToolResult<FileDetails>> {
		loadDiffBeforeCommit();
		const { host, signal } = ctx;
		for (const [i, q] of args.queries.entries()) checkQueryFields(q, i);
		const plans: Plan[] = [];
		const seen = new Map<string, number>();
		for (const [i, q] of args.queries.entries()) {
			let plan: Plan;
			try {
				plan = await planQuery(host, q, i);
			} catch (e) {
				const err = e instanceof KeelError ? e : fromSystemError(e, q.path);
				const prefix = args.queries.length > 1 ? `queries[${i}] (${q.type} ${q.path}): ` : "";
				throw new KeelError(
					err.code,
					`${prefix}${err.message}${args.queries.length > 1 ? " Nothing was changed." : ""}`,
					{
						path: err.path,
						payloadRef: err.payloadRef,
						details: err.details,
					},
				);
			}
			const dup = seen.get(plan.target.canonical);
			if (dup !== undefined) {
				throw new KeelError(
					"INVALID_ARGS",
					`queries[${dup}] and queries[${i}] name the same file; merge them into one query.`,
					{ path: q.path },
				);
			}
			seen.set(plan.target.canonical, i);
			plans.push(plan);
		}
		checkAborted(signal);
		const multi = plans.length > 1;
		const mode = checkModeFor(ctx, args.check);
		let syntax: SyntaxReport | undefined;
		let diagnostics: DiagnosticsReport | undefined;
		const where = (p: Plan) => (multi ? `queries[${p.i}] (${p.q.type} ${p.q.path}): ` : "");
		const results = await withPaths(
			host,
			plans.map((p) => p.target.canonical),
			async () => {
				// A commit that lost its compare-and-swap to another writer is planned again on the new
				// bytes when every query is an edit found by its text (edit/replan.ts), at most MAX_REPLANS times.
				const replans = new Array<number>(plans.length).fill(0);
				for (let attempt = 0; ; attempt++) {
					const prepared: Prepared[] = [];
					for (const p of plans) {
						try {
							prepared.push(await preparePlan(host, p, multi));
						} catch (e) {
							const err = e instanceof KeelError ? e : fromSystemError(e, p.q.path);
							throw new KeelError(
								err.code,
								`${where(p)}${err.message}${multi ? " Nothing was changed." : ""}`,
								{ path: err.path, payloadRef: err.payloadRef, details: err.details },
							);
						}
					}
					for (const [k, x] of prepared.entries()) if (x.replanned) replans[k]++;
					// In "refuse" mode checked before the commit: a new syntax error changes no file.
					const inputs = prepared.flatMap((x) => syntaxInput(host, x));
					let outcomes: Awaited<ReturnType<typeof commitChanges>>;
					// Only the commit's own failures are a commit failure (a refusal or an abort before it is not).
					let committing = false;
					try {
						({
							value: outcomes,
							syntax,
							diagnostics,
						} = await checkedCommit(host, mode, inputs, signal, signal, () => {
							committing = true;
							return commitChanges(
								host,
								prepared.map((x) => x.change),
							);
						}));
					} catch (e) {
						if (!committing) throw e;
						const err = e as KeelError;
						const undone = ["rolled-back", "nothing-committed"].includes(String(err.details?.allOrNothing));
						if (err.code === "CHANGED_ON_DISK" && undone && plans.every(replannable)) {
							if (attempt >= MAX_REPLANS) {
								const p = prepared[(err.details?.failed as number | undefined) ?? 0].plan;
								const d = err.details as {
									allOrNothing: "rolled-back" | "nothing-committed";
									restored: string[];
								};
								const note = multi ? outcomeNote(d.allOrNothing, d.restored, []) : "";
								throw replansExhausted(p.q.path, { where: where(p), note, details: err.details });
							}
							await replanBackoff(attempt);
							continue;
						}
						throw await commitFailure(host, prepared, err, where);
					}
					const out: QueryResult[] = [];
					for (const [k, x] of prepared.entries()) out.push(await resultOf(host, x, outcomes[k], replans[k]));
					return out;
				}
			},
		);
		const lines = results.map((r) =>
			r.contentRef ? `${r.summary} [contentRef ${r.contentRef}]` : r.summary,
		);
		return {
			content: [text(`${lines.join("\n")}${checkLines(syntaxLine(syntax), diagnosticsLine(diagnostics))}`)],
			details: { results, ...syntaxDetails(syntax), ...diagnosticsDetails(diagnostics) },
		};
	},
};

export const fileTool = defineTool(fileSpec);

/** The same tool as offered where `read` has no hashline option (pi): no hashline match mode. */
export const fileToolWithoutHashline = defineTool({ ...fileSpec, parameters: fileSchemaFor(false) });

/** A failed commit, named by its query; a write's content is kept under a payloadRef when it was only in the way. */
async function commitFailure(
	host: Parameters<typeof preparePlan>[0],
	prepared: Prepared[],
	err: KeelError,
	where: (p: Plan) => string,
): Promise<KeelError> {
	const failed = prepared[(err.details?.failed as number | undefined) ?? 0];
	const p = failed.plan;
	let payloadRef = err.payloadRef;
	let kept = "";
	if (p.type === "write" && p.data && (err.code === "WRITE_COLLISION" || err.code === "CHANGED_ON_DISK")) {
		payloadRef = p.q.payloadRef ?? (await host.payloads.put("write", p.data));
		if (payloadRef) kept = ` The content is kept: retry with payloadRef "${payloadRef}".`;
	}
	return new KeelError(err.code, `${where(p)}${err.message}${kept}`, {
		path: err.path ?? p.q.path,
		payloadRef,
		details: err.details,
	});
}
