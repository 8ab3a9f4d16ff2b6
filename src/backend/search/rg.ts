/**
 * The rg engine for grep. Results are the first `limit` matches in path order whatever the
 * scheduling, found in at most two runs:
 *   1. rg in parallel (no --sort: every core). When the whole tree holds no more than `limit`
 *      matches, that run saw them all, and sorting its files by path is the answer.
 *   2. Only when run 1 passes the limit is it stopped and rg run again with `--sort path`
 *      (one thread, files in path order), stopped at the match past the limit: the first `limit`
 *      are then the same on every run.
 * Both runs start from the same pinned handle (pinned.ts) and share the time budget.
 */
import { KeelError } from "../../boundary/errors.js";
import type { GrepOutcome, GrepRequest } from "../types.js";
import type { RgTool } from "./detect.js";
import { escapeGlob, RG_REGEX_SIZE_LIMIT } from "./patterns.js";
import { type RgFile, rgCollector } from "./rg-output.js";
import { type ArgvRunner, lineSplitter, runUntil, startingPoint } from "./runner.js";
import { comparePaths, RG_MAX_COLUMNS } from "./semantics.js";

/**
 * rg matches `--glob` relative to its working directory ("/" here), so a glob anchored to the
 * search directory gets that directory (escaped) put in front of it.
 */
export function rgGlob(glob: string, root: string): string {
	let g = glob;
	let negate = "";
	if (g.startsWith("\\!") || g.startsWith("\\#")) g = g.slice(1);
	else if (g.startsWith("!")) {
		negate = "!";
		g = g.slice(1);
	}
	const leading = g.startsWith("/");
	if (leading) g = g.slice(1);
	const body = g.endsWith("/") ? g.slice(0, -1) : g;
	if (!leading && !body.includes("/")) return glob;
	// "." is the working directory the tool runs in: a leading "/" anchors there.
	const base = root === "/" || root === "." ? "" : escapeGlob(root);
	return `${negate}${base}/${g}`;
}

/** `order: "path"` adds --sort path (one thread, path order); "any" lets rg use every core. */
export function rgArgv(rg: RgTool, req: GrepRequest, order: "path" | "any" = "path"): string[] {
	const argv = [rg.path, "--null", "--line-number", "--with-filename", "--no-heading", "--color=never"];
	argv.push("--no-config", "--hidden", "--no-context-separator");
	// Per-line work and output bounded whatever the input: a long line comes back as a preview.
	argv.push("--max-columns", String(RG_MAX_COLUMNS), "--max-columns-preview");
	argv.push("--regex-size-limit", RG_REGEX_SIZE_LIMIT, "--dfa-size-limit", RG_REGEX_SIZE_LIMIT);
	// --no-mmap: rg then reports a NUL anywhere in a named file too (a binary note), see rg-output.
	argv.push("--no-ignore-global", "--no-mmap");
	if (order === "path") argv.push("--sort", "path");
	argv.push("--context", String(req.context));
	if (req.glob) argv.push("--glob", rgGlob(req.glob, req.path));
	argv.push("--glob", "!.git"); // last: later globs win, so no user glob can bring .git back
	if (req.ignoreCase) argv.push("--ignore-case");
	if (req.literal) argv.push("--fixed-strings");
	argv.push("--", req.pattern, req.path);
	return argv;
}

/** An exit status 2 from rg: a pattern error, a missing path, or only per-file I/O errors. */
function rgFailure(stderr: string, path: string): KeelError | undefined {
	const lines = stderr.split("\n").filter((l) => l.trim() !== "");
	if (lines.some((l) => l.startsWith(`${path}: `) && l.includes("(os error 2)"))) {
		return new KeelError("NOT_FOUND", `No such file or directory: ${path}. Check the path with ls or find.`, {
			path,
		});
	}
	const fatal = lines.filter((l) => !/: .*\(os error \d+\)$/.test(l));
	if (fatal.length === 0) return undefined; // unreadable files are skipped, as the JS engine does
	const text = fatal.join("\n");
	const tooLarge = /exceeds size limit of (\d+) bytes/.exec(text);
	if (tooLarge) {
		return new KeelError(
			"INVALID_PATTERN",
			`Pattern too large: its compiled form exceeds ${tooLarge[1]} bytes. Use a shorter pattern, smaller repetition counts (x{n}), or literal: true.`,
		);
	}
	if (/regex|error parsing glob/i.test(text)) {
		return new KeelError("INVALID_PATTERN", `Invalid pattern: ${text}`, { details: { stderr } });
	}
	return new KeelError("IO_ERROR", `rg failed: ${text}`, { path, details: { stderr } });
}

interface Pass {
	files: RgFile[];
	count: number;
	/** Stopped because the matches passed the limit (not by the budget). */
	overLimit: boolean;
	timedOut: boolean;
}

/** One rg run, stopped once its matches pass the limit (or the budget fires). */
async function rgPass(
	run: ArgvRunner,
	rg: RgTool,
	req: GrepRequest,
	order: "path" | "any",
	onOverLimit?: () => void,
): Promise<Pass> {
	const { root, cwd, toName, messages } = startingPoint(req, true);
	let overLimit = false;
	let stderr = "";
	let splitter: ReturnType<typeof lineSplitter> | undefined;
	let collector: ReturnType<typeof rgCollector> | undefined;
	const { exitCode, stopped, timedOut } = await runUntil(
		run,
		rgArgv(rg, { ...req, path: root }, order),
		"rg",
		req.signal,
		(stop) => {
			const c = rgCollector(req, toName, () => {
				overLimit = true;
				stop();
				onOverLimit?.();
			});
			collector = c;
			splitter = lineSplitter((line) => c.line(line));
			return {
				onStdout: (chunk) => splitter?.push(chunk),
				onStderr: (chunk) => {
					if (stderr.length < 64 * 1024) stderr += chunk.toString("utf8");
				},
			};
		},
		req.stop,
		cwd,
	);
	if (!stopped) {
		splitter?.end();
		collector?.end();
		if (exitCode === 2) {
			const failure = rgFailure(messages(stderr), req.path);
			if (failure) throw failure;
		} else if (exitCode !== 0 && exitCode !== 1) {
			throw new KeelError("IO_ERROR", `rg ended unexpectedly (exit ${exitCode}): ${stderr.trim()}`, {
				path: req.path,
			});
		}
	}
	const files = collector?.files ?? [];
	return { files, count: collector?.count() ?? 0, overLimit: overLimit && !timedOut, timedOut };
}

export async function rgGrep(run: ArgvRunner, rg: RgTool, req: GrepRequest): Promise<GrepOutcome> {
	// rg itself is the judge of the pattern (Rust regex syntax); see rgFailure.
	// The path-ordered run starts the moment the parallel one passes the limit, while that one is
	// still being killed.
	let ordered: Promise<Pass> | undefined;
	let pass: Pass;
	try {
		pass = await rgPass(run, rg, req, "any", () => {
			ordered ??= rgPass(run, rg, req, "path");
		});
	} catch (e) {
		await ordered?.catch(() => undefined);
		throw e;
	}
	const second = ordered ? await ordered : undefined;
	// Past the limit the ordered run answers; else (under it, or stopped by the budget first)
	// the parallel run's files in path order do.
	if (second && pass.overLimit) pass = second;
	else pass.files.sort((a, b) => comparePaths(a.rgPath, b.rgPath));
	const found = pass.files.flatMap((f) => f.matches);
	const late = pass.timedOut && found.length <= req.limit;
	return {
		matches: found.slice(0, req.limit),
		limitReached: found.length > req.limit,
		engine: "rg",
		...(late ? { timedOut: true } : {}),
	};
}
