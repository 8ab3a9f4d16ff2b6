/**
 * Crash recovery of multi-file changes, run by Session.create before the session serves anything.
 * The journal (safety/journal.ts) is keel's own state read back, so every record is input to be
 * checked, never an instruction to follow:
 *   - only entries of the forms keel writes, real directories and files of this user (opened
 *     without following links, checked by descriptor), records whose MAC is right under the state
 *     directory's key, of this backend kind, naming only paths inside the record's own roots;
 *   - a record whose writer is still running (pid and start time; a zombie is not running) is a
 *     change in progress and left alone;
 *   - a record whose files this session cannot all reach through its path guard (roots, protected
 *     paths) is left for a session that can, and named when it touches this session's roots;
 *   - every file is acted on through the backend's pinned operations, after the guard resolved
 *     it to exactly the recorded path; a backup is read only by a name of the form `<n>.before`
 *     and put back only when its sha256 is the one recorded.
 * Anything else (unauthenticated, malformed, a link where a directory should be) is set aside
 * under a `quarantined-` name and named in one line; it never stops the session.
 *
 * For a record that passes:
 *   every file in its after state   → the change had completed: the record is removed;
 *   otherwise                       → each file in its after state is put back to its before
 *                                     state (compare-and-swap against the after bytes); files in
 *                                     their before state are left alone.
 * A file in neither state was changed by someone else: it is left as it is, and the record is
 * kept as unresolved-<id>/ with the previous bytes. Temp files a killed writer left in the
 * directories the record names are swept. A record is claimed by renaming its directory, so two
 * sessions never recover the same one.
 */
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { join, posix } from "node:path";
import type { FileOps, FileStat } from "../backend/types.js";
import {
	BACKUP_NAME,
	CHANGE_ID,
	fsyncDirPath,
	INTENT,
	type Intent,
	type Journal,
	type JournalFile,
	journalKey,
	MAX_INTENT_BYTES,
	openRecord,
	removeIfEmpty,
	UNRESOLVED_PREFIX,
} from "./journal.js";
import { isWithin, type PathGuard } from "./path-guard.js";
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

const uid = () => process.geteuid?.() ?? -1;

class Hostile extends Error {}

/** A file of the journal, read through a descriptor opened without following a link and checked. */
async function readPrivate(path: string, max: number): Promise<Buffer> {
	const h = await fsp.open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	try {
		const st = await h.stat();
		if (!st.isFile()) throw new Hostile(`${path} is not a regular file`);
		if (uid() >= 0 && st.uid !== uid()) throw new Hostile(`${path} is owned by uid ${st.uid}`);
		if (st.mode & 0o077) throw new Hostile(`${path} has mode ${(st.mode & 0o777).toString(8)}`);
		if (st.nlink !== 1) throw new Hostile(`${path} has ${st.nlink} links`);
		if (st.size > max) throw new Hostile(`${path} is too large`);
		return await h.readFile();
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "ELOOP") throw new Hostile(`${path} is a symbolic link`);
		throw e;
	} finally {
		await h.close();
	}
}

async function privateDir(path: string): Promise<string | undefined> {
	const st = await fsp.lstat(path);
	if (st.isSymbolicLink()) return "a symbolic link";
	if (!st.isDirectory()) return "not a directory";
	if (uid() >= 0 && st.uid !== uid()) return `owned by uid ${st.uid}`;
	if (st.mode & 0o077) return `open to others (mode ${(st.mode & 0o777).toString(8)})`;
	return undefined;
}

const HEX64 = /^[0-9a-f]{64}$/;
const isPath = (p: unknown): p is string =>
	typeof p === "string" &&
	p.startsWith("/") &&
	!p.includes("\0") &&
	posix.normalize(p) === p &&
	p.length < 8192;

/** The record's body checked field by field; throws Hostile naming what is wrong. */
function checkIntent(body: unknown, backend: string): Intent {
	const r = body as Partial<Intent> | undefined;
	if (r?.version !== 2 || r.purpose !== "intent") throw new Hostile("not an intent record of this version");
	if (r.backend !== backend) throw new Hostile(`written for the ${String(r.backend)} backend`);
	if (!Number.isSafeInteger(r.pid) || typeof r.pidStart !== "string" || !isPath(r.workspace))
		throw new Hostile("malformed writer or workspace");
	if (!Array.isArray(r.roots) || r.roots.length === 0 || !r.roots.every(isPath))
		throw new Hostile("malformed roots");
	if (!Array.isArray(r.dirs) || !r.dirs.every(isPath)) throw new Hostile("malformed directories");
	if (!Array.isArray(r.files) || r.files.length === 0) throw new Hostile("no files");
	const roots = r.roots;
	const inRoots = (p: string) => roots.some((root) => isWithin(root, p) && p !== root);
	for (const f of r.files as JournalFile[]) {
		if (!f || !isPath(f.path) || !inRoots(f.path)) throw new Hostile("names a file outside its roots");
		const b = f.before;
		const a = f.after;
		const beforeOk =
			b?.kind === "absent" ||
			(b?.kind === "link" && typeof b.target === "string") ||
			(b?.kind === "file" &&
				typeof b.sha256 === "string" &&
				HEX64.test(b.sha256) &&
				Number.isInteger(b.mode) &&
				b.mode >= 0 &&
				b.mode <= 0o7777 &&
				typeof b.backup === "string" &&
				BACKUP_NAME.test(b.backup));
		const afterOk =
			a?.kind === "absent" || (a?.kind === "file" && typeof a.sha256 === "string" && HEX64.test(a.sha256));
		if (!beforeOk || !afterOk) throw new Hostile(`malformed entry for ${f.path}`);
	}
	if (!r.dirs.every((d) => roots.some((root) => isWithin(root, d))))
		throw new Hostile("names a directory outside its roots");
	return r as Intent;
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
	if (st.type !== "file") return { kind: "other" };
	return { kind: "file", stat: st, sha256: await fs.hashFile(path) };
}

function isAfter(f: JournalFile, s: State): boolean {
	return f.after.kind === "absent" ? s.kind === "absent" : s.kind === "file" && s.sha256 === f.after.sha256;
}

async function isBefore(f: JournalFile, s: State, fs: FileOps): Promise<boolean> {
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
		// checkIntent let only `<n>.before` through: a name in the record's own directory.
		const bytes = await readPrivate(join(dir, b.backup), Number.MAX_SAFE_INTEGER);
		if (createHash("sha256").update(bytes).digest("hex") !== b.sha256)
			return "its previous bytes in the journal do not match the record; not restored";
		if (s.kind === "absent")
			await fs.writeFile(f.path, bytes, { expect: "absent", mode: b.mode & 0o777, mkdirs: true });
		else if (s.kind === "file")
			await fs.writeFile(f.path, bytes, { expect: { stat: s.stat, sha256: s.sha256 } });
		return undefined;
	} catch (e) {
		if (e instanceof Hostile)
			return `its previous bytes in the journal are not keel's (${e.message}); not restored`;
		return `could not be restored (${(e as NodeJS.ErrnoException).code ?? (e as Error).name})`;
	}
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
