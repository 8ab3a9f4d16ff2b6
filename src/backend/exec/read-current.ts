/**
 * The exec backend's FileOps.readCurrent (src/backend/remote/host/exec_read_current.sh): the file
 * as opened, in one transport call. The bytes come with the stat of the descriptor they were read
 * from, so another writer's replace between the tool's stat and this read is the newer file read,
 * not CHANGED_ON_DISK.
 *
 * The script tests the name, opens it, and after the open requires the name to be a regular file
 * (not a link) with the descriptor's device and inode: a link swapped in for the last component
 * is refused, never read through out of the root, and a replace landing between the open and
 * that check is CHANGED_ON_DISK. A FIFO renamed in between the test and the open holds the call
 * until a writer comes (sh cannot open without waiting; the by-name readFile had the same window).
 * python3 could open with O_NOFOLLOW | O_NONBLOCK, but its start-up cost a read in a podman
 * container 17 ms more (95 against 78 ms; this script 73 ms, bench/cases-container.mjs).
 *
 * Output: `st STAT\n` then the bytes, or `big STAT\n` alone when the file as opened is larger
 * than the bound. STAT is the target's stat(1) line (statFormat). Bounded, exactly the size at
 * the open is read; fewer bytes (a truncation meanwhile) are CHANGED_ON_DISK.
 */
import { pathFact } from "../../boundary/path-facts.js";
import { changedWhileRead } from "../changed-errors.js";

import type { FileStat } from "../types.js";
import { joined, perFormat } from "./scripts.js";

/** readCurrent PATH LIMIT (LIMIT empty: unbounded). */
export const readCurrentScript = perFormat(joined("exec_read_checks.sh", "exec_read_current.sh"));

/** The script's output: its stat line and the bytes (null: larger than the bound). */
export function parseReadCurrent(
	out: Buffer,
	path: string,
	bounded: boolean,
	parseStat: (line: string) => FileStat,
): { stat: FileStat; bytes: Buffer | null } {
	const eol = out.indexOf(10);
	const head = out.subarray(0, eol < 0 ? out.length : eol).toString("utf8");
	const space = head.indexOf(" ");
	const kind = head.slice(0, space);
	if (eol < 0 || (kind !== "st" && kind !== "big")) {
		throw pathFact("unexpected-reply", path, { output: head.slice(0, 200) });
	}
	const stat = parseStat(head.slice(space + 1));
	if (kind === "big") return { stat, bytes: null };
	const bytes = out.subarray(eol + 1);
	if (bounded && bytes.length !== stat.size) {
		throw changedWhileRead(path);
	}
	return { stat, bytes };
}
