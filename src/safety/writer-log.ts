/**
 * Where this process writes: a short log in the state directory, `writers/<pid>-<start time>`,
 * one canonical directory per line, appended the first time a session of this process is about
 * to commit a file into that directory (before the temp file is made there). A writer killed
 * mid-commit can leave a temp file in any such directory; the next session whose roots hold them
 * sweeps them (the sweep removes only keel's temp names of dead writers, local/sweep.ts), and
 * removes the log once every directory in it was within its reach or no longer exists (a directory
 * that is gone holds no temp files). Without that, every workspace ever written and since deleted
 * would keep its log, and each new session would read them all.
 *
 * The log is keel's state read back, so it is treated as input: it is read only when it is a
 * private regular file of this user, and a directory in it is only ever swept, never written,
 * and only when it lies inside the reading session's roots.
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { join } from "node:path";
import type { FileOps } from "../backend/types.js";
import { isWithin } from "./canonical-paths.js";
import { ensurePrivateDir, type StateDir } from "./state-dir.js";
import { startTimeOf, writerAlive } from "./writer-alive.js";

const LOG_NAME = /^([1-9][0-9]{0,9})-([0-9]{0,20})$/;
const MAX_LOG_BYTES = 1024 * 1024;

export class WriterLog {
	private readonly dir: string;
	private readonly file: string;
	private ready = false;

	constructor(private readonly state: StateDir) {
		this.dir = join(state.dir, "writers");
		this.file = join(this.dir, `${process.pid}-${startTimeOf(process.pid)}`);
	}

	/** Note that this process is about to write into `dir`. */
	async add(dir: string): Promise<void> {
		if (!this.ready) {
			this.state.recordKey(); // the state directory, made and checked
			const note = ensurePrivateDir(this.dir);
			if (note) this.state.note(`keel: ${note}`);
			this.ready = true;
		}
		const h = await fsp.open(
			this.file,
			constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW,
			0o600,
		);
		try {
			await h.write(`${JSON.stringify(dir)}\n`);
		} finally {
			await h.close();
		}
	}

	/** Sweep the directories dead writers logged inside `roots`; returns how many temp files went. */
	async sweepDead(fs: FileOps, roots: readonly string[]): Promise<number> {
		let names: string[];
		try {
			names = await fsp.readdir(this.dir);
		} catch {
			return 0;
		}
		let removed = 0;
		for (const name of names) {
			const m = LOG_NAME.exec(name);
			if (!m || writerAlive(Number(m[1]), m[2])) continue;
			const file = join(this.dir, name);
			try {
				const dirs = await readLog(file);
				let all = true;
				for (const d of dirs) {
					if (roots.some((r) => isWithin(r, d))) removed += await fs.sweepTemps(d);
					else if (!(await gone(d))) all = false;
				}
				if (all) await fsp.unlink(file);
			} catch {
				// Unreadable or not ours: skipped; nothing in it may stop a session.
			}
		}
		return removed;
	}
}

/** True when nothing is at `dir` any more (only asked of this machine's paths: lstat, never a read). */
async function gone(dir: string): Promise<boolean> {
	try {
		await fsp.lstat(dir);
		return false;
	} catch (e) {
		const code = (e as NodeJS.ErrnoException).code;
		return code === "ENOENT" || code === "ENOTDIR";
	}
}

async function readLog(file: string): Promise<string[]> {
	const h = await fsp.open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	try {
		const st = await h.stat();
		const uid = process.geteuid?.() ?? -1;
		if (!st.isFile() || (uid >= 0 && st.uid !== uid) || st.mode & 0o077 || st.size > MAX_LOG_BYTES)
			throw new Error("not keel's writer log");
		const dirs = new Set<string>();
		for (const line of (await h.readFile("utf8")).split("\n")) {
			try {
				const d = JSON.parse(line);
				if (typeof d === "string" && d.startsWith("/")) dirs.add(d);
			} catch {
				// a line cut by a kill
			}
		}
		return [...dirs];
	} finally {
		await h.close();
	}
}
