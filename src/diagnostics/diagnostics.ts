/**
 * Deeper diagnostics of a change: the workspace's own checkers (tsc, ruff, pyright, mypy,
 * py_compile, or a command of its own: checkers.ts) run after the change is written, and the result
 * reports the errors the change introduced, in one line, with the rest in details.diagnostics.
 *
 * Contract:
 * - Where: through the session's backend (ExecOps.run) in the workspace root, so on the remote host
 *   for ssh and containers, in the sandbox for bwrap: where the files and the project's tools are.
 * - Which checkers: those whose extensions match a changed file. A call with check "off" runs none.
 * - Bounded: each run has its checker's timeout (a few seconds); a run that does not finish is
 *   killed and the result says so in one line and goes without it. Output past MAX_OUTPUT_BYTES is
 *   not read; at most MAX_ERRORS_PER_FILE errors are shown per file and MAX_FILES files per checker.
 * - Errors only: what a checker marks as a warning or note is left out (parse.ts).
 * - Only the errors the change introduced. The errors of the state after the change are compared
 *   with the same checker's errors on the state before it. That baseline is the session's last
 *   result of the checker when it saw exactly the changed files' current texts (their SHA-256 match
 *   what that run saw: the usual case, a file changed again and again through keel); otherwise the
 *   checker runs once more before the change is written. Why a run and not a guess: no earlier
 *   result means nothing tells an error the file already had from a new one, and reporting old
 *   errors as new is what this check must not do; the run costs time only on a file's first change
 *   (or after a change made outside keel). An error is "already there" when the baseline has one
 *   with the same message in the same file on a line with the same text (for a changed file: lines
 *   move), or on the same line (for a file the change did not touch).
 * - Paths: a diagnostic's path is resolved against the workspace; one outside every root is never
 *   shown (only counted), so a checker cannot make a result name a file keel may not touch.
 *
 * Limits: a file changed outside keel between two of its changes (by a command, another program)
 * is caught through its own text only when it is one of the changed files: an error such a command
 * caused in another file can be reported as the later change's. A checker sees the files on disk,
 * so a run overlapping another writer's change sees that change too (both changes can then report
 * the same error; such a run's result is not kept as a baseline). Refusal ("refuse" mode) is for
 * syntax errors only: the checkers run after the change is written.
 *
 * Apart: one run of a checker (run.ts), the kept results and when one may be kept (kept-results.ts).
 */
import { posix } from "node:path";
import type { ExecOps } from "../backend/types.js";
import { isWithin } from "../safety/canonical-paths.js";
import { type Checker, checksPath, perFile } from "./checkers.js";
import { hashOf, KeptResults } from "./kept-results.js";
import { type OkRun, type Placed, type Run, runChecker } from "./run.js";

/** Errors shown per file, and files per checker. */
export const MAX_ERRORS_PER_FILE = 3;
export const MAX_FILES = 5;
/** Errors quoted in the result's one line. */
const ERRORS_IN_LINE = 2;
const MESSAGE_IN_LINE_CHARS = 100;
const EXCERPT_CHARS = 80;

/** One file's change as the diagnostics take it. */
export interface DiagnosedChange {
	/** The path as the model wrote it. */
	path: string;
	/** Its canonical path (the checkers print paths that resolve to it). */
	key: string;
	/** The text before (undefined: a new file), or how to read it. */
	before: string | undefined | (() => Promise<string | undefined>);
	after: () => string;
}

export interface DiagnosticError {
	/** 1-based; column 0 when the checker gave none. */
	line: number;
	column: number;
	message: string;
	/** The line's text, for a changed file. */
	excerpt?: string;
}

export interface FileDiagnostics {
	/** Relative to the workspace root (absolute in another root). */
	path: string;
	/** The errors the change introduced here, at most MAX_ERRORS_PER_FILE. */
	errors: DiagnosticError[];
	more: number;
}

export interface CheckerReport {
	checker: string;
	/** "ok": it ran on both states; "timeout": a run did not finish in time; "failed": it could not run. */
	status: "ok" | "timeout" | "failed";
	/** Why it failed, in keel's words (never the checker's output). */
	reason?: string;
	/** Files with new errors, changed files first, at most MAX_FILES. */
	files: FileDiagnostics[];
	moreFiles: number;
	/** New errors the checker placed outside every root: counted, never shown. */
	outsideRoots: number;
	/** Whether the baseline was an earlier result (no run before the change). */
	baselineKept: boolean;
	/** Output past MAX_OUTPUT_BYTES was not read. */
	outputCut?: boolean;
}

export interface DiagnosticsReport {
	checkers: CheckerReport[];
}

function lineOf(text: string, line: number): string {
	let start = 0;
	for (let i = 1; i < line; i++) {
		const nl = text.indexOf("\n", start);
		if (nl === -1) return "";
		start = nl + 1;
	}
	const end = text.indexOf("\n", start);
	return text.slice(start, end === -1 ? text.length : end).replace(/\r$/, "");
}

/** The session's checkers, their last results, and how they are run. One per session. */
export class Diagnostics {
	private readonly kept = new KeptResults();

	constructor(
		private readonly exec: ExecOps,
		private readonly workspace: string,
		private readonly roots: readonly string[],
		readonly checkers: readonly Checker[],
		private readonly commandPrefix?: string,
	) {}

	/** Whether any checker runs for a change of these paths. */
	covers(paths: readonly string[]): boolean {
		return this.checkers.some((c) => paths.some((p) => checksPath(c, p)));
	}

	/**
	 * `commit` run between the checkers' runs on the state before (unless a kept result is the
	 * baseline) and after it; its value, and the errors the change introduced.
	 */
	async around<T>(
		changes: readonly DiagnosedChange[],
		signal: AbortSignal | undefined,
		commit: () => Promise<T>,
	): Promise<{ value: T; report?: DiagnosticsReport }> {
		const checkers = this.checkers.filter((c) => changes.some((ch) => checksPath(c, ch.path)));
		if (checkers.length === 0) return { value: await commit() };
		return this.checked(checkers, changes, signal, commit);
	}

	private async checked<T>(
		checkers: Checker[],
		changes: readonly DiagnosedChange[],
		signal: AbortSignal | undefined,
		commit: () => Promise<T>,
	): Promise<{ value: T; report: DiagnosticsReport }> {
		const before = new Map<string, string | undefined>();
		for (const ch of changes)
			before.set(ch.key, typeof ch.before === "function" ? await ch.before() : ch.before);
		const beforeHash = new Map([...before].map(([k, t]) => [k, hashOf(t)]));
		const baselines = await Promise.all(
			checkers.map(async (c) => {
				const kept = this.kept.get(c.name);
				if (kept && [...beforeHash].every(([k, h]) => kept.seen.get(k) === h))
					return {
						run: {
							status: "ok",
							errors: kept.errors,
							outsideRoots: kept.outsideRoots,
							outputCut: false,
						} as Run,
						kept: true,
					};
				// A checker of the files it is given checks only those that exist before the change.
				const existing = changes.filter((ch) => before.get(ch.key) !== undefined);
				const since = this.kept.committed;
				const run: Run =
					perFile(c) && !existing.some((ch) => checksPath(c, ch.path))
						? { status: "ok", errors: [], outsideRoots: 0, outputCut: false }
						: await this.run(c, existing, signal);
				if (run.status === "ok") this.kept.keep(c, run, beforeHash, kept, since);
				return { run, kept: false };
			}),
		);
		const value = await commit();
		const mine = this.kept.commit();
		const after = new Map(changes.map((ch) => [ch.key, ch.after()]));
		const afterHash = new Map([...after].map(([k, t]) => [k, hashOf(t)]));
		const reports = await Promise.all(
			checkers.map(async (c, i): Promise<CheckerReport> => {
				const base = baselines[i];
				const empty = { checker: c.name, files: [], moreFiles: 0, outsideRoots: 0, baselineKept: base.kept };
				if (base.run.status !== "ok") return { ...empty, status: base.run.status, reason: base.run.reason };
				const run = await this.run(c, changes, signal);
				if (run.status !== "ok") {
					// The kept result no longer describes the files: the next change runs the checker before.
					this.kept.delete(c.name);
					return { ...empty, status: run.status, reason: run.reason };
				}
				this.kept.keep(c, run, afterHash, this.kept.get(c.name), mine);
				return this.compare(c.name, base.run, run, before, after, changes, base.kept);
			}),
		);
		return { value, report: { checkers: reports } };
	}

	/** One run of `checker` on the files as they are now. */
	private run(checker: Checker, changes: readonly DiagnosedChange[], signal?: AbortSignal): Promise<Run> {
		const { exec, workspace, roots, commandPrefix } = this;
		return runChecker({ exec, workspace, roots, commandPrefix }, checker, changes, signal);
	}

	/** The errors of `now` its baseline does not account for, grouped and capped. */
	private compare(
		name: string,
		base: OkRun,
		now: OkRun,
		before: Map<string, string | undefined>,
		after: Map<string, string>,
		changes: readonly DiagnosedChange[],
		baselineKept: boolean,
	): CheckerReport {
		// A changed file's errors are matched by its line's text (lines move); another's by line number.
		// Only when both texts are known: a file read as new matches by number on both sides.
		const keyOf = (d: Placed, texts: Map<string, string | undefined>) => {
			const text = texts.get(d.at);
			const byText = text !== undefined && before.get(d.at) !== undefined;
			return `${d.at}\0${d.message}\0${byText ? lineOf(text, d.line).trim() : `#${d.line}`}`;
		};
		const count = new Map<string, number>();
		for (const d of base.errors) {
			const k = keyOf(d, before);
			count.set(k, (count.get(k) ?? 0) + 1);
		}
		const introduced = now.errors.filter((d) => {
			const k = keyOf(d, after);
			const n = count.get(k) ?? 0;
			if (n === 0) return true;
			count.set(k, n - 1);
			return false;
		});
		const byFile = new Map<string, Placed[]>();
		for (const d of introduced) byFile.set(d.at, [...(byFile.get(d.at) ?? []), d]);
		const changed = new Set(changes.map((c) => c.key));
		const order = [...byFile.keys()].sort((a, b) => Number(changed.has(b)) - Number(changed.has(a)));
		const files = order.slice(0, MAX_FILES).map((at): FileDiagnostics => {
			const errs = byFile.get(at) ?? [];
			const text = after.get(at);
			return {
				path: isWithin(this.workspace, at) ? posix.relative(this.workspace, at) || "." : at,
				errors: errs.slice(0, MAX_ERRORS_PER_FILE).map((d) => ({
					line: d.line,
					column: d.column,
					message: d.message,
					...(text !== undefined ? { excerpt: cutTo(lineOf(text, d.line).trim(), EXCERPT_CHARS) } : {}),
				})),
				more: Math.max(0, errs.length - MAX_ERRORS_PER_FILE),
			};
		});
		return {
			checker: name,
			status: "ok",
			files,
			moreFiles: Math.max(0, order.length - MAX_FILES),
			outsideRoots: Math.max(0, now.outsideRoots - base.outsideRoots),
			baselineKept,
			...(now.outputCut ? { outputCut: true } : {}),
		};
	}
}

const cutTo = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 3)}...` : s);

function describe(r: CheckerReport): string {
	if (r.status !== "ok") return `${r.checker} ${r.reason}; this result has none of its errors`;
	const n = r.files.reduce((s, f) => s + f.errors.length + f.more, 0);
	const outside = r.outsideRoots ? `; ${r.outsideRoots} more outside the roots, not shown` : "";
	if (n === 0) return `${r.checker} found no new errors${outside}`;
	const quoted = r.files
		.flatMap((f) =>
			f.errors.map(
				(e) =>
					`${f.path}:${e.line}${e.column ? `:${e.column}` : ""} ${cutTo(e.message, MESSAGE_IN_LINE_CHARS)}`,
			),
		)
		.slice(0, ERRORS_IN_LINE);
	const more = n + (r.moreFiles ? 1 : 0) > quoted.length ? "; ..." : "";
	return `${r.checker} ${n}${r.moreFiles ? "+" : ""} new error${n === 1 ? "" : "s"}${outside} (${quoted.join("; ")}${more})`;
}

/** The result's one line about the checkers; "" when none ran. */
export function diagnosticsLine(report: DiagnosticsReport | undefined): string {
	if (!report || report.checkers.length === 0) return "";
	const found = report.checkers.some((r) => r.files.length > 0);
	return `Diagnostics: ${report.checkers.map(describe).join("; ")}.${found ? " details.diagnostics has each error." : ""}`;
}

/** The result's structured part. */
export function diagnosticsDetails(
	report: DiagnosticsReport | undefined,
): { diagnostics: DiagnosticsReport } | Record<string, never> {
	return report && report.checkers.length > 0 ? { diagnostics: report } : {};
}
