/**
 * The intent journal of multi-file changes (REQUIREMENTS M11). Before the first file of a
 * multi-file change is committed, keel writes, durably, the previous bytes of every file it will
 * replace or delete and an intent record naming every file with its state before and after. The
 * record is removed once every file is committed (or the change was rolled back). A keel process
 * killed in between leaves the record; the next session on the same workspace finds it and
 * finishes the job (safety/recovery.ts) before it serves any call.
 *
 * Where: on this machine, under the user's state directory
 *   ${XDG_STATE_HOME:-~/.local/state}/keel/journal/<workspace key>/<change id>/
 *     intent.json   { version, pid, workspace, backend, createdAt, files: [...] }
 *     <n>.before    the previous bytes of file n (files that existed)
 * The workspace key is a hash of the backend kind and the canonical workspace path, so sessions
 * on the same workspace share it and nothing is written into the workspace itself. Directories
 * are 0700, files 0600. A change that could not be undone safely stays as `unresolved-<id>/` with
 * its previous bytes, and is named to the user.
 */
import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

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
	version: 1;
	pid: number;
	workspace: string;
	backend: string;
	createdAt: string;
	files: JournalFile[];
}

export const INTENT = "intent.json";
export const UNRESOLVED_PREFIX = "unresolved-";

/** The user's state directory for keel (XDG_STATE_HOME, else ~/.local/state), plus /keel. */
export function defaultStateDir(): string {
	const base = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
	return join(base, "keel");
}

async function fsyncPath(path: string, flags = constants.O_RDONLY): Promise<void> {
	const h = await fsp.open(path, flags);
	try {
		await h.sync();
	} finally {
		await h.close();
	}
}

async function writeDurable(path: string, data: Uint8Array): Promise<void> {
	const h = await fsp.open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
	try {
		await h.writeFile(data);
		await h.sync();
	} finally {
		await h.close();
	}
}

/** One workspace's journal directory. */
export class Journal {
	readonly dir: string;
	private ready: Promise<void> | undefined;

	constructor(
		stateDir: string,
		readonly backend: string,
		readonly workspace: string,
	) {
		const key = createHash("sha256").update(`${backend}\0${workspace}`).digest("hex").slice(0, 24);
		this.dir = join(stateDir, "journal", key);
	}

	/** Write the previous bytes and the intent durably; returns the open change. */
	async begin(files: Array<JournalFile & { bytes?: Uint8Array }>): Promise<OpenIntent> {
		this.ready ??= fsp.mkdir(this.dir, { recursive: true, mode: 0o700 }).then(() => undefined);
		await this.ready;
		const id = `${Date.now().toString(36)}-${process.pid}-${randomBytes(4).toString("hex")}`;
		const txDir = join(this.dir, id);
		await fsp.mkdir(txDir, { mode: 0o700 });
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
				version: 1,
				pid: process.pid,
				workspace: this.workspace,
				backend: this.backend,
				createdAt: new Date().toISOString(),
				files: record,
			};
			// Written under a temp name and renamed: an intent file is either whole or absent.
			const temp = join(txDir, `${INTENT}.tmp`);
			await writeDurable(temp, Buffer.from(JSON.stringify(intent)));
			await fsp.rename(temp, join(txDir, INTENT));
			await fsyncPath(txDir, constants.O_RDONLY | constants.O_DIRECTORY);
			await fsyncPath(this.dir, constants.O_RDONLY | constants.O_DIRECTORY);
		} catch (e) {
			await fsp.rm(txDir, { recursive: true, force: true });
			throw e;
		}
		return new OpenIntent(txDir, this.dir);
	}
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

	/** The change is complete (every file committed, or every file restored): forget it. */
	async end(): Promise<void> {
		// The intent goes first: without it, what is left is an orphan the next session removes.
		await fsp.rm(join(this.txDir, INTENT), { force: true });
		await fsp.rm(this.txDir, { recursive: true, force: true });
	}

	/** Keep the previous bytes for the user; returns the directory they are in. */
	async keepUnresolved(): Promise<string> {
		const name = this.txDir.slice(this.journalDir.length + 1);
		const kept = join(this.journalDir, `${UNRESOLVED_PREFIX}${name}`);
		await fsp.rename(this.txDir, kept);
		return kept;
	}
}
