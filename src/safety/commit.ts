/**
 * Commit a planned change through the backend's durable atomic write and remember the result as
 * read, so the session's own follow-up edits are not mistaken for stale ones. An error after the
 * new file became visible is reported as such (details.committed), never as a plain failure.
 */
import { posix } from "node:path";
import type { Expected, FileStat } from "../backend/types.js";
import { isAfterCommit } from "../boundary/errors.js";
import { committedButError, fromSystemError } from "../boundary/system-errors.js";
import type { ToolHost } from "../tool-host.js";

export interface CommitRequest {
	canonical: string;
	/** The path as the model wrote it, for messages. */
	shown: string;
	data: Uint8Array;
	/** "absent" for a no-clobber create; the identity and hash planned on for a compare-and-swap. */
	expect: "absent" | Expected;
}

/** The parts of a tool host a single-file commit uses. */
export type CommitHost = Pick<ToolHost, "files" | "readState" | "sweepOnce">;

export async function commit(host: CommitHost, req: CommitRequest): Promise<FileStat> {
	await host.sweepOnce(posix.dirname(req.canonical));
	let st: FileStat;
	try {
		st = await host.files.writeFile(req.canonical, req.data, {
			expect: req.expect,
			mkdirs: req.expect === "absent",
		});
	} catch (e) {
		if (!isAfterCommit(e)) throw fromSystemError(e, req.shown);
		// The new bytes are in place: remember them as read, and say so instead of "failed".
		if (e.stat) host.readState.record(req.canonical, e.stat, req.data);
		else host.readState.forget(req.canonical);
		throw committedButError(e, req.shown);
	}
	host.readState.record(req.canonical, st, req.data);
	return st;
}
