/**
 * The rg engine for grep: argv, exit status, and one rg run (a pass) stopped at the limit. Which
 * passes run, and whose answer is kept, is rg-plan.ts.
 */
import { backendFact } from "../../boundary/backend-facts.js";
import type { KeelError } from "../../boundary/errors.js";
import { pathFact } from "../../boundary/path-facts.js";
import type { GrepRequest } from "../types.js";
import type { RgTool } from "./detect.js";
import { escapeGlob, nestedTooDeep, RG_REGEX_SIZE_LIMIT, tooDeepLine } from "./patterns.js";
import { type RgFile, rgCollector } from "./rg-output.js";
import { type ArgvRunner, lineSplitter, runUntil, startingPoint } from "./runner.js";
import { RG_MAX_COLUMNS } from "./semantics.js";

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

/**
 * `order: "path"` adds --sort path (one thread, path order); "any" lets rg use every core.
 */
export function rgArgv(
	rg: RgTool,
	req: GrepRequest,
	order: "path" | "any" = "path",
	readyMark = false,
): string[] {
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
	argv.push("--", req.pattern);
	// rg's error for READY_MARK, the first path, comes once its start-up is done: on one thread
	// (--sort path) before the walk; in parallel, from the main thread before the walk's threads start.
	if (readyMark) argv.push(READY_MARK);
	argv.push(req.path);
	return argv;
}

/**
 * A path that can never exist (a name under a character device: ENOTDIR), put before the search
 * path: rg's error for it on stderr says its start-up is over and the walk begins.
 */
export const READY_MARK = "/dev/null/keel-rg-walk-starts";

/** An exit status 2 from rg: a pattern error, a missing path, or only per-file I/O errors. */
function rgFailure(stderr: string, path: string): KeelError | undefined {
	const lines = stderr.split("\n").filter((l) => l.trim() !== "");
	if (lines.some((l) => l.startsWith(`${path}: `) && l.includes("(os error 2)"))) {
		return pathFact("not-found", path);
	}
	const tooDeep = tooDeepLine(stderr);
	if (tooDeep) return nestedTooDeep(path, tooDeep);
	const fatal = lines.filter((l) => !/: .*\(os error \d+\)$/.test(l));
	if (fatal.length === 0) return undefined; // unreadable files are skipped, as the JS engine does
	const text = fatal.join("\n");
	const tooLarge = /exceeds size limit of (\d+) bytes/.exec(text);
	if (tooLarge) {
		return backendFact("pattern-too-large", { measure: "compiled-bytes", limit: Number(tooLarge[1]) });
	}
	if (/regex|error parsing glob/i.test(text)) {
		return backendFact("pattern-invalid", { reason: text, stderr });
	}
	return backendFact("search-tool-failed", { tool: "rg", reason: text, stderr }, { path });
}

/** rg's messages without its error for READY_MARK (the mark makes every ordered probe exit 2). */
function withoutMark(stderr: string): string {
	return stderr
		.split("\n")
		.filter((l) => !l.startsWith(`${READY_MARK}: `))
		.join("\n");
}

export interface Pass {
	files: RgFile[];
	count: number;
	/** Stopped because the matches passed the limit (not by the budget). */
	overLimit: boolean;
	timedOut: boolean;
	/** rg ran to its end: `files` holds every match under the path (at most limit + 1 kept). */
	complete: boolean;
}

export interface PassOptions {
	order: "path" | "any";
	/** Called once, when the matches pass the limit (the pass then stops itself). */
	onOverLimit?: () => void;
	/** Stops the pass without it being an error or a timeout (`complete` is then false). */
	cancel?: AbortSignal;
	/**
	 * Called once rg's start-up is done and its walk begins (READY_MARK's error on stderr: on one
	 * thread before the walk; in parallel, from the main thread before the walk's threads start).
	 */
	onReady?: () => void;
}

/** One rg run, stopped once its matches pass the limit (or the budget fires, or `cancel`). */
export async function rgPass(
	run: ArgvRunner,
	rg: RgTool,
	req: GrepRequest,
	opts: PassOptions,
): Promise<Pass> {
	const { root, cwd, toName, messages } = startingPoint(req, true);
	let overLimit = false;
	let stderr = "";
	const marked = opts.onReady !== undefined;
	let ready = false;
	let splitter: ReturnType<typeof lineSplitter> | undefined;
	let collector: ReturnType<typeof rgCollector> | undefined;
	const { exitCode, stopped, timedOut } = await runUntil(
		run,
		rgArgv(rg, { ...req, path: root }, opts.order, marked),
		"rg",
		req.signal,
		(stop) => {
			const c = rgCollector(req, toName, () => {
				overLimit = true;
				stop();
				opts.onOverLimit?.();
			});
			collector = c;
			if (opts.cancel?.aborted) stop();
			else opts.cancel?.addEventListener("abort", stop, { once: true });
			// Nothing under READY_MARK can be searched (it cannot exist); its lines are dropped anyway.
			splitter = lineSplitter((line) => {
				if (!(marked && line.subarray(0, READY_MARK.length).toString("latin1") === READY_MARK)) c.line(line);
			});
			return {
				onStdout: (chunk) => splitter?.push(chunk),
				onStderr: (chunk) => {
					if (stderr.length < 64 * 1024) stderr += chunk.toString("utf8");
					if (marked && !ready && opts.onReady && stderr.includes(READY_MARK)) {
						ready = true;
						opts.onReady?.();
					}
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
			const failure = rgFailure(messages(marked ? withoutMark(stderr) : stderr), req.path);
			if (failure) throw failure;
		} else if (exitCode !== 0 && exitCode !== 1) {
			throw backendFact(
				"search-tool-failed",
				{ tool: "rg", exitCode, reason: stderr.trim() },
				{ path: req.path },
			);
		}
	}
	const files = collector?.files ?? [];
	return {
		files,
		count: collector?.count() ?? 0,
		overLimit: overLimit && !timedOut,
		timedOut,
		complete: !stopped,
	};
}
