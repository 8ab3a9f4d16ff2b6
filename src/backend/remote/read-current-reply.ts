/**
 * The reply of a read as opened (FileOps.readCurrent) from a host program: exec_read_current.sh on
 * the exec backend, the file helper's k_readc (and k_read, unbounded) on ssh. One grammar, read
 * here for both:
 *
 *   `st STAT\n` then the bytes read from the descriptor STAT describes;
 *   `big STAT\n` alone: bounded, and the file as opened is larger than the bound;
 *   `short\n` alone: bounded, and the file gave fewer bytes than its size at the open.
 *
 * STAT is the stat line (stat-line.ts). A bounded read carries exactly STAT's size: fewer bytes are
 * a truncation meanwhile (changed while reading). Anything else is a malformed reply: an IO_ERROR
 * naming the path and what was wrong (details.malformed), and no bytes handed on.
 */
import { pathFact } from "../../boundary/path-facts.js";
import { changedWhileRead } from "../changed-errors.js";
import { parseStatLine } from "../stat-line.js";
import type { FileStat } from "../types.js";

/** The longest header line a well-formed reply has room for (a stat line is under 160 bytes). */
export const READ_CURRENT_HEAD_MAX = 256;

/** How much of a bad header the error quotes. */
const QUOTED_MAX = 80;

export interface ReadCurrentReply {
	stat: FileStat;
	/** null: larger than the bound, not read. */
	bytes: Buffer | null;
}

/**
 * The stat and bytes of a read-as-opened reply. `maxBytes`: the bound the program was given
 * (undefined: unbounded).
 */
export function parseReadCurrentReply(reply: Buffer, path: string): { stat: FileStat; bytes: Buffer };
export function parseReadCurrentReply(reply: Buffer, path: string, maxBytes?: number): ReadCurrentReply;
export function parseReadCurrentReply(reply: Buffer, path: string, maxBytes?: number): ReadCurrentReply {
	const eol = reply.subarray(0, READ_CURRENT_HEAD_MAX + 1).indexOf(0x0a);
	const head = reply.subarray(0, eol < 0 ? READ_CURRENT_HEAD_MAX + 1 : eol);
	const bad = (why: string) => malformed(path, why, head);
	if (eol < 0) return bad(reply.length > READ_CURRENT_HEAD_MAX ? "header too long" : "no header line");
	const text = head.toString("latin1");
	const body = reply.subarray(eol + 1);
	const bounded = maxBytes !== undefined;
	if (text === "short") {
		if (!bounded) return bad("short on an unbounded read");
		if (body.length > 0) return bad("bytes after short");
		throw changedWhileRead(path);
	}
	const space = text.indexOf(" ");
	const kind = text.slice(0, space);
	if (space < 0 || (kind !== "st" && kind !== "big")) return bad("unknown header");
	const stat = parseStatLine(text.slice(space + 1));
	if (!stat) return bad("not a stat line");
	// Both programs open only a regular file: any other stat is not theirs.
	if (stat.type !== "file") return bad("not a regular file's stat");
	if (kind === "big") {
		if (!bounded) return bad("big on an unbounded read");
		if (stat.size <= maxBytes) return bad("big within the bound");
		if (body.length > 0) return bad("bytes after big");
		return { stat, bytes: null };
	}
	if (bounded) {
		if (stat.size > maxBytes) return bad("read past the bound");
		if (body.length > stat.size) return bad("more bytes than the size");
		if (body.length < stat.size) throw changedWhileRead(path);
	}
	return { stat, bytes: body };
}

function malformed(path: string, why: string, head: Buffer): never {
	const quoted = JSON.stringify(head.subarray(0, QUOTED_MAX).toString("latin1"));
	throw pathFact("malformed-reply", path, { malformed: why, output: quoted });
}
