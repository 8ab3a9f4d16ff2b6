/**
 * Crash recovery of multi-file changes (REQUIREMENTS M11), run by Session.create before the
 * session serves anything. For each intent left in the workspace's journal by a keel process that
 * is gone (safety/journal.ts):
 *   every file in its after state   → the change had completed: the record is removed;
 *   otherwise                       → each file in its after state is put back to its before
 *                                     state (compare-and-swap against the after bytes); files in
 *                                     their before state are left alone.
 * A file in neither state was changed by someone else: it is left as it is, and the record is
 * kept as unresolved-<id>/ with the previous bytes, named in the session's recovery report.
 * An intent is claimed by renaming its directory, so two sessions never recover the same one.
 */
import * as fsp from "node:fs/promises";
import { join } from "node:path";
import type { FileOps, FileStat } from "../backend/types.js";
import { INTENT, type Intent, type Journal, type JournalFile, UNRESOLVED_PREFIX } from "./journal.js";

export interface RecoveryReport {
	/** The journal directory the record was in (kept there when unresolved). */
	record: string;
	outcome: "completed" | "rolled-back" | "unresolved";
	restored: string[];
	unresolved: Array<{ path: string; state: string }>;
}

const CLAIMED = ".recovering-";

function alive(pid: number): boolean {
	if (!Number.isInteger(pid) || pid <= 0) return false;
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		return (e as NodeJS.ErrnoException).code === "EPERM";
	}
}

type State = { kind: "absent" } | { kind: "file"; stat: FileStat; sha256: string } | { kind: "other" };

async function stateOf(fs: FileOps, path: string): Promise<State> {
	let st: FileStat;
	try {
		st = await fs.lstat(path);
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "ENOENT") return { kind: "absent" };
		throw e;
	}
	if (st.type !== "file") return st.type === "symlink" ? { kind: "other" } : { kind: "other" };
	return { kind: "file", stat: st, sha256: await fs.hashFile(path) };
}

function isAfter(f: JournalFile, s: State): boolean {
	return f.after.kind === "absent" ? s.kind === "absent" : s.kind === "file" && s.sha256 === f.after.sha256;
}

function isBefore(f: JournalFile, s: State, fs: FileOps): Promise<boolean> | boolean {
	if (f.before.kind === "absent") return s.kind === "absent";
	if (f.before.kind === "file") return s.kind === "file" && s.sha256 === f.before.sha256;
	const target = f.before.target;
	return fs.readlink(f.path).then(
		(t) => t === target,
		() => false,
	);
}

async function rollBack(fs: FileOps, dir: string, f: JournalFile, s: State): Promise<string | undefined> {
	const b = f.before;
	try {
		if (b.kind === "link")
			return `a symlink to ${JSON.stringify(b.target)} that was deleted; keel cannot recreate it`;
		if (b.kind === "absent") {
			if (s.kind === "file") await fs.unlink(f.path, s.stat);
			return undefined;
		}
		const bytes = await fsp.readFile(join(dir, b.backup));
		if (s.kind === "absent")
			await fs.writeFile(f.path, bytes, { expect: "absent", mode: b.mode, mkdirs: true });
		else if (s.kind === "file")
			await fs.writeFile(f.path, bytes, { expect: { stat: s.stat, sha256: s.sha256 } });
		return undefined;
	} catch (e) {
		return `could not be restored (${(e as NodeJS.ErrnoException).code ?? (e as Error).name})`;
	}
}

async function recoverOne(fs: FileOps, journalDir: string, dir: string): Promise<RecoveryReport | undefined> {
	let intent: Intent;
	try {
		intent = JSON.parse(await fsp.readFile(join(dir, INTENT), "utf8")) as Intent;
	} catch {
		// No intent: the writer died before its first commit. Nothing was changed.
		await fsp.rm(dir, { recursive: true, force: true });
		return undefined;
	}
	const states = await Promise.all(intent.files.map((f) => stateOf(fs, f.path)));
	const report: RecoveryReport = { record: dir, outcome: "completed", restored: [], unresolved: [] };
	if (!intent.files.every((f, i) => isAfter(f, states[i]))) {
		report.outcome = "rolled-back";
		// Reverse commit order, as the in-process rollback does.
		for (let i = intent.files.length - 1; i >= 0; i--) {
			const f = intent.files[i];
			if (await isBefore(f, states[i], fs)) continue;
			const problem = isAfter(f, states[i])
				? await rollBack(fs, dir, f, states[i])
				: "changed by someone else since; left as it is";
			if (problem) report.unresolved.push({ path: f.path, state: problem });
			else report.restored.push(f.path);
		}
	}
	if (report.unresolved.length > 0) {
		report.outcome = "unresolved";
		const id = dir.slice(journalDir.length + 1).replace(/\.recovering-\d+$/, "");
		report.record = join(journalDir, `${UNRESOLVED_PREFIX}${id}`);
		await fsp.rename(dir, report.record);
	} else await fsp.rm(dir, { recursive: true, force: true });
	return report;
}

/** Finish every multi-file change a dead keel process left in this workspace's journal. */
export async function recoverJournal(fs: FileOps, journal: Journal): Promise<RecoveryReport[]> {
	let names: string[];
	try {
		names = await fsp.readdir(journal.dir);
	} catch {
		return [];
	}
	const reports: RecoveryReport[] = [];
	for (const name of names) {
		if (name.startsWith(UNRESOLVED_PREFIX)) continue;
		const claimedBy = name.includes(CLAIMED)
			? Number(name.slice(name.indexOf(CLAIMED) + CLAIMED.length))
			: undefined;
		// The id carries the writer's pid: a live writer's change is in progress, not abandoned.
		const writer = Number(name.split("-")[1]);
		if (claimedBy !== undefined ? alive(claimedBy) : alive(writer)) continue;
		const base = claimedBy !== undefined ? name.slice(0, name.indexOf(CLAIMED)) : name;
		const claimed = join(journal.dir, `${base}${CLAIMED}${process.pid}`);
		try {
			await fsp.rename(join(journal.dir, name), claimed);
		} catch {
			continue; // another session claimed it first
		}
		const report = await recoverOne(fs, journal.dir, claimed);
		if (report) reports.push(report);
	}
	return reports;
}
