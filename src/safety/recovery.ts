import * as fsp from "node:fs/promises";
import { join } from "node:path";
import type { FileOps } from "../backend/types.js";
import { isWithin } from "./canonical-paths.js";
import {
	CHANGE_ID,
	fsyncDirPath,
	INTENT,
	type Intent,
	type Journal,
	journalKey,
	MAX_INTENT_BYTES,
	openRecord,
	removeIfEmpty,
	UNRESOLVED_PREFIX,
} from "./journal.js";
import { checkIntent, Hostile, privateDir, readPrivate } from "./journal-input.js";
import type { PathGuard } from "./path-guard.js";
import { isAfter, isBefore, rollBack, stateOf } from "./roll-back.js";
import { QUARANTINE_PREFIX, quarantine } from "./state-dir.js";
import { startTimeOf, writerAlive } from "./writer-alive.js";

/** A multi-file change a killed keel process left, as session start finished it (rolled back or forward), or a journal entry set aside. */
export interface RecoveryReport {
	/** The journal entry the report is about (where it is kept when unresolved or set aside). */
	record: string;
	/**
	 * completed / rolled-back / unresolved: a record was finished; set-aside: an entry that is not
	 * a valid record of this user was moved out of the way; left: a valid record this session
	 * cannot finish (some of its files are outside this session's roots or protected).
	 */
	outcome: "completed" | "rolled-back" | "unresolved" | "set-aside" | "left";
	restored: string[];
	unresolved: Array<{ path: string; state: string }>;
	/** What was done, in one line. */
	line: string;
}

/** Where the session's guard lets recovery act on `path`: yes, or why not. */
async function reach(guard: PathGuard, path: string): Promise<"yes" | "outside" | string> {
	try {
		const r = await guard.resolveEntry(path, "write");
		return r.canonical === path ? "yes" : `it now leads elsewhere (${r.canonical})`;
	} catch (e) {
		const code = (e as { code?: string }).code;
		if (code === "PATH_OUTSIDE_ROOTS" || code === "PATH_READ_ONLY") return "outside";
		return code === "PATH_PROTECTED" ? "it is a protected path" : `the guard refused it (${code ?? "error"})`;
	}
}

function describe(r: RecoveryReport): string {
	const left = r.unresolved.map((u) => `${u.path} (${u.state})`).join("; ");
	return `keel: recovered an interrupted multi-file change: ${r.outcome}${r.restored.length ? `, restored ${r.restored.join(", ")}` : ""}${left ? `; not restored: ${left}; previous bytes kept in ${r.record}` : ""}`;
}

interface Scan {
	fs: FileOps;
	guard: PathGuard;
	journal: Journal;
	key: Buffer;
	reports: RecoveryReport[];
}

function setAside(scan: Scan, entry: string, why: string): void {
	try {
		const kept = quarantine(entry);
		scan.reports.push({
			record: kept,
			outcome: "set-aside",
			restored: [],
			unresolved: [],
			line: `keel: set aside a journal entry that is not a valid record of this user (${why}): ${kept}`,
		});
	} catch {
		// Could not even be moved: it is skipped, and the session goes on.
	}
}

async function recoverEntry(scan: Scan, keyDir: string, name: string): Promise<void> {
	const entry = join(keyDir, name);
	const id = CHANGE_ID.exec(name);
	if (!id) return setAside(scan, entry, "an unknown name");
	// A claimer that is still running is recovering it; a writer that is still running is writing it.
	if (id[5] ? writerAlive(Number(id[5]), id[6]) : writerAlive(Number(id[2]), id[3])) return;
	const notDir = await privateDir(entry);
	if (notDir) return setAside(scan, entry, notDir);
	let intent: Intent | undefined;
	try {
		const text = (await readPrivate(join(entry, INTENT), MAX_INTENT_BYTES)).toString("utf8");
		const body = openRecord(scan.key, text);
		if (body === undefined) throw new Hostile("its MAC does not match this user's key");
		intent = checkIntent(body, scan.journal.backend);
	} catch (e) {
		if (e instanceof Hostile) return setAside(scan, entry, e.message);
		if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
	}
	if (intent && (intent.pid !== Number(id[2]) || intent.pidStart !== id[3]))
		return setAside(scan, entry, "its name and record name different writers");
	if (intent) {
		const where = await Promise.all(intent.files.map((f) => reach(scan.guard, f.path)));
		if (where.every((w) => w === "outside")) return; // another workspace's change, out of this session's sight
		const blocked = intent.files.map((f, i) => [f.path, where[i]]).filter(([, w]) => w !== "yes");
		if (blocked.length > 0) {
			scan.reports.push({
				record: entry,
				outcome: "left",
				restored: [],
				unresolved: blocked.map(([path, w]) => ({
					path,
					state: w === "outside" ? "outside this session's roots" : w,
				})),
				line: `keel: an interrupted multi-file change in ${intent.workspace} touches files this session cannot reach (${blocked.map(([p]) => p).join(", ")}); it is left for a session on ${intent.workspace}: ${entry}`,
			});
			return;
		}
	}
	const base = name.replace(/\.recovering-.*$/, "");
	const claimed = join(keyDir, `${base}.recovering-${process.pid}-${startTimeOf(process.pid)}`);
	try {
		await fsp.rename(entry, claimed);
	} catch {
		return; // another session claimed it first
	}
	if (!intent) {
		// No intent: the writer died before its first commit. Nothing was changed.
		await fsp.rm(claimed, { recursive: true, force: true });
		return;
	}
	const report = await finish(scan.fs, claimed, intent);
	if (report.outcome === "unresolved") {
		report.record = join(keyDir, `${UNRESOLVED_PREFIX}${base}`);
		await fsp.rename(claimed, report.record);
	} else await fsp.rm(claimed, { recursive: true, force: true });
	await fsyncDirPath(keyDir).catch(() => {});
	for (const d of intent.dirs) if (scan.guard.roots.some((r) => isWithin(r, d))) await scan.fs.sweepTemps(d);
	report.line = describe(report);
	scan.reports.push(report);
}

async function finish(fs: FileOps, dir: string, intent: Intent): Promise<RecoveryReport> {
	const states = await Promise.all(intent.files.map((f) => stateOf(fs, f.path)));
	const report: RecoveryReport = {
		record: dir,
		outcome: "completed",
		restored: [],
		unresolved: [],
		line: "",
	};
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
	if (report.unresolved.length > 0) report.outcome = "unresolved";
	return report;
}

/**
 * Finish every multi-file change a dead keel process left that concerns a file this session can
 * reach (its own workspace's, and those of a parent or child root), and set aside whatever in the
 * journal is not a valid record. Never throws: what cannot be read is named and skipped.
 */
export async function recoverJournal(
	fs: FileOps,
	guard: PathGuard,
	journal: Journal,
): Promise<RecoveryReport[]> {
	let keys: string[];
	try {
		keys = await fsp.readdir(journal.top);
	} catch {
		return [];
	}
	const reports: RecoveryReport[] = [];
	let key: Buffer;
	try {
		key = journal.state.recordKey();
		const notDir = await privateDir(journal.top);
		if (notDir) throw new Error(`${journal.top} is ${notDir}`);
	} catch (e) {
		return [
			{
				record: journal.top,
				outcome: "left",
				restored: [],
				unresolved: [],
				line: `keel: the journal in ${journal.top} was not read: ${(e as Error).message}`,
			},
		];
	}
	const scan: Scan = { fs, guard, journal, key, reports };
	const ours = `${journalKey(journal.backend, "").split("-")[0]}-`;
	for (const k of keys) {
		if (k.startsWith(QUARANTINE_PREFIX)) continue;
		const keyDir = join(journal.top, k);
		// Another backend kind's records are that kind's sessions' to finish.
		if (/^[a-z0-9_]+-[0-9a-f]{24}$/i.test(k) && !k.startsWith(ours)) continue;
		try {
			const notDir = await privateDir(keyDir);
			if (notDir) {
				setAside(scan, keyDir, notDir);
				continue;
			}
			for (const name of await fsp.readdir(keyDir)) {
				if (name.startsWith(UNRESOLVED_PREFIX) || name.startsWith(QUARANTINE_PREFIX)) continue;
				try {
					await recoverEntry(scan, keyDir, name);
				} catch (e) {
					reports.push({
						record: join(keyDir, name),
						outcome: "left",
						restored: [],
						unresolved: [],
						line: `keel: an interrupted change in ${join(keyDir, name)} could not be finished (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
					});
				}
			}
			await removeIfEmpty(keyDir);
		} catch {
			// A directory that vanished meanwhile: nothing to do.
		}
	}
	return reports;
}
