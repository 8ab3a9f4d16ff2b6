/**
 * Preflight for the `file` tool: authority, existence, type, collision,
 * staleness and anchors are all checked for every query before the first side effect.
 */
import { posix } from "node:path";
import { sameIdentity } from "../backend/temp-names.js";
import type { Expected, FileStat } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { pathFactShown, shownAs } from "../boundary/path-facts.js";
import { fromSystemError } from "../boundary/system-errors.js";
import { type AppliedEdits, applyEdits, isWellFormed } from "../edit/apply.js";
import { currentLines } from "../edit/hints.js";
import { readSettled } from "../edit/replan.js";
import {
	type FileSnapshot,
	overwriteExpectation,
	requireFile,
	snapshotText,
	statOrNull,
} from "../edit/snapshot.js";
import type { ContentSource } from "../safety/content-refs.js";
import type { ResolvedPath } from "../safety/path-guard.js";
import type { ToolHost } from "../tool-host.js";
import { refuseWrittenPlaceholder } from "./common.js";
import type { EditItem, FileQuery } from "./file-schema.js";

export type Plan =
	| {
			type: "write";
			i: number;
			q: FileQuery;
			target: ResolvedPath;
			data?: Buffer;
			ref?: ContentSource;
			expect: "absent" | Expected;
	  }
	| {
			type: "edit";
			i: number;
			q: FileQuery;
			target: ResolvedPath;
			edits: EditItem[];
			snapshot: FileSnapshot;
			applied: AppliedEdits;
	  }
	| { type: "delete"; i: number; q: FileQuery; target: ResolvedPath; stat: FileStat };

/** Errors that are about the path alone: the payload is worth keeping for a retry elsewhere. */
export function isPathOnly(e: KeelError): boolean {
	return e.retry === "retarget" || e.code === "NOT_READ" || e.code === "STALE_READ";
}

/** The line ranges of a query's lineRange edits. */
export function lineRanges(edits: EditItem[]): Array<{ startLine: number; endLine: number }> {
	return edits.flatMap((e) =>
		e.matchMode === "lineRange" && Number.isInteger(e.startLine) && Number.isInteger(e.endLine)
			? [{ startLine: e.startLine!, endLine: e.endLine! }]
			: [],
	);
}

/** lineRange edits address positions, not anchors: they need a read that is still fresh. */
export function requireFreshRead(
	host: ToolHost,
	canonical: string,
	snap: FileSnapshot,
	shown: string,
	edits: EditItem[] = [],
): void {
	const rec = host.readState.get(canonical);
	if (!rec) {
		throw new KeelError(
			"NOT_READ",
			`${shown} has not been read in this session; read it before a lineRange edit.`,
			{ path: shown },
		);
	}
	if (!sameIdentity(rec.stat, snap.stat) || rec.sha256 !== snap.sha256) {
		throw new KeelError(
			"STALE_READ",
			`${shown} changed since it was last read; redo the lineRange edit on its current lines, or read it again.${currentLines(snap.text.replace(/\r\n?/g, "\n"), lineRanges(edits))}`,
			{ path: shown },
		);
	}
}

async function planWrite(host: ToolHost, q: FileQuery, i: number, data: Buffer | undefined): Promise<Plan> {
	const target = await host.resolvePath(q.path, "write");
	if (target.canonical === target.root) throw pathFactShown("wants-a-file", target.canonical, q.path);
	const now = await statOrNull(host, target.canonical);
	if (now) requireFile(now, target.canonical);
	const expect = now ? overwriteExpectation(host, target.canonical, now, q.path) : "absent";
	if (data) await refuseWrittenPlaceholder(host, target.canonical, now, data.toString("utf8"), q.path);
	if (q.contentRef !== undefined) {
		const ref = host.contentRefs.get(q.contentRef);
		const st = await host.files.lstat(ref.canonical).catch(() => undefined);
		if (!st || !sameIdentity(st, ref.stat)) {
			throw new KeelError(
				"INVALID_ARGS",
				`contentRef ${q.contentRef} is stale: its source file changed; send the content instead.`,
				{
					path: q.path,
				},
			);
		}
		return { type: "write", i, q, target, ref, expect };
	}
	return { type: "write", i, q, target, data, expect };
}

async function planEdit(host: ToolHost, q: FileQuery, i: number, edits: EditItem[]): Promise<Plan> {
	const target = await host.resolvePath(q.path, "write");
	const exists = await statOrNull(host, target.canonical);
	if (!exists)
		throw new KeelError("NOT_FOUND", `${q.path} does not exist; check the path, or write it as a new file.`, {
			path: q.path,
		});
	const snapshot = await readSettled(() => snapshotText(host, target.canonical, q.path));
	if (edits.some((e) => e.matchMode === "lineRange"))
		requireFreshRead(host, target.canonical, snapshot, q.path, edits);
	const applied = applyEdits(snapshot.text, edits, q.path);
	return { type: "edit", i, q, target, edits, snapshot, applied };
}

async function planDelete(host: ToolHost, q: FileQuery, i: number): Promise<Plan> {
	const target = await host.resolveEntry(q.path, "write");
	let stat: FileStat;
	try {
		stat = await host.files.lstat(target.canonical);
	} catch (e) {
		throw shownAs(fromSystemError(e, target.canonical), q.path);
	}
	if (stat.type === "dir") throw pathFactShown("delete-wants-a-file", target.canonical, q.path);
	if (stat.type === "other") throw pathFactShown("not-a-file-or-link", target.canonical, q.path);
	return { type: "delete", i, q, target, stat };
}

/**
 * Plan one query. A path-only failure of a valid payload keeps the payload and names it in the
 * error, so the retry sends a corrected path and the ref.
 */
export async function planQuery(host: ToolHost, q: FileQuery, i: number): Promise<Plan> {
	let payload: { kind: "write" | "edit"; bytes: Buffer } | undefined;
	let ref = q.payloadRef;
	try {
		if (q.type === "delete") return await planDelete(host, q, i);
		if (q.type === "write") {
			if (q.content !== undefined && !isWellFormed(q.content)) {
				throw new KeelError(
					"INVALID_ARGS",
					"content has a broken character (a lone UTF-16 surrogate); send whole characters.",
					{ path: q.path },
				);
			}
			const data =
				q.content !== undefined
					? Buffer.from(q.content, "utf8")
					: ref
						? await host.payloads.get(ref, "write")
						: undefined;
			if (q.content !== undefined) payload = { kind: "write", bytes: data! };
			return await planWrite(host, q, i, data);
		}
		const edits: EditItem[] = q.edits ?? JSON.parse((await host.payloads.get(ref!, "edit")).toString("utf8"));
		if (q.edits) payload = { kind: "edit", bytes: Buffer.from(JSON.stringify(q.edits)) };
		return await planEdit(host, q, i, edits);
	} catch (e) {
		const err = e instanceof KeelError ? e : fromSystemError(e, q.path);
		// A stale hashline ref is in the payload itself: keeping it for a retry would not help.
		if (!isPathOnly(err) || err.details?.hashline) throw err;
		if (!ref && payload) ref = await host.payloads.put(payload.kind, payload.bytes);
		if (!ref) throw err;
		return Promise.reject(
			new KeelError(
				err.code,
				`${err.message} The ${payload?.kind ?? q.type} payload is kept: retry with payloadRef "${ref}" and the corrected path.`,
				{
					path: err.path,
					payloadRef: ref,
				},
			),
		);
	}
}

export function parentDir(p: Plan): string {
	return posix.dirname(p.target.canonical);
}
