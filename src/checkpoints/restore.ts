/**
 * Putting paths back to a checkpoint's state. The caller has planned every path (its state now,
 * as the last scan saw it, and its state at the checkpoint) and found no conflict. Then:
 *   1. directories the checkpoint had are made (shallowest first, with their modes);
 *   2. every file's bytes are put back and every file or link the checkpoint did not have is
 *      removed, as ONE multi-file change (safety/transaction.ts): each a compare-and-swap against
 *      what the scan saw, journaled, all or nothing even across a crash;
 *   3. links are made, modes set, and directories the checkpoint did not have removed (deepest
 *      first, only when empty).
 * A link where the checkpoint had a file is removed just before step 2. Steps 1 and 3 are not
 * journaled: each is idempotent, and a failure there is reported per path with the file contents
 * already in place. The tree source does steps 1 and 3 (on this machine through descriptors opened
 * from the root with O_NOFOLLOW: restore-steps.ts).
 */
import type { FileStat } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { type Change, commitChanges, type TransactionHost, withPaths } from "../safety/transaction.js";
import type { TreeSource } from "./source.js";
import type { PathState } from "./types.js";

export interface PlannedPath {
	path: string;
	now: PathState;
	target: PathState;
	/** The target file's bytes (kind "file" only). */
	bytes?: Uint8Array;
}

export interface RestoreProblem {
	path: string;
	problem: string;
}

const depth = (p: string) => p.split("/").length;

export async function applyRestore(
	host: TransactionHost,
	source: TreeSource,
	plan: PlannedPath[],
): Promise<RestoreProblem[]> {
	const problems: RestoreProblem[] = [];
	const fs = host.files;
	const attempt = async (path: string, step: () => Promise<void>) => {
		try {
			await step();
		} catch (e) {
			problems.push({ path, problem: (e as NodeJS.ErrnoException).code ?? String(e) });
		}
	};
	// 1. Directories the checkpoint had.
	for (const p of plan
		.filter((x) => x.target.kind === "dir" && x.now.kind === "absent")
		.sort((a, b) => depth(a.path) - depth(b.path)))
		await attempt(p.path, () => source.makeDir(p.path, (p.target as { mode: number }).mode));

	// 2. File contents and removals of files and links, all or nothing.
	const changes: Change[] = [];
	for (const p of plan) {
		const wantsFile = p.target.kind === "file";
		const dropsEntry = p.target.kind !== "file" && (p.now.kind === "file" || p.now.kind === "link");
		if (!wantsFile && !dropsEntry) continue;
		if (wantsFile && p.now.kind === "file" && p.now.sha256 === (p.target as { sha256: string }).sha256)
			continue;
		const stat: FileStat | undefined = p.now.kind === "absent" ? undefined : await fs.lstat(p.path);
		let before: Change["before"] = { kind: "absent" };
		if (p.now.kind === "file") {
			// A file kept by identity only (past the budget) is hashed now: the swap compares bytes.
			const sha256 = p.now.sha256 ?? (await fs.hashFile(p.path));
			before = { kind: "file", stat: stat!, sha256, bytes: await fs.readFile(p.path, stat) };
		} else if (p.now.kind === "link" && wantsFile) {
			// A link where the checkpoint had a file: removed first (a commit replaces files, not
			// links), by compare-and-swap on the link itself.
			await fs.unlink(p.path, stat);
		} else if (p.now.kind === "link") before = { kind: "link", stat: stat!, target: p.now.target };
		const after: Change["after"] = wantsFile
			? { kind: "data", data: p.bytes ?? new Uint8Array(), mode: (p.target as { mode: number }).mode }
			: { kind: "absent" };
		changes.push({ canonical: p.path, shown: p.path, before, after });
	}
	if (changes.length > 0) {
		await withPaths(
			host,
			changes.map((c) => c.canonical),
			() => commitChanges(host, changes),
		);
	}
	for (const c of changes) host.readState.forget(c.canonical);

	// 3. Links, modes, and directories the checkpoint did not have.
	for (const p of plan) {
		if (p.target.kind === "link") {
			const target = p.target.target;
			await attempt(p.path, () => source.makeLink(p.path, target));
		}
	}
	for (const p of plan) {
		const t = p.target;
		if (t.kind !== "file" && t.kind !== "dir") continue;
		const modeNow = p.now.kind === t.kind ? (p.now as { mode: number }).mode : undefined;
		if (modeNow !== t.mode) await attempt(p.path, () => source.setMode(p.path, t.mode));
	}
	for (const p of plan
		.filter((x) => x.target.kind === "absent" && x.now.kind === "dir")
		.sort((a, b) => depth(b.path) - depth(a.path)))
		await attempt(p.path, () => source.removeDir(p.path));
	return problems;
}

/** The error a restore with conflicts gives when it was told to change nothing then. */
export function conflictError(conflicts: RestoreProblem[]): KeelError {
	const shown = conflicts.slice(0, 10).map((c) => `${c.path}: ${c.problem}`);
	return new KeelError(
		"RESTORE_CONFLICT",
		`Nothing was restored: ${conflicts.length} path(s) cannot be put back without losing a change keel did not make:\n${shown.join("\n")}${conflicts.length > 10 ? `\n(and ${conflicts.length - 10} more)` : ""}\nRestore a later checkpoint, or pass force to restore everything else and leave these as they are.`,
		{ details: { conflicts } },
	);
}
