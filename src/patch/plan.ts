/**
 * A parsed patch turned into a planned change per file (safety/transaction.ts), with keel's rules:
 * every path through the guard; an update refuses a file that is not UTF-8 text, keeps its BOM
 * and line endings; an Add onto an existing file, or a Move onto an existing destination, that
 * this session has not read (or that changed since) is a collision carrying a payloadRef, never a
 * silent overwrite; a delete removes a file or symlink, never a directory (the file tool's rules).
 * Called inside the mutation queues of every path (patch/index.ts), so the bytes planned on are
 * the bytes committed against.
 */
import type { FileStat } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { pathFactShown, shownAs } from "../boundary/path-facts.js";
import { fromSystemError } from "../boundary/system-errors.js";
import { refusePlaceholder } from "../edit/placeholder.js";
import { overwriteExpectation, requireFile, snapshotText, statOrNull } from "../edit/snapshot.js";
import type { ResolvedPath } from "../safety/path-guard.js";
import { sha256 } from "../safety/read-state.js";
import { encodeText } from "../safety/text-encoding.js";
import type { Before, Change } from "../safety/transaction.js";
import type { ToolHost } from "../tool-host.js";
import { addedText, applyHunks } from "./apply.js";
import type { FileOp } from "./parse.js";

export interface ResolvedOp {
	op: FileOp;
	target: ResolvedPath;
	/** Update with Move to: the destination. */
	dest?: ResolvedPath;
}

export interface PlannedFile {
	op: FileOp;
	action: "added" | "deleted" | "updated" | "moved" | "unchanged";
	path: string;
	movedTo?: string;
	matched?: string[];
	/** LF-or-not text before and after, for the diff of an update. */
	beforeText?: string;
	afterText?: string;
	changes: Change[];
}

/** Resolve every path of the patch through the guard; the same file twice is refused. */
export async function resolveOps(host: ToolHost, ops: FileOp[]): Promise<ResolvedOp[]> {
	const out: ResolvedOp[] = [];
	const seen = new Map<string, string>();
	const claim = (canonical: string, shown: string) => {
		const prior = seen.get(canonical);
		if (prior !== undefined)
			throw new KeelError(
				"INVALID_ARGS",
				`apply_patch: ${shown} and ${prior} name the same file; put all its changes in one section.`,
				{ path: shown },
			);
		seen.set(canonical, shown);
	};
	for (const op of ops) {
		const target =
			op.kind === "delete"
				? await host.resolveEntry(op.path, "write")
				: await host.resolvePath(op.path, "write");
		if (target.canonical === target.root) throw pathFactShown("wants-a-file", target.canonical, op.path);
		claim(target.canonical, op.path);
		let dest: ResolvedPath | undefined;
		if (op.kind === "update" && op.moveTo !== undefined) {
			dest = await host.resolvePath(op.moveTo, "write");
			if (dest.canonical === dest.root) throw pathFactShown("wants-a-file", dest.canonical, op.moveTo);
			if (dest.canonical === target.canonical) dest = undefined;
			else claim(dest.canonical, op.moveTo);
		}
		out.push({ op, target, dest });
	}
	return out;
}

async function readBytes(host: ToolHost, canonical: string, stat: FileStat, shown: string): Promise<Buffer> {
	try {
		return await host.files.readFile(canonical, stat);
	} catch (e) {
		throw shownAs(fromSystemError(e, canonical), shown);
	}
}

/**
 * What an existing file that a new file would replace must be: read by this session and unchanged
 * since; otherwise a collision, and the new content is kept under a payloadRef.
 */
async function replaceable(
	host: ToolHost,
	canonical: string,
	shown: string,
	what: string,
	data: Buffer,
): Promise<Before> {
	const now = await statOrNull(host, canonical);
	if (!now) return { kind: "absent" };
	requireFile(now, canonical);
	try {
		const expect = overwriteExpectation(host, canonical, now, shown);
		const bytes = await readBytes(host, canonical, now, shown);
		if (sha256(bytes) !== expect.sha256)
			throw new KeelError("STALE_READ", `${shown} changed since it was last read.`, { path: shown });
		return { kind: "file", stat: now, sha256: expect.sha256, bytes };
	} catch (e) {
		const err = e as KeelError;
		if (err.code !== "NOT_READ" && err.code !== "STALE_READ") throw err;
		const ref = await host.payloads.put("write", data);
		const why =
			err.code === "NOT_READ" ? "has not been read in this session" : "changed since this session read it";
		throw new KeelError(
			"WRITE_COLLISION",
			`${shown} already exists and ${why}; ${what} would overwrite it. Read it first to replace it, use "*** Update File:" to change it, or choose another path.${ref ? ` The new content is kept: payloadRef "${ref}" (file tool write).` : ""} Nothing was changed.`,
			{ path: shown, payloadRef: ref },
		);
	}
}

/** Plan one file operation. Throws the KeelError that stops the whole patch. */
export async function planOp(host: ToolHost, r: ResolvedOp): Promise<PlannedFile> {
	const { op, target } = r;
	if (op.kind === "add") {
		const data = Buffer.from(addedText(op.lines), "utf8");
		const before = await replaceable(host, target.canonical, op.path, `"*** Add File: ${op.path}"`, data);
		const had = before.kind === "file" && before.bytes ? Buffer.from(before.bytes).toString("utf8") : "";
		refusePlaceholder(had, addedText(op.lines), `"*** Add File: ${op.path}"`, op.path);
		return {
			op,
			action: "added",
			path: op.path,
			changes: [{ canonical: target.canonical, shown: op.path, before, after: { kind: "data", data } }],
		};
	}
	if (op.kind === "delete") {
		let st: FileStat;
		try {
			st = await host.files.lstat(target.canonical);
		} catch (e) {
			throw shownAs(fromSystemError(e, target.canonical), op.path);
		}
		if (st.type === "dir")
			throw pathFactShown("delete-wants-a-file", target.canonical, op.path, {
				operation: '"*** Delete File:"',
			});
		if (st.type === "other") throw pathFactShown("not-a-file-or-link", target.canonical, op.path);
		let before: Before;
		if (st.type === "symlink")
			before = { kind: "link", stat: st, target: await host.files.readlink(target.canonical) };
		else {
			const bytes = await readBytes(host, target.canonical, st, op.path);
			before = { kind: "file", stat: st, sha256: sha256(bytes), bytes };
		}
		return {
			op,
			action: "deleted",
			path: op.path,
			changes: [{ canonical: target.canonical, shown: op.path, before, after: { kind: "absent" } }],
		};
	}
	for (const h of op.hunks) {
		const old = h.lines.filter((l) => l.kind !== "+").map((l) => l.text);
		const now = h.lines.filter((l) => l.kind !== "-").map((l) => l.text);
		refusePlaceholder(old.join("\n"), now.join("\n"), `the hunk at patch line ${h.at}`, op.path);
	}
	const snap = await snapshotText(host, target.canonical, op.path);
	const applied = applyHunks(snap.text, op.hunks, op.path);
	const data = encodeText(applied.text, snap, op.path);
	const before: Before = { kind: "file", stat: snap.stat, sha256: snap.sha256, bytes: snap.bytes };
	const base = {
		op,
		path: op.path,
		matched: applied.matched,
		beforeText: snap.text,
		afterText: applied.text,
	};
	if (!r.dest) {
		if (data.equals(snap.bytes)) return { ...base, action: "unchanged", changes: [] };
		return {
			...base,
			action: "updated",
			changes: [{ canonical: target.canonical, shown: op.path, before, after: { kind: "data", data } }],
		};
	}
	const moveTo = op.moveTo!;
	const destBefore = await replaceable(host, r.dest.canonical, moveTo, `"*** Move to: ${moveTo}"`, data);
	return {
		...base,
		action: "moved",
		movedTo: moveTo,
		changes: [
			{
				canonical: r.dest.canonical,
				shown: moveTo,
				before: destBefore,
				after: { kind: "data", data, mode: snap.stat.mode },
			},
			{ canonical: target.canonical, shown: op.path, before, after: { kind: "absent" } },
		],
	};
}
