/**
 * `file` (REQUIREMENTS T2): every mutation through one schema. All queries are preflighted before
 * the first side effect; then they run in order, each in the mutation queue of its canonical path,
 * each committed by compare-and-swap, each reporting its own result.
 */
import { sameIdentity } from "../backend/temp-names.js";
import type { FileStat } from "../backend/types.js";
import { fromSystemError, KeelError, type SerializedError } from "../boundary/errors.js";
import { applyEdits } from "../edit/apply.js";
import { renderDiff, unifiedPatch } from "../edit/diff.js";
import { commitReplanning, readSettled, replanNote, replanOn } from "../edit/replan.js";
import { commit } from "../safety/commit.js";
import { encodeUtf8 } from "../safety/encoding.js";
import type { Session } from "../session.js";
import { checkAborted } from "./common.js";
import { type FileSnapshot, type Plan, parentDir, planQuery, snapshotText } from "./file-plan.js";
import { checkQueryFields, type FileArgs, fileSchema } from "./file-schema.js";
import { defineTool, text } from "./types.js";

export interface QueryResult {
	index: number;
	type: "edit" | "write" | "delete";
	path: string;
	ok: boolean;
	summary: string;
	contentRef?: string;
	diff?: string;
	patch?: string;
	firstChangedLine?: number;
	matched?: string[];
	/** How many times the edit was planned again on another writer's bytes (edit/replan.ts). */
	replanned?: number;
	error?: SerializedError;
}

async function runWrite(session: Session, p: Extract<Plan, { type: "write" }>): Promise<QueryResult> {
	const { target, q } = p;
	await session.sweepOnce(parentDir(p));
	let stat: FileStat;
	let hash: string;
	if (p.ref) {
		try {
			stat = await session.backend.fs.copyFile(p.ref.canonical, target.canonical, {
				sourceStat: p.ref.stat,
				sha256: p.ref.sha256,
				expect: p.expect,
				mkdirs: p.expect === "absent",
			});
		} catch (e) {
			throw fromSystemError(e, q.path);
		}
		hash = p.ref.sha256;
		session.readState.recordHash(target.canonical, stat, hash);
	} else {
		try {
			stat = await commit(session, {
				canonical: target.canonical,
				shown: q.path,
				data: p.data!,
				expect: p.expect,
			});
		} catch (e) {
			const err = e as KeelError;
			if (err.code !== "WRITE_COLLISION" && err.code !== "CHANGED_ON_DISK") throw err;
			const ref = q.payloadRef ?? (await session.payloads.put("write", p.data!));
			throw new KeelError(
				err.code,
				`${err.message}${ref ? ` The content is kept: retry with payloadRef "${ref}".` : ""}`,
				{
					path: q.path,
					payloadRef: ref,
				},
			);
		}
		hash = session.readState.get(target.canonical)!.sha256;
	}
	if (q.payloadRef) await session.payloads.drop(q.payloadRef);
	const contentRef = session.contentRefs.issue({ canonical: target.canonical, stat, sha256: hash });
	const verb = p.expect === "absent" ? "created" : "overwrote";
	return {
		index: p.i,
		type: "write",
		path: q.path,
		ok: true,
		summary: `${verb} ${q.path} (${stat.size} bytes)`,
		contentRef,
	};
}

async function runEdit(session: Session, p: Extract<Plan, { type: "edit" }>): Promise<QueryResult> {
	const { target, q } = p;
	// Edits found by their text re-plan when another writer changed the file (edit/replan.ts);
	// line ranges, hashline refs and replaceAll (whose set of matches may have grown) do not.
	const replannable = p.edits.every(
		(e) => !e.replaceAll && (e.matchMode ?? "exact") !== "lineRange" && e.matchMode !== "hashline",
	);
	const plan = (s: FileSnapshot) => applyEdits(s.text, p.edits, q.path);
	// Re-read inside the queue. If this session's own earlier commit changed the file since the
	// preflight, anchors are matched again on the current bytes (line ranges are not: they would
	// point elsewhere). Another writer's change re-plans the edit, or fails closed.
	const snap = await readSettled(() => snapshotText(session, target.canonical, q.path));
	let applied = p.applied;
	let replannedAtAdmission = 0;
	if (snap.sha256 !== p.snapshot.sha256 || !sameIdentity(snap.stat, p.snapshot.stat)) {
		const own = session.readState.get(target.canonical);
		const ours = own && own.sha256 === snap.sha256 && sameIdentity(own.stat, snap.stat);
		if (!ours && !replannable) {
			throw new KeelError(
				"CHANGED_ON_DISK",
				`${q.path} was changed by another writer after it was checked; read it again and redo the edit.`,
				{
					path: q.path,
				},
			);
		}
		if (p.edits.some((e) => e.matchMode === "lineRange")) {
			// Line numbers from the model's read no longer point where they did.
			throw new KeelError(
				"STALE_READ",
				`${q.path} changed since it was read; read it again, then redo the lineRange edit.`,
				{ path: q.path },
			);
		}
		if (ours) applied = plan(snap);
		else {
			applied = replanOn({ plan }, snap, q.path, 1);
			replannedAtAdmission = 1;
		}
	}
	const committed = await commitReplanning(
		{
			read: () => snapshotText(session, target.canonical, q.path),
			plan,
			commit: async (planned, s) => {
				const stat = await commit(session, {
					canonical: target.canonical,
					shown: q.path,
					data: encodeUtf8(planned.text, s.bom),
					expect: { stat: s.stat, sha256: s.sha256 },
				});
				return { planned, stat };
			},
		},
		{ first: { snapshot: snap, plan: applied }, replannable, shown: q.path },
	);
	applied = committed.result.planned;
	const stat = committed.result.stat;
	const replans = replannedAtAdmission + committed.replans;
	if (q.payloadRef) await session.payloads.drop(q.payloadRef);
	const { diff, firstChangedLine } = renderDiff(applied.beforeLf, applied.afterLf);
	const patch = unifiedPatch(q.path, applied.beforeLf, applied.afterLf);
	const contentRef = session.contentRefs.issue({
		canonical: target.canonical,
		stat,
		sha256: session.readState.get(target.canonical)!.sha256,
	});
	const summary = `edited ${q.path}: ${p.edits.length} replacement(s)${applied.matched.some((m) => m !== "exact") ? ` (${applied.matched.join(", ")})` : ""}${replanNote(replans)}`;
	return {
		index: p.i,
		type: "edit",
		path: q.path,
		ok: true,
		summary,
		diff,
		patch,
		firstChangedLine,
		contentRef,
		matched: applied.matched,
		...(replans ? { replanned: replans } : {}),
	};
}

async function runDelete(session: Session, p: Extract<Plan, { type: "delete" }>): Promise<QueryResult> {
	try {
		await session.backend.fs.unlink(p.target.canonical, p.stat);
	} catch (e) {
		throw fromSystemError(e, p.q.path);
	}
	session.readState.forget(p.target.canonical);
	const what = p.stat.type === "symlink" ? "symlink" : "file";
	return { index: p.i, type: "delete", path: p.q.path, ok: true, summary: `deleted ${what} ${p.q.path}` };
}

function run(session: Session, p: Plan): Promise<QueryResult> {
	return session.queue.run(p.target.canonical, async () => {
		await session.probes.afterAdmission?.(p.target.canonical);
		if (p.type === "write") return runWrite(session, p);
		if (p.type === "edit") return runEdit(session, p);
		return runDelete(session, p);
	});
}

export const fileTool = defineTool<FileArgs>({
	name: "file",
	label: "file",
	description:
		'Create, edit or delete files. queries: [{type, path, ...}] — edit: {edits:[{oldText,newText}]} matched against the current file (exactly, else tolerating quote, blank, indentation and blank-line drift, always uniquely; or matchMode lineRange with startLine/endLine after a read, or hashline with start/end refs like "12#a3f" from read with hashline: true); write: {content} creates a new file or replaces a file you have read (or {contentRef} to copy content written earlier); delete: removes a file or symlink. All queries are checked before any runs; each reports its own result. A failure that is only about the path returns a payloadRef: retry with it and a corrected path instead of resending the content.',
	parameters: fileSchema,
	annotations: { readOnly: false, destructive: true, idempotent: false },
	async execute(args, { session, signal }) {
		for (const [i, q] of args.queries.entries()) checkQueryFields(q, i);
		const plans: Plan[] = [];
		const seen = new Map<string, number>();
		for (const [i, q] of args.queries.entries()) {
			let plan: Plan;
			try {
				plan = await planQuery(session, q, i);
			} catch (e) {
				const err = e instanceof KeelError ? e : fromSystemError(e, q.path);
				const prefix = args.queries.length > 1 ? `queries[${i}] (${q.type} ${q.path}): ` : "";
				throw new KeelError(
					err.code,
					`${prefix}${err.message}${args.queries.length > 1 ? " Nothing was changed." : ""}`,
					{
						path: err.path,
						payloadRef: err.payloadRef,
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
		const results: QueryResult[] = [];
		for (const p of plans) {
			try {
				results.push(await run(session, p));
			} catch (e) {
				const err = e instanceof KeelError ? e : fromSystemError(e, p.q.path);
				results.push({
					index: p.i,
					type: p.q.type,
					path: p.q.path,
					ok: false,
					summary: `${p.q.type} ${p.q.path} failed: ${err.message}`,
					error: err.toJSON(),
				});
			}
		}
		const lines = results.map((r) =>
			r.contentRef ? `${r.summary} [contentRef ${r.contentRef}]` : r.summary,
		);
		const failed = results.filter((r) => !r.ok);
		if (failed.length > 0) {
			const first = failed[0].error!;
			throw new KeelError(
				first.code,
				`${failed.length} of ${results.length} queries failed.\n${lines.join("\n")}`,
				{
					path: first.path,
					payloadRef: first.payloadRef,
					details: { results },
				},
			);
		}
		return { content: [text(lines.join("\n"))], details: { results } };
	},
});
