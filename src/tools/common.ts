/** Small checks shared by the tools. */

import { sameObject } from "../backend/temp-names.js";
import type { FileStat } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { oneOf, optional } from "../boundary/schema.js";
import { fromSystemError } from "../boundary/system-errors.js";
import type { DiagnosticsReport } from "../diagnostics/diagnostics.js";
import { introducedPlaceholder, refusePlaceholder } from "../edit/placeholder.js";
import { type CheckedChange, isChecked } from "../syntax/check.js";
import { CHECK_MODES, type CheckMode, refuseIfIntroduced, type SyntaxReport } from "../syntax/report.js";
import type { ToolHost } from "../tool-host.js";

/** A positive integer option, or its default; fractional values are floored. */
export function positiveInt(name: string, value: number | undefined, fallback: number): number {
	if (value === undefined) return fallback;
	if (!Number.isFinite(value) || value < 1) {
		throw new KeelError("INVALID_ARGS", `${name} must be a positive number (got ${value}).`);
	}
	return Math.floor(value);
}

/** Throws ABORTED when the call's signal (or its scope, which knows without making one) has fired. */
export function checkAborted(signal: { readonly aborted: boolean } | undefined): void {
	if (signal?.aborted) throw new KeelError("ABORTED", "The call was aborted.");
}

/**
 * After a search, the searched path must still be the object the guard checked: a directory
 * swapped for a link to elsewhere mid-search must not leak what was found there.
 */
export async function requireUnchanged(
	host: ToolHost,
	canonical: string,
	checked: FileStat,
	shown: string,
): Promise<void> {
	const now = await host.files.stat(canonical).catch(() => undefined);
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
	host: ToolHost,
	canonical: string,
	now: FileStat | null,
	content: string,
	shown: string,
): Promise<void> {
	if (!introducedPlaceholder("", content)) return;
	let had = "";
	if (now) {
		try {
			had = (await host.files.readFile(canonical, now)).toString("utf8");
		} catch (e) {
			throw fromSystemError(e, shown);
		}
	}
	refusePlaceholder(had, content, "content", shown);
}

/** The call's syntax check mode: the model's `check` argument, else the host's call option, else the session's. */
export function checkModeFor(ctx: { host: ToolHost; check?: CheckMode }, asked?: CheckMode): CheckMode {
	return asked ?? ctx.check ?? ctx.host.checkMode;
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
	host: ToolHost,
	mode: CheckMode,
	changes: CheckInput[],
): Promise<SyntaxReport | undefined> {
	if (mode === "off") return undefined;
	const checked = changes.filter((c) => isChecked(c.path, c.length));
	if (checked.length === 0) return undefined;
	return host.syntax.files(
		checked.map((c) => ({ path: c.path, key: c.key, before: c.before, after: c.after() })),
	);
}

/**
 * A change's commit with its checks: the syntax check first (in "refuse" mode a new syntax error
 * fails the change with nothing written), then the workspace's checkers around the commit.
 * `aborted` is checked just before the commit.
 */
export async function checkedCommit<T>(
	host: ToolHost,
	mode: CheckMode,
	changes: CheckInput[],
	aborted: { readonly aborted: boolean } | undefined,
	signal: AbortSignal | undefined,
	commit: () => Promise<T>,
	path?: string,
): Promise<{ value: T; syntax?: SyntaxReport; diagnostics?: DiagnosticsReport }> {
	const syntax = await checkSyntax(host, mode, changes);
	refuseIfIntroduced(syntax, mode, path);
	// Checked again after a checker's run before the change (it can take seconds).
	checkAborted(aborted);
	const { value, diagnostics } = await commitDiagnosed(host, mode, changes, signal, () => {
		checkAborted(aborted);
		return commit();
	});
	return { value, syntax, diagnostics };
}

/**
 * `commit` run inside the workspace's checkers' runs (diagnostics/diagnostics.ts): its value, and
 * the errors the change introduced; the commit alone when no checker covers the changes or the
 * mode is "off".
 */
export async function commitDiagnosed<T>(
	host: ToolHost,
	mode: CheckMode,
	changes: CheckInput[],
	signal: AbortSignal | undefined,
	commit: () => Promise<T>,
): Promise<{ value: T; diagnostics?: DiagnosticsReport }> {
	const checkers = host.diagnostics;
	if (mode === "off" || !checkers?.covers(changes.map((c) => c.path))) return { value: await commit() };
	const { value, report } = await checkers.around(changes, signal, commit);
	return { value, diagnostics: report };
}

/** The result's extra lines (the syntax check's, the checkers'), each after a newline; "" for none. */
export function checkLines(...lines: string[]): string {
	return lines
		.filter((l) => l !== "")
		.map((l) => `\n${l}`)
		.join("");
}
