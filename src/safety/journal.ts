/**
 * The intent journal of multi-file changes. Before the first file of a multi-file change is
 * committed, keel writes, durably, the previous bytes of every file it will replace or delete and
 * an intent record naming every file with its state before and after. The record is removed once
 * every file is committed (or the change was rolled back). A keel process killed in between leaves
 * the record; the next session that can reach its files finishes the job (safety/recovery.ts)
 * before it serves any call.
 *
 * Where: in the state directory (safety/state-dir.ts), outside every root:
 *   journal/<backend>-<workspace key>/<change id>/
 *     intent.json   { body, mac }: body is the record as JSON text, mac its HMAC-SHA256 under
 *                   the state directory's key, so a record planted by anything that cannot read
 *                   that key is refused
 *     <n>.before    the previous bytes of file n (files that existed); its sha256 is in the record
 * The record is bound to what it was written for: its purpose ("intent"), backend kind,
 * workspace, roots, the writer's pid and start time, and the directories the change writes into
 * (so their temp files can be swept after a kill). The change id is
 * `<time>-<pid>-<start time>-<random>`. Directories are 0700 and fsynced into their parents when
 * made; files are 0600 and fsynced. A change that could not be undone safely stays as
 * `unresolved-<id>/` with its previous bytes, and is named to the user.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { constants, mkdirSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { dirname, join } from "node:path";
import { ensurePrivateDir, type StateDir } from "./state-dir.js";
import { startTimeOf } from "./writer-alive.js";

export type JournalBefore =
	| { kind: "absent" }
	| { kind: "file"; sha256: string; mode: number; backup: string }
	/** A symlink that is deleted: keel's file operations cannot recreate one, only name it. */
	| { kind: "link"; target: string };

export type JournalAfter = { kind: "absent" } | { kind: "file"; sha256: string };

export interface JournalFile {
	path: string;
	before: JournalBefore;
	after: JournalAfter;
}

export interface Intent {
	version: 2;
	purpose: "intent";
	pid: number;
	/** The writer's start time (writer-alive.ts): a reused pid is not the writer. */
	pidStart: string;
	workspace: string;
	backend: string;
	/** The writer's read-write roots: the record may name files inside them only. */
	roots: string[];
	createdAt: string;
	files: JournalFile[];
	/** The directories the change writes into (where a killed writer may leave temp files). */
	dirs: string[];
}

export const INTENT = "intent.json";
export const UNRESOLVED_PREFIX = "unresolved-";
/** A backup's name: only this form is ever opened, so a record can never name a path. */
export const BACKUP_NAME = /^(0|[1-9][0-9]{0,5})\.before$/;
/** A change id as begin() makes it (optionally claimed by a recovering session). */
export const CHANGE_ID =
	/^([0-9a-z]{1,12})-([1-9][0-9]{0,9})-([0-9]{0,20})-([0-9a-f]{8})(?:\.recovering-([1-9][0-9]{0,9})-([0-9]{0,20}))?$/;
/** The largest intent file read back (a record names paths and hashes, never bytes). */
export const MAX_INTENT_BYTES = 16 * 1024 * 1024;

async function fsyncPath(path: string, flags = constants.O_RDONLY): Promise<void> {
	const h = await fsp.open(path, flags);
	try {
		await h.sync();
	} finally {
		await h.close();
	}
}

export const fsyncDirPath = (path: string) => fsyncPath(path, constants.O_RDONLY | constants.O_DIRECTORY);

async function writeDurable(path: string, data: Uint8Array): Promise<void> {
	const h = await fsp.open(
		path,
		constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
		0o600,
	);
	try {
		await h.writeFile(data);
		await h.sync();
	} finally {
		await h.close();
	}
}

/** The MAC of a record's text under `key`. */
export function recordMac(key: Buffer, body: string): string {
	return createHmac("sha256", key).update("keel intent record\0").update(body).digest("hex");
}

/** The record's text as stored: the body and its MAC. */
export function sealRecord(key: Buffer, intent: Intent): string {
	const body = JSON.stringify(intent);
	return JSON.stringify({ body, mac: recordMac(key, body) });
}

/** The body of a stored record when its MAC is right under `key`, else undefined. */
export function openRecord(key: Buffer, text: string): unknown {
	let outer: unknown;
	try {
		outer = JSON.parse(text);
	} catch {
		return undefined;
	}
	const { body, mac } = (outer ?? {}) as { body?: unknown; mac?: unknown };
	if (typeof body !== "string" || typeof mac !== "string" || !/^[0-9a-f]{64}$/.test(mac)) return undefined;
	if (!timingSafeEqual(Buffer.from(recordMac(key, body), "hex"), Buffer.from(mac, "hex"))) return undefined;
	try {
		return JSON.parse(body);
	} catch {
		return undefined;
	}
}

/** The journal directory name of one backend kind and workspace. */
export function journalKey(backend: string, workspace: string): string {
	const kind = backend.replace(/[^a-z0-9]/gi, "_").slice(0, 32);
	return `${kind}-${createHash("sha256").update(`${backend}\0${workspace}`).digest("hex").slice(0, 24)}`;
}

/** One workspace's journal. */
/** How often begin() makes the workspace's journal directory again when it vanished under it. */
const MAKE_ATTEMPTS = 50;

export class Journal {
	readonly dir: string;
	/** Every workspace's journal directories are in here (recovery reads them all). */
	readonly top: string;

	constructor(
		readonly state: StateDir,
		readonly backend: string,
		readonly workspace: string,
		readonly roots: readonly string[],
	) {
		this.top = join(state.dir, "journal");
		this.dir = join(this.top, journalKey(backend, workspace));
	}

	/** The journal's directories, made (and checked) now: one set aside as hostile is made again. */
	private prepare(): Buffer {
		const key = this.state.recordKey();
		for (const d of [this.top, this.dir]) {
			const note = ensurePrivateDir(d);
			if (note) this.state.note(`keel: ${note}`);
		}
		return key;
	}

	/** Write the previous bytes and the intent durably; returns the open change. */
	async begin(files: Array<JournalFile & { bytes?: Uint8Array }>): Promise<OpenIntent> {
		const key = this.prepare();
		const pidStart = startTimeOf(process.pid);
		const id = `${Date.now().toString(36)}-${process.pid}-${pidStart}-${randomBytes(4).toString("hex")}`;
		const txDir = join(this.dir, id);
		this.makeChangeDir(txDir);
		try {
			const record: JournalFile[] = [];
			for (const [n, f] of files.entries()) {
				if (f.before.kind === "file") {
					const backup = `${n}.before`;
					await writeDurable(join(txDir, backup), f.bytes ?? new Uint8Array());
					record.push({ path: f.path, before: { ...f.before, backup }, after: f.after });
				} else record.push({ path: f.path, before: f.before, after: f.after });
			}
			const intent: Intent = {
				version: 2,
				purpose: "intent",
				pid: process.pid,
				pidStart,
				workspace: this.workspace,
				backend: this.backend,
				roots: [...this.roots],
				createdAt: new Date().toISOString(),
				files: record,
				dirs: [...new Set(record.map((f) => dirname(f.path)))],
			};
			// Written under a temp name and renamed: an intent file is either whole or absent.
			const temp = join(txDir, `${INTENT}.tmp`);
			await writeDurable(temp, Buffer.from(sealRecord(key, intent)));
			await fsp.rename(temp, join(txDir, INTENT));
			// The record's entry, and the change directory's entry in the journal, reach the disk
			// before the first file of the change is touched.
			await fsyncDirPath(txDir);
			await fsyncDirPath(this.dir);
		} catch (e) {
			await fsp.rm(txDir, { recursive: true, force: true }).catch(() => {});
			throw e;
		}
		return new OpenIntent(txDir, this.dir);
	}

	/**
	 * The change's directory: the workspace's journal directory is removed when its last change
	 * ends (OpenIntent.end, recovery), possibly by another session between prepare() and here, so
	 * a vanished parent is made again. Synchronous, so the window between making the parent and
	 * the child is a few system calls, not a trip through the thread pool; a rival removing the
	 * parent in a tight loop still loses within a handful of attempts.
	 */
	private makeChangeDir(txDir: string): void {
		for (let attempt = 1; ; attempt++) {
			try {
				mkdirSync(txDir, { mode: 0o700 });
				return;
			} catch (e) {
				if ((e as NodeJS.ErrnoException).code !== "ENOENT" || attempt === MAKE_ATTEMPTS) throw e;
				this.prepare();
			}
		}
	}
}

/**
 * Remove a workspace's journal directory when it holds nothing: every session start reads every
 * workspace's directory (recovery), so empty ones left behind would make each start slower.
 * rmdir removes only an empty directory; a change begun meanwhile keeps it (or makes it again).
 */
export async function removeIfEmpty(journalDir: string): Promise<void> {
	await fsp.rmdir(journalDir).catch(() => {});
}

/** A change in progress: ended (removed) once done, or kept as unresolved with its bytes. */
export class OpenIntent {
	constructor(
		readonly txDir: string,
		private readonly journalDir: string,
	) {}

	backupPath(n: number): string {
		return join(this.txDir, `${n}.before`);
	}

	/**
	 * The change is complete (every file committed, or every file restored): forget it. The
	 * intent's removal is made durable before anything else: a record that came back after a
	 * power loss would otherwise be replayed over later changes to the same files. Returns false
	 * when the record could not be removed (it is then marked done, if even that is possible).
	 */
	async end(): Promise<boolean> {
		try {
			await fsp.rm(join(this.txDir, INTENT), { force: true });
			await fsyncDirPath(this.txDir);
		} catch {
			return false;
		}
		// Without its intent what is left is an orphan the next session removes.
		await fsp.rm(this.txDir, { recursive: true, force: true }).catch(() => {});
		await removeIfEmpty(this.journalDir);
		return true;
	}

	/** Keep the previous bytes for the user; returns the directory they are in. */
	async keepUnresolved(): Promise<string> {
		const name = this.txDir.slice(this.journalDir.length + 1);
		const kept = join(this.journalDir, `${UNRESOLVED_PREFIX}${name}`);
		await fsp.rename(this.txDir, kept);
		await fsyncDirPath(this.journalDir).catch(() => {});
		return kept;
	}
}
