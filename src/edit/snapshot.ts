/**
 * The stats and reads a change is planned on, with keel's errors: a regular file's bytes as
 * opened, its decoded text, and the read an overwrite must compare-and-swap against. Shared by the
 * file tools and the patch planner.
 */
import { sameIdentity } from "../backend/temp-names.js";
import type { Expected, FileStat } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { pathFact, pathFactShown } from "../boundary/path-facts.js";
import { fromSystemError } from "../boundary/system-errors.js";
import { formatSize } from "../boundary/truncate.js";
import { sha256 } from "../safety/read-state.js";
import { decodeText, undecodable } from "../safety/text-encoding.js";
import type { HostFiles, HostMemory } from "../tool-host.js";

type Files = Pick<HostFiles, "files">;

/** stat (following links) mapped to keel errors (facts about `canonical`: boundary/path-facts.ts). */
export async function statPath(host: Files, canonical: string): Promise<FileStat> {
	try {
		return await host.files.stat(canonical);
	} catch (e) {
		throw fromSystemError(e, canonical);
	}
}

/**
 * The largest file read whole to be edited: its bytes, its text and the new text are held at once,
 * and a JavaScript string holds at most 512 MiB.
 */
export const MAX_EDIT_BYTES = 256 * 1024 * 1024;

/**
 * A regular file's bytes and the identity they were read from, for a change planned on them. The
 * stat gives the plain errors (NOT_FOUND, IS_DIRECTORY, NOT_A_FILE) before anything is opened; the
 * bytes then come with the open handle's own stat (FileOps.readCurrent), so another writer's
 * replace landing between the two is a newer version read, not a failure: a busy rival could
 * otherwise win that race every time and fail an edit that conflicts with nothing.
 */
export async function readRegular(
	host: Files,
	canonical: string,
	shown: string,
): Promise<{ stat: FileStat; bytes: Buffer }> {
	const st = await statPath(host, canonical);
	requireFile(st, canonical);
	if (st.size > MAX_EDIT_BYTES) {
		throw new KeelError(
			"TOO_LARGE",
			`${shown} is ${formatSize(st.size)}; an edit holds the whole file in memory, up to ${formatSize(MAX_EDIT_BYTES)}. Change it with a script through bash (sed -i, python) instead.`,
			{ path: shown },
		);
	}
	const fs = host.files;
	try {
		return await fs.readCurrent(canonical);
	} catch (e) {
		throw fromSystemError(e, canonical);
	}
}

export async function statOrNull(host: Files, canonical: string): Promise<FileStat | null> {
	try {
		return await host.files.stat(canonical);
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
		throw fromSystemError(e, canonical);
	}
}

/** IS_DIRECTORY or NOT_A_FILE (facts about `canonical`) unless `st` is a regular file's. */
export function requireFile(st: FileStat, canonical: string): void {
	if (st.type === "dir") throw pathFact("is-a-directory", canonical);
	if (st.type !== "file") throw pathFact("not-a-file", canonical);
}

/** NOT_DIRECTORY (a fact about `canonical`, worded for `shown`) unless `st` is a directory's. */
export function requireDir(st: FileStat, canonical: string, shown: string): void {
	if (st.type !== "dir") throw pathFactShown("wants-a-directory", canonical, shown);
}

/**
 * Overwriting an existing file needs a read by this session that is still fresh; the
 * commit then compare-and-swaps against that read.
 */
export function overwriteExpectation(
	host: Pick<HostMemory, "readState">,
	canonical: string,
	now: FileStat,
	shown: string,
): Expected {
	const rec = host.readState.get(canonical);
	if (!rec) {
		throw new KeelError(
			"NOT_READ",
			`${shown} exists and has not been read in this session; read it before overwriting it, or write to a new path.`,
			{
				path: shown,
			},
		);
	}
	if (!sameIdentity(rec.stat, now)) {
		throw new KeelError(
			"STALE_READ",
			`${shown} changed since it was last read; read it again before overwriting it.`,
			{ path: shown },
		);
	}
	return { stat: rec.stat, sha256: rec.sha256 };
}

export interface FileSnapshot {
	bytes: Buffer;
	stat: FileStat;
	sha256: string;
	bom: boolean;
	text: string;
	/** The file's encoding (safety/text-encoding.ts): "utf-8" unless it has another. */
	encoding: string;
}

/** Read and decode a file for editing, in its own encoding; refuses binary data and encodings keel is not sure of. */
export async function snapshotText(host: Files, canonical: string, shown: string): Promise<FileSnapshot> {
	// The stat is the opened file's own: a replace that lands mid-read yields the newer file.
	const { stat, bytes } = await readRegular(host, canonical, shown);
	const decoded = decodeText(bytes);
	if ("unsure" in decoded) throw undecodable(shown, decoded.unsure);
	return {
		bytes,
		stat,
		sha256: sha256(bytes),
		bom: decoded.bom,
		text: decoded.text,
		encoding: decoded.encoding,
	};
}
