/** Small checks shared by the tools. */

import { sameIdentity, sameObject } from "../backend/temp-names.js";
import type { Expected, FileStat } from "../backend/types.js";
import { fromSystemError, KeelError } from "../boundary/errors.js";
import { oneOf, optional } from "../boundary/schema.js";
import { formatSize } from "../boundary/truncate.js";
import { introducedPlaceholder, refusePlaceholder } from "../edit/placeholder.js";
import type { Session } from "../session.js";
import {
	CHECK_MODES,
	type CheckedChange,
	type CheckMode,
	isChecked,
	type SyntaxReport,
} from "../syntax/check.js";

/** A positive integer option, or its default; fractional values are floored. */
export function positiveInt(name: string, value: number | undefined, fallback: number): number {
	if (value === undefined) return fallback;
	if (!Number.isFinite(value) || value < 1) {
		throw new KeelError("INVALID_ARGS", `${name} must be a positive number (got ${value}).`);
	}
	return Math.floor(value);
}

/** stat (following links) mapped to keel errors. */
export async function statPath(session: Session, canonical: string, shown: string): Promise<FileStat> {
	try {
		return await session.backend.fs.stat(canonical);
	} catch (e) {
		throw fromSystemError(e, shown);
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
 * otherwise win that race every time and fail an edit that conflicts with nothing. Backends
 * without readCurrent check the opened file against the stat (CHANGED_ON_DISK on a replace, which
 * edit/replan.ts's readSettled retries).
 */
export async function readRegular(
	session: Session,
	canonical: string,
	shown: string,
): Promise<{ stat: FileStat; bytes: Buffer }> {
	const st = await statPath(session, canonical, shown);
	requireFile(st, shown);
	if (st.size > MAX_EDIT_BYTES) {
		throw new KeelError(
			"TOO_LARGE",
			`${shown} is ${formatSize(st.size)}; an edit holds the whole file in memory, up to ${formatSize(MAX_EDIT_BYTES)}. Change it with a script through bash (sed -i, python) instead.`,
			{ path: shown },
		);
	}
	const fs = session.backend.fs;
	try {
		if (fs.readCurrent) return await fs.readCurrent(canonical);
		return { stat: st, bytes: await fs.readFile(canonical, st) };
	} catch (e) {
		throw fromSystemError(e, shown);
	}
}

export async function statOrNull(session: Session, canonical: string): Promise<FileStat | null> {
	try {
		return await session.backend.fs.stat(canonical);
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
		throw fromSystemError(e, canonical);
	}
}

export function requireFile(st: FileStat, shown: string): void {
	if (st.type === "dir")
		throw new KeelError("IS_DIRECTORY", `${shown} is a directory; use ls to list it.`, { path: shown });
	if (st.type !== "file")
		throw new KeelError("NOT_A_FILE", `${shown} is not a regular file.`, { path: shown });
}

export function requireDir(st: FileStat, shown: string): void {
	if (st.type !== "dir") {
		throw new KeelError("NOT_DIRECTORY", `${shown} is not a directory; use read for files.`, { path: shown });
	}
}

/** Throws ABORTED when the call's signal (or its scope, which knows without making one) has fired. */
export function checkAborted(signal: { readonly aborted: boolean } | undefined): void {
	if (signal?.aborted) throw new KeelError("ABORTED", "The call was aborted.");
}

/**
 * Overwriting an existing file needs a read by this session that is still fresh; the
 * commit then compare-and-swaps against that read.
 */
export function overwriteExpectation(
	session: Session,
	canonical: string,
	now: FileStat,
	shown: string,
): Expected {
	const rec = session.readState.get(canonical);
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

/**
 * After a search, the searched path must still be the object the guard checked: a directory
 * swapped for a link to elsewhere mid-search must not leak what was found there.
 */
export async function requireUnchanged(
	session: Session,
	canonical: string,
	checked: FileStat,
	shown: string,
): Promise<void> {
	const now = await session.backend.fs.stat(canonical).catch(() => undefined);
	if (!now || !sameObject(now, checked)) {
		throw new KeelError("CHANGED_ON_DISK", `${shown} was replaced during the search; search again.`, {
			path: shown,
		});
	}
}

/**
 * A whole-file write whose content brings in an omission placeholder ("// ... rest unchanged") is
 * refused: PLACEHOLDER_TEXT. The file it replaces (`now`, when there is one) is read only when the
 * content has a placeholder, to let a file keep one it already had.
 */
export async function refuseWrittenPlaceholder(
	session: Session,
	canonical: string,
	now: FileStat | null,
	content: string,
	shown: string,
): Promise<void> {
	if (!introducedPlaceholder("", content)) return;
	let had = "";
	if (now) {
		try {
			had = (await session.backend.fs.readFile(canonical, now)).toString("utf8");
		} catch (e) {
			throw fromSystemError(e, shown);
		}
	}
	refusePlaceholder(had, content, "content", shown);
}

/** The call's syntax check mode: the model's `check` argument, else the host's call option, else the session's. */
export function checkModeFor(ctx: { session: Session; check?: CheckMode }, asked?: CheckMode): CheckMode {
	return asked ?? ctx.check ?? ctx.session.checkMode;
}

/** The `check` argument of the file tool; `described: false` for a tool whose text says it elsewhere. */
export const checkArgument = (described = true) =>
	optional(
		oneOf([...CHECK_MODES], described ? { description: "refuse: a new syntax error changes nothing." } : {}),
	);

/** A change as the check takes it: the new text built only when the file is checked. */
export type CheckInput = Omit<CheckedChange, "after"> & { after: () => string; length: number };

/** The syntax check of a call's changes (undefined when the mode is "off" or no file has a grammar). */
export async function checkSyntax(
	session: Session,
	mode: CheckMode,
	changes: CheckInput[],
): Promise<SyntaxReport | undefined> {
	if (mode === "off") return undefined;
	const checked = changes.filter((c) => isChecked(c.path, c.length));
	if (checked.length === 0) return undefined;
	return session.syntax.files(
		checked.map((c) => ({ path: c.path, key: c.key, before: c.before, after: c.after() })),
	);
}
