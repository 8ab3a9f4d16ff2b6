/**
 * One recorded file against what is on disk now: its current state, whether that is the record's
 * after or before state, and putting its before state back (compare-and-swap against the bytes
 * found, a backup restored only when its sha256 is the recorded one). Apart from recovery, which
 * walks the journal and decides a record's outcome, because this is the part that writes files.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { FileOps, FileStat } from "../backend/types.js";
import type { JournalFile } from "./journal.js";
import { Hostile, readPrivate } from "./journal-input.js";

export type State = { kind: "absent" } | { kind: "file"; stat: FileStat; sha256: string } | { kind: "other" };

/** What is at `path` now, as a record compares it. */
export async function stateOf(fs: FileOps, path: string): Promise<State> {
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

/** Whether `s` is the state the record left the file in. */
export function isAfter(f: JournalFile, s: State): boolean {
	return f.after.kind === "absent" ? s.kind === "absent" : s.kind === "file" && s.sha256 === f.after.sha256;
}

/** Whether `s` is the state the file had before the record's change. */
export async function isBefore(f: JournalFile, s: State, fs: FileOps): Promise<boolean> {
	if (f.before.kind === "absent") return s.kind === "absent";
	if (f.before.kind === "file") return s.kind === "file" && s.sha256 === f.before.sha256;
	const target = f.before.target;
	return fs.readlink(f.path).then(
		(t) => t === target,
		() => false,
	);
}

/** Puts the file back to its before state (compare-and-swap against `s`); why not, when it cannot. */
export async function rollBack(
	fs: FileOps,
	dir: string,
	f: JournalFile,
	s: State,
): Promise<string | undefined> {
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
