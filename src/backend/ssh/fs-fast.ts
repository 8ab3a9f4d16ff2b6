/**
 * File operations in one request to the fast helper (remote-py.ts), where SFTP plus the shell
 * helper take several round trips and a process each:
 *
 *  - read: open without following a link in the last component (O_NOFOLLOW, O_NONBLOCK: a FIFO
 *    swapped in never blocks), fstat that handle, read it. The identity checked is that of the
 *    bytes read: no window between the check and the read.
 *  - write of a small file: the temp file beside the target created exclusively with the target's
 *    mode, written, fchmod, fsync, then link(2) for a create or the compare-and-swap (hash and
 *    identity, rename(2), directory fsync) for a replace; on any failure the helper removes its
 *    temp file before answering. The bytes travel base64 in the request.
 */
import { posix } from "node:path";
import { writeCollision } from "../changed-errors.js";
import { parseReadCurrentReply } from "../remote/read-current-reply.js";
import { sameObject, tempNameFor } from "../temp-names.js";
import type { Expected, FileStat, WriteOptions } from "../types.js";
import { sysError } from "./errors.js";
import { changed, hasStat, lstatOf, replyError, statAfter, statFrom, swapped } from "./fs-replies.js";
import { formatIdentity } from "./identity.js";
import { ask, type Live } from "./live.js";
import { LOOK_MAX_BYTES } from "./peek.js";

/** Files up to this size are written in one request; larger ones stream over SFTP. */
export const PUT_MAX_BYTES = 256 * 1024;

/**
 * realpath through the file helper's k_look, keeping the stat and small file's bytes that came
 * with it for the next stat and readFile (peek.ts). undefined: the helper cannot say (a name
 * that is not UTF-8): ask SFTP.
 */
export async function lookFast(live: Live, p: string): Promise<string | undefined> {
	const r = await ask(live, "k_look", p, String(LOOK_MAX_BYTES));
	if (r.status !== 0) {
		if (r.out.trim() === "keel: not UTF-8") return undefined;
		throw replyError(r.out, p);
	}
	const nl = r.bytes.indexOf(0x0a);
	let head: unknown;
	try {
		head = JSON.parse(r.bytes.subarray(0, Math.max(nl, 0)).toString("utf8"));
	} catch {
		head = undefined;
	}
	if (!Array.isArray(head) || typeof head[0] !== "string" || typeof head[1] !== "string") {
		throw sysError("EIO", `unexpected output: ${r.out.slice(0, 200)}`, p);
	}
	const [real, id, length] = head as [string, string, number];
	const data = r.bytes.subarray(nl + 1);
	live.peeks.put(real, statFrom(id, real), length >= 0 && length === data.length ? data : undefined);
	return real;
}

export async function readFast(live: Live, p: string, expect: FileStat | undefined): Promise<Buffer> {
	const kept = live.peeks.takeRead(p);
	if (kept && (!expect || sameObject(kept.stat, expect))) return kept.data;
	const r = await ask(live, "k_read", p);
	if (r.status !== 0) throw replyError(r.out, p);
	// k_read answers as k_readc does unbounded.
	const now = parseReadCurrentReply(r.bytes, p);
	if (expect && !sameObject(now.stat, expect)) throw swapped(p);
	return now.bytes;
}

/**
 * FileOps.readCurrent through k_readc: the handle's stat and its bytes, or (bounded, larger than
 * `maxBytes`) the stat alone. A look kept from the guard's realpath (one handle too) serves first.
 */
export async function readCurrentFast(
	live: Live,
	p: string,
	maxBytes?: number,
): Promise<{ stat: FileStat; bytes: Buffer | null }> {
	const kept = live.peeks.takeRead(p);
	if (kept && (maxBytes === undefined || kept.data.length <= maxBytes))
		return { stat: kept.stat, bytes: kept.data };
	const r = await ask(live, "k_readc", p, maxBytes === undefined ? "" : String(maxBytes));
	// The stat said a regular file: anything else at the open was swapped in.
	if (r.status !== 0)
		throw /: (not a regular file|Is a directory)\s*$/.test(r.out) ? swapped(p) : replyError(r.out, p);
	return parseReadCurrentReply(r.bytes, p, maxBytes);
}

export async function putFast(
	live: Live,
	target: string,
	data: Uint8Array,
	wopts: WriteOptions,
): Promise<FileStat> {
	const dir = posix.dirname(target);
	const temp = posix.join(dir, tempNameFor(posix.basename(target)));
	let kind = "swap";
	let hash = "";
	let id = "";
	if (wopts.expect === "absent") kind = "link";
	else if (wopts.expect) {
		const expect = wopts.expect as Expected;
		const want = formatIdentity(expect.stat, true);
		if (want === undefined) throw changed(target);
		hash = expect.sha256;
		id = want;
	}
	const b64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
	const mode = (wopts.mode ?? 0o644).toString(8);
	const r = await ask(live, "k_put", target, temp, dir, mode, kind, hash, id, b64);
	if (r.status !== 0) throw replyError(r.out, target);
	const verdict = r.out.split("\n", 1)[0];
	if (verdict === "changed") throw changed(target);
	if (verdict === "exists") {
		throw writeCollision(target);
	}
	if (verdict !== "moved" && verdict !== "linked") throw replyError(r.out, target);
	// Committed: only the new stat is missing if the target went away right after.
	return hasStat(r) ? statAfter(r.out, target) : await lstatOf(live, target);
}
