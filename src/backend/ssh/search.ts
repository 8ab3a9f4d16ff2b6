/**
 * Search on the remote host. rg and fd, when the host has them, run through the shared native
 * engines over an ArgvRunner that executes on the host. Without them, the exec backend's fallback
 * (exec/fallback-search.ts) runs over the job shells as its ExecTransport: the tree is listed with
 * GNU find, the ignore files fetched, and keel walks it with the JS engine's rules (ignore-rules.ts:
 * `.gitignore`/`.ignore`/`info/exclude` as rg and fd apply them, hidden files, `.git` excluded,
 * symlinks not followed, walk order, limits, the find pattern and the grep glob). Only the content
 * search differs: `grep -H -n -Z -I` on the host over the kept files, in batches, stopping at the
 * limit (the bytes stay there), so the regex dialect is grep's -P (PCRE) or, without it, -E (POSIX
 * extended) instead of rg's; files with a NUL byte are skipped (grep -I).
 */
import { backendFact } from "../../boundary/backend-facts.js";
import { type ContentSearch, createFallbackSearch, type SearchFile } from "../exec/fallback-search.js";
import type { ExecTransport } from "../exec/transport.js";
import { createNativeSearch, detectNativeTools, type NativeTools } from "../search/native.js";
import { stripEol, throwIfAborted, withContext } from "../search/semantics.js";
import type { GrepMatch, GrepRequest, SearchOps } from "../types.js";
import type { SshConnection } from "./connection.js";
import { runRemoteJob, sshArgvRunner } from "./exec.js";

import type { SshSearchEngine } from "./options.js";

export type { SshSearchEngine } from "./options.js";

/** Files per grep invocation, and their argument bytes: keeps each argv far below ARG_MAX. */
const GREP_BATCH = 500;
const GREP_BATCH_ARG_BYTES = 128 * 1024;

/**
 * The job shells as an ExecTransport: argv run on the host from `/`, stdin empty, stdout and
 * stderr apart; an aborted job resolves with exitCode null.
 */
function jobTransport(conn: SshConnection): ExecTransport {
	return async (argv, opts) => {
		if (opts.stdin !== undefined) throw new Error("the ssh job transport does not take stdin");
		const r = await runRemoteJob(conn, {
			mode: "a",
			cwd: "/",
			words: argv,
			signal: opts.signal,
			onStdout: (c) => opts.onData?.(c, "stdout"),
			onStderr: (c) => opts.onData?.(c, "stderr"),
		});
		return { exitCode: r.aborted || r.timedOut ? null : r.status };
	};
}

function grepArgv(req: GrepRequest, grepP: boolean, files: string[]): string[] {
	const argv = [
		"grep",
		"-H",
		"-n",
		"-Z",
		"-I",
		"--no-group-separator",
		"--color=never",
		"-C",
		String(req.context),
	];
	if (req.ignoreCase) argv.push("-i");
	argv.push(req.literal ? "-F" : grepP ? "-P" : "-E");
	argv.push("-e", req.pattern, "--", ...files);
	return argv;
}

/** The fallback's content search: grep(1) on the host over the files the walk kept, in batches. */
function hostGrep(conn: SshConnection, grepP: boolean): ContentSearch {
	return (req) => async (files: readonly SearchFile[], max: number) => {
		const found: GrepMatch[] = [];
		// Nothing to search: grep still checks the pattern, as rg does before it walks.
		if (files.length === 0) await grepBatch(conn, grepP, req, ["/dev/null"], found, max);
		for (let i = 0; i < files.length && found.length < max; ) {
			const batch: string[] = [];
			let argBytes = 0;
			while (
				i < files.length &&
				(batch.length === 0 || (batch.length < GREP_BATCH && argBytes < GREP_BATCH_ARG_BYTES))
			) {
				batch.push(files[i].abs);
				argBytes += Buffer.byteLength(files[i].abs) + 1;
				i++;
			}
			await grepBatch(conn, grepP, req, batch, found, max);
		}
		return found;
	};
}

/** Run grep on a batch of files and append its matches to `found`, stopping once there are `max`. */
async function grepBatch(
	conn: SshConnection,
	grepP: boolean,
	req: GrepRequest,
	files: string[],
	found: GrepMatch[],
	max: number,
): Promise<void> {
	const stop = new AbortController();
	const signal = req.signal ? AbortSignal.any([req.signal, stop.signal]) : stop.signal;
	let file: { path: string; lines: Map<number, string>; matches: number[] } | undefined;
	const flush = () => {
		if (!file) return;
		const f = file;
		file = undefined;
		const keep = f.matches.slice(0, max - found.length);
		found.push(...withContext(f.path, keep, (n) => f.lines.get(n), req.context));
		if (found.length >= max) stop.abort();
	};
	const onLine = (line: Buffer) => {
		if (stop.signal.aborted) return;
		const nul = line.indexOf(0);
		if (nul < 0) return;
		const path = line.subarray(0, nul).toString("utf8");
		const m = /^(\d+)([:-])/.exec(line.subarray(nul + 1, nul + 24).toString("latin1"));
		if (!m) return;
		if (file && file.path !== path) flush();
		if (stop.signal.aborted) return;
		file ??= { path, lines: new Map(), matches: [] };
		const n = Number(m[1]);
		file.lines.set(n, stripEol(line.subarray(nul + 1 + m[0].length).toString("utf8")));
		if (m[2] === ":") file.matches.push(n);
	};
	let rest = Buffer.alloc(0);
	let stderr = "";
	const r = await runRemoteJob(conn, {
		mode: "a",
		cwd: "/",
		words: grepArgv(req, grepP, files),
		signal,
		onStdout: (c) => {
			let buf = rest.length > 0 ? Buffer.concat([rest, c]) : c;
			for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a)) {
				onLine(buf.subarray(0, nl));
				buf = buf.subarray(nl + 1);
			}
			rest = Buffer.from(buf);
		},
		onStderr: (c) => {
			stderr += c.toString("utf8");
		},
	});
	throwIfAborted(req.signal);
	if (stop.signal.aborted) return;
	if (rest.length > 0) onLine(rest);
	flush();
	if (r.status === 2) {
		// Per-file errors ("grep: path: Permission denied") are skipped as rg skips them.
		const fatal = stderr.split("\n").filter((l) => l.trim() !== "" && !/^grep: .*: [A-Z][a-z ]+$/.test(l));
		if (fatal.length > 0) {
			throw backendFact("pattern-invalid", { reason: fatal.join("\n"), stderr });
		}
	}
}

export interface SshSearchOptions {
	engine?: SshSearchEngine;
}

export function createSshSearch(conn: SshConnection, opts: SshSearchOptions = {}): SearchOps {
	const engine = opts.engine ?? "auto";
	const run = sshArgvRunner(conn);
	const transport = jobTransport(conn);
	let detected: Promise<{ tools: NativeTools; fallback: SearchOps }> | undefined;
	const detect = () => {
		detected ??= conn
			.use(async (live) => {
				const locate = async (name: string) => {
					const r = await live.helper.request("k_which", name);
					const p = r.out.trim();
					return p.startsWith("/") ? p : undefined;
				};
				const tools = engine === "fallback" ? {} : await detectNativeTools(run, locate);
				const fallback = createFallbackSearch(transport, {
					engine: { grep: "grep", find: "find" },
					contents: hostGrep(conn, live.caps.grepP),
				});
				return { tools, fallback };
			})
			.catch((e) => {
				detected = undefined; // a dropped connection: detect again next time
				throw e;
			});
		return detected;
	};
	return {
		async grep(req) {
			const d = await detect();
			if (d.tools.rg || engine === "native") return createNativeSearch(run, d.tools).grep(req);
			return d.fallback.grep(req);
		},
		async find(req) {
			const d = await detect();
			if (d.tools.fd || engine === "native") return createNativeSearch(run, d.tools).find(req);
			return d.fallback.find(req);
		},
	};
}
