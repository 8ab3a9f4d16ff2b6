/**
 * ripgrep (grep) and fd (find) engines. They never spawn anything themselves: they drive an
 * `ArgvRunner`, so the same engines can run over any exec transport (local, SSH, ...). They
 * mirror the semantics documented in js.ts; see there for the shared rules.
 */
import { KeelError } from "../../boundary/errors.js";
import type { FindOutcome, FindRequest, GrepMatch, GrepOutcome, GrepRequest, SearchOps } from "../types.js";
import { escapeGlob, findGlobTarget, RG_REGEX_SIZE_LIMIT } from "./patterns.js";
import {
	abortedError,
	comparePaths,
	RG_MAX_COLUMNS,
	stripEol,
	throwIfAborted,
	withContext,
} from "./semantics.js";

// ---------------------------------------------------------------------------------------------
// Transport

export interface RunOptions {
	/** Working directory; the engines always pass "/" (they use absolute paths only). */
	cwd?: string;
	/** Abort kills the process; the runner then resolves (exitCode null), it does not reject. */
	signal?: AbortSignal;
	onStdout: (chunk: Buffer) => void;
	onStderr?: (chunk: Buffer) => void;
}

export interface RunResult {
	/** null when the process was killed by a signal. */
	exitCode: number | null;
}

/** Runs argv (argv[0] is the program) to completion; rejects only when it cannot start. */
export type ArgvRunner = (argv: readonly string[], opts: RunOptions) => Promise<RunResult>;

export interface RgTool {
	path: string;
	version: string;
}

export interface FdTool {
	path: string;
	version: string;
	/** `--no-global-ignore-file` (fd ≥ 8.7): keeps ~/.config/fd/ignore out. */
	noGlobalIgnoreFile: boolean;
	/** `--no-require-git` (fd ≥ 8.7): .gitignore outside repositories too, as pi's find. */
	noRequireGit: boolean;
}

export interface NativeTools {
	rg?: RgTool;
	fd?: FdTool;
}

/** Run and keep the whole output (small outputs only: --version, --help). */
export async function runCollect(
	run: ArgvRunner,
	argv: readonly string[],
	signal?: AbortSignal,
): Promise<{ exitCode: number | null; stdout: string; stderr: string }> {
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	const { exitCode } = await run(argv, {
		cwd: "/",
		signal,
		onStdout: (c) => out.push(c),
		onStderr: (c) => err.push(c),
	});
	return {
		exitCode,
		stdout: Buffer.concat(out).toString("utf8"),
		stderr: Buffer.concat(err).toString("utf8"),
	};
}

// ---------------------------------------------------------------------------------------------
// Detection

export function parseVersion(text: string): [number, number, number] | undefined {
	const m = /(\d+)\.(\d+)\.(\d+)/.exec(text);
	return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

async function versionAndHelp(run: ArgvRunner, path: string): Promise<[string, string] | undefined> {
	try {
		const [v, h] = await Promise.all([
			runCollect(run, [path, "--version"]),
			runCollect(run, [path, "--help"]),
		]);
		return [v.stdout.trim(), h.stdout];
	} catch {
		return undefined;
	}
}

/** A usable ripgrep at `path`, or undefined (not ripgrep, or lacking a flag we rely on). */
export async function probeRg(run: ArgvRunner, path: string): Promise<RgTool | undefined> {
	const out = await versionAndHelp(run, path);
	if (!out || !/^ripgrep \d/.test(out[0])) return undefined;
	const needed = [
		"--null",
		"--sort",
		"--no-ignore-global",
		"--no-config",
		"--no-mmap",
		"--max-columns-preview",
	];
	needed.push("--no-context-separator", "--regex-size-limit", "--dfa-size-limit");
	if (!needed.every((flag) => out[1].includes(flag))) return undefined;
	return { path, version: out[0].split("\n")[0] };
}

/** A usable fd at `path` (≥ 8.3, which marks directories with a trailing "/"), or undefined. */
export async function probeFd(run: ArgvRunner, path: string): Promise<FdTool | undefined> {
	const out = await versionAndHelp(run, path);
	// "fd" on some systems is another program (e.g. a file manager): insist on fd's banner.
	if (!out || !/^(fd|fdfind) \d/.test(out[0])) return undefined;
	const v = parseVersion(out[0]);
	if (!v || v[0] < 8 || (v[0] === 8 && v[1] < 3)) return undefined;
	const needed = ["--glob", "--hidden", "--exclude", "--full-path", "--print0", "--case-sensitive"];
	if (!needed.every((flag) => out[1].includes(flag))) return undefined;
	return {
		path,
		version: out[0],
		noGlobalIgnoreFile: out[1].includes("--no-global-ignore-file"),
		noRequireGit: out[1].includes("--no-require-git"),
	};
}

/** Find and probe rg and fd (or Debian's fdfind) with `locate` (name → executable path). */
export async function detectNativeTools(
	run: ArgvRunner,
	locate: (name: string) => Promise<string | undefined>,
): Promise<NativeTools> {
	const rgPath = await locate("rg");
	const rg = rgPath ? await probeRg(run, rgPath) : undefined;
	let fd: FdTool | undefined;
	for (const name of ["fd", "fdfind"]) {
		const p = await locate(name);
		fd = p ? await probeFd(run, p) : undefined;
		if (fd) break;
	}
	return { rg, fd };
}

// ---------------------------------------------------------------------------------------------
// Running with a limit

/**
 * Splits a byte stream into lines (as bytes). Each chunk is scanned once and a partial line is
 * kept as a list of pieces, so the work is linear in the output however long a line is.
 */
export function lineSplitter(onLine: (line: Buffer) => void): { push(chunk: Buffer): void; end(): void } {
	let pieces: Buffer[] = [];
	return {
		push(chunk) {
			let from = 0;
			for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, from)) {
				const piece = chunk.subarray(from, nl);
				onLine(pieces.length === 0 ? piece : Buffer.concat([...pieces, piece]));
				pieces = [];
				from = nl + 1;
			}
			if (from < chunk.length) pieces.push(chunk.subarray(from));
		},
		end() {
			if (pieces.length > 0) onLine(Buffer.concat(pieces));
			pieces = [];
		},
	};
}

/**
 * Run with the caller's signal; `handlers` gets a `stop()` that kills the process early (limit
 * reached) without that being an error. Stdout after `stop()` is dropped.
 */
async function runUntil(
	run: ArgvRunner,
	argv: readonly string[],
	tool: string,
	signal: AbortSignal | undefined,
	handlers: (stop: () => void) => { onStdout: (c: Buffer) => void; onStderr?: (c: Buffer) => void },
	budget?: AbortSignal,
): Promise<{ exitCode: number | null; stopped: boolean; timedOut: boolean }> {
	throwIfAborted(signal);
	const limiter = new AbortController();
	// The budget stops the process like the limit does: what arrived before it is kept.
	const stopOnBudget = () => limiter.abort();
	if (budget?.aborted) limiter.abort();
	budget?.addEventListener("abort", stopOnBudget, { once: true });
	const both = signal ? AbortSignal.any([signal, limiter.signal]) : limiter.signal;
	const { onStdout, onStderr } = handlers(() => limiter.abort());
	let result: RunResult;
	try {
		result = await run(argv, {
			cwd: "/",
			signal: both,
			onStdout: (c) => {
				if (!limiter.signal.aborted) onStdout(c);
			},
			onStderr,
		});
	} catch (e) {
		budget?.removeEventListener("abort", stopOnBudget);
		if (signal?.aborted) throw abortedError();
		if (e instanceof KeelError) throw e;
		throw new KeelError("BACKEND_UNAVAILABLE", `${tool} could not be started: ${(e as Error).message}`, {
			cause: e,
		});
	}
	budget?.removeEventListener("abort", stopOnBudget);
	throwIfAborted(signal);
	return { exitCode: result.exitCode, stopped: limiter.signal.aborted, timedOut: budget?.aborted === true };
}

// ---------------------------------------------------------------------------------------------
// rg

/** What `--max-columns-preview` puts after a cut line. */
const RG_CUT_MARK = " [... omitted end of long line]";
/** The notes rg prints (on stdout, without a NUL) for a file it found to be binary. */
const RG_BINARY_NOTE = /^(binary file matches|WARNING: stopped searching binary file)/;

/** One output line of `rg --null --line-number --with-filename`: `path\0N:text` or `path\0N-text`. */
interface RgLine {
	path: string;
	line: number;
	match: boolean;
	text: string;
}

function parseRgLine(raw: Buffer): RgLine | undefined {
	const nul = raw.indexOf(0);
	if (nul < 0) return undefined;
	let i = nul + 1;
	let line = 0;
	while (i < raw.length && raw[i] >= 0x30 && raw[i] <= 0x39) line = line * 10 + raw[i++] - 0x30;
	const sep = raw[i];
	if (sep !== 0x3a && sep !== 0x2d) return undefined;
	let body = raw.subarray(i + 1);
	// Only a line longer than the column cap is cut, so only such a line can carry the mark.
	if (body.length > RG_MAX_COLUMNS && body.subarray(-RG_CUT_MARK.length).toString("latin1") === RG_CUT_MARK) {
		body = body.subarray(0, body.length - RG_CUT_MARK.length);
	}
	return {
		path: raw.subarray(0, nul).toString("utf8"),
		line,
		match: sep === 0x3a,
		text: stripEol(body.toString("utf8")),
	};
}

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
	const base = root === "/" ? "" : escapeGlob(root);
	return `${negate}${base}/${g}`;
}

export function rgArgv(rg: RgTool, req: GrepRequest): string[] {
	const argv = [rg.path, "--null", "--line-number", "--with-filename", "--no-heading", "--color=never"];
	argv.push("--no-config", "--hidden", "--no-context-separator");
	// Per-line work and output bounded whatever the input: a long line comes back as a preview.
	argv.push("--max-columns", String(RG_MAX_COLUMNS), "--max-columns-preview");
	argv.push("--regex-size-limit", RG_REGEX_SIZE_LIMIT, "--dfa-size-limit", RG_REGEX_SIZE_LIMIT);
	// --no-mmap: rg then reports a NUL anywhere in a named file too (a binary note), see rgGrep.
	// --sort path: deterministic order (single-threaded) so the first `limit` matches are stable.
	argv.push("--no-ignore-global", "--no-mmap", "--sort", "path", "--context", String(req.context));
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

/** The path an engine passes to its tool (the pinned handle when there is one), and back to names. */
function startingPoint(req: { path: string; pinned?: string }): {
	root: string;
	toName: (p: string) => string;
} {
	const root = req.pinned ?? req.path;
	if (root === req.path) return { root, toName: (p) => p };
	return {
		root,
		toName: (p) => {
			if (p === root) return req.path;
			if (!p.startsWith(`${root}/`)) return p;
			return req.path === "/" ? p.slice(root.length) : req.path + p.slice(root.length);
		},
	};
}

export async function rgGrep(run: ArgvRunner, rg: RgTool, req: GrepRequest): Promise<GrepOutcome> {
	// rg itself is the judge of the pattern (Rust regex syntax); see rgFailure.
	const { root, toName } = startingPoint(req);
	const found: GrepMatch[] = [];
	let file: { path: string; lines: Map<number, string>; matches: number[]; binary: boolean } | undefined;
	// With --sort path rg prints file after file: one is complete when the next begins (or at exit).
	const finish = (stop: () => void) => {
		// Matches are kept only once rg has seen the whole file: a NUL anywhere drops it.
		if (file && !file.binary) {
			const keep = file.matches.slice(0, req.limit + 1 - found.length);
			const lines = file.lines;
			// rg names the file below the pinned start: the match names the checked path.
			found.push(...withContext(toName(file.path), keep, (n) => lines.get(n), req.context));
		}
		file = undefined;
		if (found.length > req.limit) stop();
	};
	const onLine = (raw: Buffer, stop: () => void) => {
		const ev = parseRgLine(raw);
		if (!ev) {
			const note = raw.toString("utf8");
			if (
				file &&
				note.startsWith(`${file.path}: `) &&
				RG_BINARY_NOTE.test(note.slice(file.path.length + 2))
			) {
				file.binary = true;
			}
			return;
		}
		if (file && file.path !== ev.path) finish(stop);
		if (found.length > req.limit) return;
		file ??= { path: ev.path, lines: new Map(), matches: [], binary: false };
		// Past the match that would exceed the limit (and its context), lines are of no use.
		const need = req.limit + 1 - found.length;
		if (file.matches.length >= need && ev.line > file.matches[need - 1] + req.context) return;
		file.lines.set(ev.line, ev.text);
		if (ev.match) file.matches.push(ev.line);
	};
	let stderr = "";
	let splitter: ReturnType<typeof lineSplitter> | undefined;
	let stopRun: () => void = () => {};
	const { exitCode, stopped, timedOut } = await runUntil(
		run,
		rgArgv(rg, { ...req, path: root }),
		"rg",
		req.signal,
		(stop) => {
			stopRun = stop;
			splitter = lineSplitter((line) => onLine(line, stop));
			return {
				onStdout: (c) => splitter?.push(c),
				onStderr: (c) => {
					if (stderr.length < 64 * 1024) stderr += c.toString("utf8");
				},
			};
		},
		req.stop,
	);
	if (!stopped) {
		splitter?.end();
		finish(stopRun);
		if (exitCode === 2) {
			const failure = rgFailure(stderr.split(root).join(req.path), req.path);
			if (failure) throw failure;
		} else if (exitCode !== 0 && exitCode !== 1) {
			throw new KeelError("IO_ERROR", `rg ended unexpectedly (exit ${exitCode}): ${stderr.trim()}`, {
				path: req.path,
			});
		}
	}
	const late = timedOut && found.length <= req.limit;
	const matches = found.slice(0, req.limit);
	return { matches, limitReached: found.length > req.limit, engine: "rg", ...(late ? { timedOut } : {}) };
}

// ---------------------------------------------------------------------------------------------
// fd

export function fdArgv(fd: FdTool, req: FindRequest): string[] {
	const argv = [fd.path, "--glob", "--color=never", "--hidden", "--case-sensitive", "--print0"];
	argv.push("--exclude", ".git");
	if (fd.noGlobalIgnoreFile) argv.push("--no-global-ignore-file");
	if (fd.noRequireGit) argv.push("--no-require-git");
	const target = findGlobTarget(req.pattern);
	let pattern = target.glob;
	if (target.fullPath) {
		// --full-path matches the absolute path: anchor the pattern at the search directory.
		argv.push("--full-path");
		pattern = `${req.path === "/" ? "" : escapeGlob(req.path)}/${target.glob}`;
	}
	argv.push("--", pattern, req.path);
	return argv;
}

async function fdFailure(run: ArgvRunner, stderr: string, path: string): Promise<KeelError> {
	if (stderr.includes("error parsing glob")) {
		return new KeelError("INVALID_PATTERN", `Invalid pattern: ${stderr.trim()}`, { details: { stderr } });
	}
	if (stderr.includes("is not a directory")) {
		// fd says the same for a missing path and a file: ask the transport which one it is.
		const exists = await runCollect(run, ["test", "-e", path]).then(
			(r) => r.exitCode === 0,
			() => false,
		);
		return exists
			? new KeelError("NOT_DIRECTORY", `Not a directory: ${path}.`, { path })
			: new KeelError("NOT_FOUND", `No such file or directory: ${path}. Check the path with ls or find.`, {
					path,
				});
	}
	return new KeelError("IO_ERROR", `fd failed: ${stderr.trim()}`, { path, details: { stderr } });
}

/**
 * fd output is unordered (parallel walk), so every entry is read and sorted before the first
 * `limit` are kept; the JS engine walks in that same order and can stop early.
 */
export async function fdFind(run: ArgvRunner, fd: FdTool, req: FindRequest): Promise<FindOutcome> {
	const { root } = startingPoint(req);
	const chunks: Buffer[] = [];
	let stderr = "";
	const { exitCode, timedOut } = await runUntil(
		run,
		fdArgv(fd, { ...req, path: root }),
		"fd",
		req.signal,
		() => ({
			onStdout: (c) => chunks.push(c),
			onStderr: (c) => {
				stderr += c.toString("utf8");
			},
		}),
		req.stop,
	);
	// fd reports its own failures as "[fd error]: ..."; other non-zero exits keep the output.
	if (!timedOut && exitCode !== 0 && (stderr.includes("[fd error]") || chunks.length === 0)) {
		throw await fdFailure(run, stderr.split(root).join(req.path), req.path);
	}
	const prefix = root.endsWith("/") ? root : `${root}/`;
	const records = Buffer.concat(chunks).toString("utf8").split("\0");
	records.pop(); // "" after the last NUL, or a path cut short by the budget
	const paths = records
		.filter((p) => p.startsWith(prefix) && p.length > prefix.length)
		.map((p) => p.slice(prefix.length))
		.sort(comparePaths);
	const shown = paths.slice(0, req.limit);
	return {
		paths: shown,
		limitReached: paths.length > req.limit,
		engine: "fd",
		...(timedOut ? { timedOut } : {}),
	};
}

// ---------------------------------------------------------------------------------------------

/** SearchOps over rg and fd; an operation whose tool is missing fails with BACKEND_UNAVAILABLE. */
export function createNativeSearch(run: ArgvRunner, tools: NativeTools): SearchOps {
	const missing = (name: string) =>
		new KeelError(
			"BACKEND_UNAVAILABLE",
			`${name} is not available on this backend; use the js search engine.`,
		);
	return {
		grep: (req) => (tools.rg ? rgGrep(run, tools.rg, req) : Promise.reject(missing("ripgrep (rg)"))),
		find: (req) => (tools.fd ? fdFind(run, tools.fd, req) : Promise.reject(missing("fd"))),
	};
}
