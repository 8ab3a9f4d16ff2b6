/**
 * Spill files: where the full text of a truncated result goes. Each session has a
 * directory of its own, `$TMPDIR/keel-spill-<uid>-<pid>-<random>`, made by mkdtemp (a fresh name,
 * never a planted one, mode 0700) and checked with lstat: a real directory, owned by this user, mode
 * 0700. Only that session's guard has it as a root, so another session cannot read it.
 *
 * Spill directories of sessions that are gone are removed when a session starts: only entries of
 * $TMPDIR named by that format, with this user's uid in the name, that are real directories owned by
 * this user, whose writer pid is no longer running. A closed session's directory is removed when it
 * holds nothing; spilled files stay (the result named them) until their process is gone.
 *
 * A spill that fails (a full disk, a refused write) never fails the call: the sink keeps its bounded
 * tail and the result says the full output could not be kept (OutputSink.spillError).
 */

import { randomBytes } from "node:crypto";
import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { chmod, lstat, mkdir, mkdtemp, readdir, rm, rmdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeelError } from "./errors.js";

const uid = () => process.getuid?.() ?? -1;
const NAME = /^keel-spill-(\d+)-(\d+)-[A-Za-z0-9]{6}$/;

function isRunning(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		// EPERM: it runs, as someone else.
		return (e as NodeJS.ErrnoException).code === "EPERM";
	}
}

/** Removes spill directories whose writer process is gone (see the module comment for what qualifies). */
export async function sweepDeadSpillDirs(tmp = tmpdir()): Promise<string[]> {
	const removed: string[] = [];
	let names: string[];
	try {
		names = await readdir(tmp);
	} catch {
		return removed;
	}
	for (const name of names) {
		const m = NAME.exec(name);
		if (!m || Number(m[1]) !== uid() || Number(m[2]) === process.pid || isRunning(Number(m[2]))) continue;
		const path = join(tmp, name);
		try {
			const st = await lstat(path);
			if (!st.isDirectory() || st.uid !== uid()) continue;
			await rm(path, { recursive: true, force: true });
			removed.push(path);
		} catch {
			// Gone already, or not ours to remove.
		}
	}
	return removed;
}

async function verify(dir: string, exactMode: boolean): Promise<void> {
	const st = await lstat(dir);
	const why = st.isSymbolicLink()
		? "is a symbolic link"
		: !st.isDirectory()
			? "is not a directory"
			: uid() !== -1 && st.uid !== uid()
				? "is not owned by this user"
				: exactMode && (st.mode & 0o777) !== 0o700
					? `has mode ${(st.mode & 0o777).toString(8)}, not 700`
					: undefined;
	if (why) throw new KeelError("PERMISSION_DENIED", `The spill directory ${dir} ${why}; refusing to use it.`);
}

export class SpillDir {
	private constructor(
		readonly dir: string,
		private readonly owned: boolean,
	) {}

	/** This session's spill directory: `explicit` (the caller's), or a fresh one under the temp dir. */
	static async create(explicit?: string, tmp = tmpdir()): Promise<SpillDir> {
		if (explicit !== undefined) {
			await mkdir(explicit, { recursive: true, mode: 0o700 });
			await verify(explicit, false);
			await chmod(explicit, 0o700);
			return new SpillDir(explicit, false);
		}
		await sweepDeadSpillDirs(tmp);
		const dir = await mkdtemp(join(tmp, `keel-spill-${uid()}-${process.pid}-`));
		await verify(dir, true);
		return new SpillDir(dir, true);
	}

	/**
	 * A new spill file, opened for appending synchronously (keeps chunk order without a queue).
	 * Throws the system error (ENOSPC, EACCES, ENOENT...) when it cannot be made.
	 */
	open(prefix: string): SpillFile {
		const path = join(this.dir, `${prefix}-${Date.now()}-${randomBytes(4).toString("hex")}.log`);
		return new SpillFile(path, openSync(path, "wx", 0o600));
	}

	/** At session close: the directory goes if it holds nothing. */
	async close(): Promise<void> {
		if (this.owned) await rmdir(this.dir).catch(() => {});
	}
}

export class SpillFile {
	private fd: number | undefined;
	constructor(
		readonly path: string,
		fd: number,
	) {
		this.fd = fd;
	}

	/**
	 * Throws the system error when the write fails (a full disk); the partial file is removed then,
	 * so no path names an output that is not whole.
	 */
	write(chunk: Uint8Array): void {
		if (this.fd === undefined) return;
		let off = 0;
		try {
			while (off < chunk.length) off += writeSync(this.fd, chunk, off);
		} catch (e) {
			this.close();
			try {
				unlinkSync(this.path);
			} catch {
				// Already gone.
			}
			throw e;
		}
	}

	close(): void {
		if (this.fd === undefined) return;
		closeSync(this.fd);
		this.fd = undefined;
	}
}
