/**
 * What a syntax check reports and what a result does with it: the modes, the per-file errors, the
 * one line a result carries, its structured part, and the refusal in "refuse" mode. Apart from the
 * check so that the tools that show a report load no parser.
 */

import { KeelError } from "../boundary/errors.js";

export type CheckMode = "report" | "refuse" | "off";

export const CHECK_MODES: readonly CheckMode[] = ["report", "refuse", "off"];

/** `value` as a mode; INVALID_ARGS naming `what` when it is none. */
export function checkModeOf(value: unknown, what: string): CheckMode {
	if (CHECK_MODES.includes(value as CheckMode)) return value as CheckMode;
	throw new KeelError(
		"INVALID_ARGS",
		`${what} must be one of ${CHECK_MODES.join(", ")} (got ${JSON.stringify(value)}).`,
	);
}

/** Errors shown per file, files shown per call. */
export const MAX_ERRORS_PER_FILE = 3;
export const MAX_FILES_PER_CALL = 5;

export interface SyntaxProblem {
	/** 1-based line and column. */
	line: number;
	column: number;
	/** "missing": the parser needed a token that is not there; "error": text it could not place. */
	kind: "missing" | "error";
	/** What is missing, or the start of the text that does not fit. */
	what: string;
	/** The line, trimmed and cut short. */
	excerpt: string;
}

export interface FileSyntax {
	path: string;
	language: string;
	/** The errors this change introduced, at most MAX_ERRORS_PER_FILE. */
	errors: SyntaxProblem[];
	/** How many more it introduced. */
	more: number;
}

export interface SyntaxReport {
	/** Files with errors the change introduced (at most MAX_FILES_PER_CALL). */
	files: FileSyntax[];
	/** Paths checked (those with a grammar). */
	checked: string[];
	/** Files with new errors beyond MAX_FILES_PER_CALL. */
	moreFiles: number;
}

function describe(f: FileSyntax): string {
	const first = f.errors
		.map(
			(e) =>
				`${e.line}:${e.column} ${e.kind === "missing" ? `missing ${JSON.stringify(e.what)}` : `unexpected ${JSON.stringify(e.what)}`}`,
		)
		.join("; ");
	const n = f.errors.length + f.more;
	return `${f.path} ${n} new syntax error${n === 1 ? "" : "s"} (${first}${f.more ? "; ..." : ""})`;
}

/** The one line a result carries when the change introduced syntax errors; "" when it did not. */
export function syntaxLine(report: SyntaxReport | undefined): string {
	if (!report || report.files.length === 0) return "";
	const more = report.moreFiles ? `; and ${report.moreFiles} more file(s)` : "";
	return `Syntax check: ${report.files.map(describe).join("; ")}${more}. details.syntax has each error's excerpt.`;
}

/** The result's structured part: what was checked and what it found. */
export function syntaxDetails(
	report: SyntaxReport | undefined,
): { syntax: SyntaxReport } | Record<string, never> {
	return report && report.checked.length > 0 ? { syntax: report } : {};
}

/** In "refuse" mode, a change that introduced syntax errors fails here, before anything is written. */
export function refuseIfIntroduced(report: SyntaxReport | undefined, mode: CheckMode, path?: string): void {
	if (mode !== "refuse" || !report || report.files.length === 0) return;
	throw new KeelError(
		"SYNTAX_ERROR",
		`The change was refused: it would introduce syntax errors. ${syntaxLine(report).replace(" details.syntax has each error's excerpt.", "")} Nothing was changed; fix the new text and send it again.`,
		{ path, details: { syntax: report } },
	);
}
