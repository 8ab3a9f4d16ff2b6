/**
 * The `file` tool's commit step: each preflighted plan re-checked inside the mutation queues and
 * turned into a planned change (safety/transaction.ts), then the set committed all-or-nothing,
 * then each query's result (contentRef, diff) built from what was committed.
 */
import { sameIdentity } from "../backend/temp-names.js";
import { KeelError } from "../boundary/errors.js";
import { fromSystemError } from "../boundary/system-errors.js";
import { type AppliedEdits, applyEdits } from "../edit/apply.js";
import { renderEditDiff, unifiedEditPatch } from "../edit/diff.js";
import { currentLines } from "../edit/hints.js";
import { readSettled, replanNote, replanOn } from "../edit/replan.js";
import { snapshotText } from "../edit/snapshot.js";
import { sha256 } from "../safety/read-state.js";
import { encodeText } from "../safety/text-encoding.js";
import type { Before, Change, Committed } from "../safety/transaction.js";
import type { ToolHost } from "../tool-host.js";
import type { CheckInput } from "./common.js";
import { lineRanges, type Plan, parentDir } from "./file-plan.js";

/** One query of a file call: its outcome, summary, diff and, for a write, a contentRef to its content. */
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
	/** Places an edit replaced (a replaceAll edit counts each place it matched). */
	replacements?: number;
	/** How many times the edit was planned again on another writer's bytes (edit/replan.ts). */
	replanned?: number;
}

/** A plan made ready to commit: its change, and what its result needs afterwards. */
export interface Prepared {
	plan: Plan;
	change: Change;
	applied?: AppliedEdits;
	/** The edit was planned again on bytes another writer left. */
	replanned?: boolean;
	/** An edit's text before (without BOM), for the syntax check. */
	beforeText?: string;
}

/**
 * Whether a plan may be planned again on another writer's bytes: an edit found by its text. Line
 * ranges and hashline refs point at positions, replaceAll's set of matches may have grown, and
 * writes and deletes were decided on a whole read: those fail closed instead.
 */
export function replannable(p: Plan): boolean {
	return (
		p.type === "edit" &&
		p.edits.every((e) => !e.replaceAll && e.matchMode !== "lineRange" && e.matchMode !== "hashline")
	);
}

async function readVerified(host: ToolHost, p: Plan, stat: Before & { kind: "file" }): Promise<Uint8Array> {
	let bytes: Buffer;
	try {
		bytes = await host.files.readFile(p.target.canonical, stat.stat);
	} catch (e) {
		throw fromSystemError(e, p.q.path);
	}
	if (sha256(bytes) !== stat.sha256) {
		throw new KeelError(
			"CHANGED_ON_DISK",
			`${p.q.path} was changed by another writer after it was checked; read it again.`,
			{
				path: p.q.path,
			},
		);
	}
	return bytes;
}

async function prepareEdit(host: ToolHost, p: Extract<Plan, { type: "edit" }>): Promise<Prepared> {
	const { target, q } = p;
	// Re-read inside the queue. If this session's own earlier commit changed the file since the
	// preflight, anchors are matched again on the current bytes (line ranges are not: they would
	// point elsewhere). Another writer's change re-plans an edit found by its text (a real conflict
	// fails, saying so); anything else fails closed.
	const snap = await readSettled(() => snapshotText(host, target.canonical, q.path));
	let applied = p.applied;
	let replanned = false;
	if (snap.sha256 !== p.snapshot.sha256 || !sameIdentity(snap.stat, p.snapshot.stat)) {
		const own = host.readState.get(target.canonical);
		const ours = own && own.sha256 === snap.sha256 && sameIdentity(own.stat, snap.stat);
		if (!ours && !replannable(p)) {
			throw new KeelError(
				"CHANGED_ON_DISK",
				`${q.path} was changed by another writer after it was checked; read it again and redo the edit.`,
				{ path: q.path },
			);
		}
		if (p.edits.some((e) => e.matchMode === "lineRange")) {
			throw new KeelError(
				"STALE_READ",
				`${q.path} changed since it was read; redo the lineRange edit on its current lines, or read it again.${currentLines(snap.text.replace(/\r\n?/g, "\n"), lineRanges(p.edits))}`,
				{ path: q.path },
			);
		}
		if (ours) applied = applyEdits(snap.text, p.edits, q.path);
		else {
			applied = replanOn({ plan: (s: typeof snap) => applyEdits(s.text, p.edits, q.path) }, snap, q.path, 1);
			replanned = true;
		}
	}
	const before: Before = { kind: "file", stat: snap.stat, sha256: snap.sha256, bytes: snap.bytes };
	const data = snap.encoding === "utf-8" ? applied.encode(snap.bom) : encodeText(applied.text, snap, q.path);
	const after = { kind: "data" as const, data };
	return {
		plan: p,
		change: { canonical: target.canonical, shown: q.path, before, after },
		applied,
		replanned,
		beforeText: snap.text,
	};
}

/** What the syntax check needs of a prepared query: its texts (none for a delete or a copy). */
export function syntaxInput(host: ToolHost, x: Prepared): CheckInput[] {
	const p = x.plan;
	const after = x.change.after;
	if (p.type === "delete" || after.kind !== "data") return [];
	const base = { path: p.q.path, key: p.target.canonical };
	if (p.type === "edit" && x.applied) {
		const applied = x.applied;
		const before = x.beforeText ?? "";
		return [{ ...base, before, after: () => applied.text, length: before.length }];
	}
	const data = after.data;
	const prior = x.change.before;
	const before =
		prior.kind !== "file"
			? undefined
			: prior.bytes
				? Buffer.from(prior.bytes).toString("utf8")
				: () => host.files.readFile(p.target.canonical, prior.stat).then((b) => b.toString("utf8"));
	return [{ ...base, before, after: () => Buffer.from(data).toString("utf8"), length: data.length }];
}

/** Prepare one plan; `multi`: the change has several files, so previous bytes are kept for a restore. */
export async function preparePlan(host: ToolHost, p: Plan, multi: boolean): Promise<Prepared> {
	await host.probes.afterAdmission?.(p.target.canonical);
	const base = { canonical: p.target.canonical, shown: p.q.path };
	if (p.type === "edit") return prepareEdit(host, p);
	if (p.type === "delete") {
		if (p.stat.type === "symlink") {
			const target = await host.files.readlink(p.target.canonical).catch(() => "?");
			return {
				plan: p,
				change: { ...base, before: { kind: "link", stat: p.stat, target }, after: { kind: "absent" } },
			};
		}
		const before: Before & { kind: "file" } = { kind: "file", stat: p.stat, sha256: "" };
		if (multi) {
			let bytes: Buffer;
			try {
				bytes = await host.files.readFile(p.target.canonical, p.stat);
			} catch (e) {
				throw fromSystemError(e, p.q.path);
			}
			before.bytes = bytes;
			before.sha256 = sha256(bytes);
		}
		return { plan: p, change: { ...base, before, after: { kind: "absent" } } };
	}
	await host.sweepOnce(parentDir(p));
	let before: Before = { kind: "absent" };
	if (p.expect !== "absent") {
		const file: Before & { kind: "file" } = { kind: "file", stat: p.expect.stat, sha256: p.expect.sha256 };
		if (multi) file.bytes = await readVerified(host, p, file);
		before = file;
	}
	const after = p.ref ? { kind: "copy" as const, source: p.ref } : { kind: "data" as const, data: p.data! };
	return { plan: p, change: { ...base, before, after } };
}

/** The query's result once everything committed. */
export async function resultOf(
	host: ToolHost,
	prep: Prepared,
	out: Committed,
	replanned = 0,
): Promise<QueryResult> {
	const p = prep.plan;
	const q = p.q;
	if (q.payloadRef) await host.payloads.drop(q.payloadRef);
	if (p.type === "delete") {
		const what = p.stat.type === "symlink" ? "symlink" : "file";
		return { index: p.i, type: "delete", path: q.path, ok: true, summary: `deleted ${what} ${q.path}` };
	}
	const contentRef = host.contentRefs.issue({
		canonical: p.target.canonical,
		stat: out.stat!,
		sha256: out.sha256!,
	});
	if (p.type === "write") {
		const verb = p.expect === "absent" ? "created" : "overwrote";
		return {
			index: p.i,
			type: "write",
			path: q.path,
			ok: true,
			summary: `${verb} ${q.path} (${out.stat!.size} bytes)`,
			contentRef,
		};
	}
	const applied = prep.applied!;
	const { diff, firstChangedLine } = renderEditDiff(applied);
	const patch = unifiedEditPatch(q.path, applied);
	const lenient = applied.matched.some((m) => m !== "exact");
	const summary = `edited ${q.path}: ${applied.replacements} replacement(s)${lenient ? ` (${applied.matched.join(", ")})` : ""}${replanNote(replanned)}`;
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
		replacements: applied.replacements,
		...(replanned ? { replanned } : {}),
	};
}
