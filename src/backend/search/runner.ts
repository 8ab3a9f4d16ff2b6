/**
 * How the native engines run a tool: the ArgvRunner seam (any transport: local, SSH, ...), a
 * runner that stops at a limit or a time budget, a linear line splitter, and the mapping between
 * the pinned starting point and the names the caller checked.
 */
import { backendFact } from "../../boundary/backend-facts.js";
import { KeelError } from "../../boundary/errors.js";
import { abortedError, throwIfAborted } from "./semantics.js";

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
export async function runUntil(
	run: ArgvRunner,
	argv: readonly string[],
	tool: string,
	signal: AbortSignal | undefined,
	handlers: (stop: () => void) => { onStdout: (c: Buffer) => void; onStderr?: (c: Buffer) => void },
	budget?: AbortSignal,
	cwd = "/",
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
			cwd,
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
		throw backendFact("search-tool-not-started", { tool, reason: (e as Error).message }, { cause: e });
	}
	budget?.removeEventListener("abort", stopOnBudget);
	throwIfAborted(signal);
	return { exitCode: result.exitCode, stopped: limiter.signal.aborted, timedOut: budget?.aborted === true };
}

/** Where an engine starts its tool, and how the tool's names map back to the checked path. */
export interface Start {
	/** The path given to the tool: `path`, the pinned handle, or "." inside it. */
	root: string;
	/** The tool's working directory. */
	cwd: string;
	/** A name the tool printed → the name under the checked path. */
	toName: (p: string) => string;
	/** The tool's messages with its names put back as the checked path. */
	messages: (text: string) => string;
}

/**
 * The path an engine passes to its tool (the pinned handle when there is one), and back to names.
 * With `chdir` and a pinned directory, the tool runs in that directory (the handle is resolved
 * once, when the child changes into it) and is given "." to search.
 */
export function startingPoint(
	req: { path: string; pinned?: string; pinnedDir?: boolean },
	chdir = false,
): Start {
	const under = (p: string, root: string) =>
		req.path === "/" ? p.slice(root.length) : req.path + p.slice(root.length);
	if (chdir && req.pinned && req.pinnedDir) {
		return {
			root: ".",
			cwd: req.pinned,
			toName: (p) => (p === "." ? req.path : p.startsWith("./") ? under(p, ".") : p),
			// rg names what it could not read "./x: ..." (or ".: ..." for the start itself).
			messages: (text) =>
				text.replace(/(^|\n)\.(?=[/:])/g, (_m, head: string) => head + (req.path === "/" ? "" : req.path)),
		};
	}
	const root = req.pinned ?? req.path;
	if (root === req.path) return { root, cwd: "/", toName: (p) => p, messages: (t) => t };
	return {
		root,
		cwd: "/",
		toName: (p) => {
			if (p === root) return req.path;
			if (!p.startsWith(`${root}/`)) return p;
			return under(p, root);
		},
		messages: (text) => text.split(root).join(req.path),
	};
}
