/**
 * The temp-file sweep on this machine: only keel's own leftovers go. An entry is
 * removed only when its whole name has the exact form keel writes (temp-names.ts), it is a regular
 * file owned by this process's user, and the writer named in it is gone. Nothing else is touched,
 * and nothing found stops the sweep (or the session that runs it).
 */
import { lstatSync, unlinkSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { writerAlive } from "../../safety/writer-alive.js";
import { tempNamePid } from "../temp-names.js";
import type { PinnedDir } from "./pin.js";

/** A writer killed but not yet reaped (a zombie) is gone too. */
function processGone(pid: number): boolean {
	return !writerAlive(pid, "");
}

/** Remove dead writers' temp files from a pinned directory; returns how many were removed. */
export async function sweepDir(dir: PinnedDir): Promise<number> {
	const uid = process.geteuid?.();
	let names: string[];
	try {
		names = await fsp.readdir(dir.path);
	} catch {
		return 0;
	}
	let removed = 0;
	for (const name of names) {
		const pid = tempNamePid(name);
		if (pid === undefined || pid === process.pid || !processGone(pid)) continue;
		try {
			const st = lstatSync(dir.at(name), { throwIfNoEntry: false });
			if (!st?.isFile() || (uid !== undefined && st.uid !== uid)) continue;
			unlinkSync(dir.at(name)); // unlink(2) never removes a directory, whatever replaced the file
			removed++;
		} catch {
			// vanished or not ours to remove: leave it
		}
	}
	return removed;
}
