/**
 * What a restore to a checkpoint would do, before it does anything: for each path changed after
 * the checkpoint, its state then and now, and either the step that puts it back or the reason it
 * cannot be put back (a conflict). A path last changed outside keel's calls, a file whose bytes
 * were not kept or no longer hash to their name, a directory that is a file now (or the reverse),
 * and a path the guard refuses are conflicts: a restore never overwrites what it did not record.
 */
import { KeelError } from "../boundary/errors.js";
import type { CheckpointHost } from "./checkpoints.js";
import type { PlannedPath, RestoreProblem } from "./restore.js";
import type { TreeSource } from "./source.js";
import { type Checkpoint, describeState, type PathState, sameState } from "./types.js";

/** One path's state at a checkpoint, now, and the first outside checkpoint that changed it. */
export interface PathSince {
	was: PathState;
	now: PathState;
	outside: number | undefined;
}

/** For each path changed after checkpoint `id`: its state then, its state now, and who changed it. */
export function changesSince(kept: readonly Checkpoint[], id: number): Map<string, PathSince> {
	const paths = new Map<string, PathSince>();
	for (const cp of kept) {
		if (cp.id <= id) continue;
		for (const c of cp.changes) {
			const seen = paths.get(c.path) ?? { was: c.before, now: c.after, outside: undefined };
			seen.now = c.after;
			if (cp.tool === "outside" && seen.outside === undefined) seen.outside = cp.id;
			paths.set(c.path, seen);
		}
	}
	return paths;
}

/** The steps of a restore of `changes`, and the paths that cannot be put back. */
export async function planRestore(
	host: CheckpointHost,
	source: TreeSource,
	changes: ReadonlyMap<string, PathSince>,
): Promise<{ plan: PlannedPath[]; conflicts: RestoreProblem[] }> {
	const plan: PlannedPath[] = [];
	const conflicts: RestoreProblem[] = [];
	for (const [path, s] of changes) {
		if (sameState(s.was, s.now)) continue;
		const problem = await blocker(host, source, path, s);
		if (problem) {
			conflicts.push({ path, problem });
			continue;
		}
		const bytes = s.was.kind === "file" ? ((await source.blob(s.was.sha256!)) ?? undefined) : undefined;
		plan.push({ path, now: s.now, target: s.was, bytes });
	}
	return { plan, conflicts };
}

/** Why `path` cannot be put back, if it cannot. */
async function blocker(
	host: CheckpointHost,
	source: TreeSource,
	path: string,
	s: PathSince,
): Promise<string | undefined> {
	if (s.outside !== undefined)
		return `changed outside keel's calls (checkpoint ${s.outside}); it is now ${describeState(s.now)}`;
	const t = s.was;
	if (t.kind === "other") return "was a FIFO, socket or device, which a restore does not make";
	if (t.kind === "file" && !t.sha256)
		return "its bytes were past the budget when it was seen (kept by identity only)";
	if (t.kind === "file" && !(await source.blob(t.sha256!))) return "its kept bytes are missing or damaged";
	if ((t.kind === "dir") !== (s.now.kind === "dir") && s.now.kind !== "absent" && t.kind !== "absent")
		return `it is now ${describeState(s.now)} and was ${describeState(t)}: restore it by hand`;
	try {
		await host.resolvePath(path, "write");
	} catch (e) {
		return e instanceof KeelError ? `${e.code}: ${e.message}` : String(e);
	}
	return undefined;
}
