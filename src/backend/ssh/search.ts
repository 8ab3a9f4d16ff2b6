/**
 * Search on the remote host. rg and fd, when the host has them, run through the shared native
 * engines over an ArgvRunner that executes on the host. Without them, a fallback built on GNU
 * find and grep gives the same result shape and order:
 *  - same: hidden files included, `.git` excluded, symlinks not followed, results sorted in walk
 *    order (comparePaths) with the same limit rule, the grep `glob` applied as rg's --glob, files
 *    with a NUL byte skipped (grep -I);
 *  - different: .gitignore/.ignore files are not applied (everything else is searched), and the
 *    regex dialect is grep's -P (PCRE) or, without it, -E (POSIX extended) instead of rg's.
 */
import { KeelError } from "../../boundary/errors.js";
import { compileOverride, joinPath } from "../search/ignore-rules.js";
import { createNativeSearch, detectNativeTools, type NativeTools } from "../search/native.js";
import { compileGlob, findGlobTarget } from "../search/patterns.js";
import { comparePaths, stripEol, throwIfAborted, withContext } from "../search/semantics.js";
import type { FindOutcome, FindRequest, GrepMatch, GrepOutcome, GrepRequest, SearchOps } from "../types.js";
import type { SshConnection } from "./connection.js";
import { shellError } from "./errors.js";
import { runRemoteJob, sshArgvRunner } from "./exec.js";
import { parseIdentity } from "./identity.js";

export type SshSearchEngine = "auto" | "native" | "fallback";

/** Files per grep invocation: keeps each argv far below ARG_MAX. */
const GREP_BATCH = 500;

async function remoteType(conn: SshConnection, path: string): Promise<"dir" | "file" | "other"> {
	const r = await conn.use((live) => live.helper.request("k_stat", path));
	if (r.status !== 0) {
		const e = shellError(r.out, path);
		if (e.code === "ENOENT" || e.code === "ENOTDIR") {
			throw new KeelError(
				"NOT_FOUND",
				`No such file or directory: ${path}. Check the path with ls or find.`,
				{ path },
			);
		}
		throw new KeelError("IO_ERROR", `Cannot search ${path}: ${r.out.trim()}`, { path });
	}
	const t = parseIdentity(r.out)?.type;
	return t === "dir" ? "dir" : t === "file" ? "file" : "other";
}

/** Run argv on the host and keep its whole stdout (listings), failing on a non-zero exit. */
async function collect(conn: SshConnection, argv: string[], signal?: AbortSignal): Promise<Buffer> {
	const out: Buffer[] = [];
	let err = "";
	const r = await runRemoteJob(conn, {
		mode: "a",
		cwd: "/",
		words: argv,
		signal,
		onStdout: (c) => out.push(Buffer.from(c)),
		onStderr: (c) => {
			err += c.toString("utf8");
		},
	});
	throwIfAborted(signal);
	// find exits 1 when some directory was unreadable; the rest of the listing still counts.
	if (r.status !== 0 && out.length === 0) {
		throw new KeelError("IO_ERROR", `${argv[0]} failed on the remote host: ${err.trim()}`);
	}
	return Buffer.concat(out);
}

function splitNul(buf: Buffer): string[] {
	return buf
		.toString("utf8")
		.split("\0")
		.filter((s) => s !== "");
}

async function fallbackFind(conn: SshConnection, req: FindRequest): Promise<FindOutcome> {
	throwIfAborted(req.signal);
	const type = await remoteType(conn, req.path);
	if (type !== "dir")
		throw new KeelError("NOT_DIRECTORY", `Not a directory: ${req.path}.`, { path: req.path });
	let matches: (rel: string, name: string) => boolean = () => true;
	if (req.pattern !== "") {
		const target = findGlobTarget(req.pattern);
		const glob = compileGlob(target.glob);
		matches = target.fullPath ? (rel) => glob(rel) : (_rel, name) => glob(name);
	}
	const listing = await collect(
		conn,
		["find", req.path, "-mindepth", "1", "-name", ".git", "-prune", "-o", "-printf", "%y %P\\0"],
		req.signal,
	);
	const paths = splitNul(listing)
		.map((e) => ({ dir: e[0] === "d", rel: e.slice(2) }))
		.filter((e) => matches(e.rel, e.rel.slice(e.rel.lastIndexOf("/") + 1)))
		.map((e) => (e.dir ? `${e.rel}/` : e.rel))
		.sort(comparePaths);
	return { paths: paths.slice(0, req.limit), limitReached: paths.length > req.limit, engine: "find" };
}

/** Files to grep under `dir`, in walk order, with the grep glob applied as rg applies --glob. */
async function grepFiles(conn: SshConnection, req: GrepRequest): Promise<string[]> {
	const listing = await collect(
		conn,
		["find", req.path, "-mindepth", "1", "-name", ".git", "-prune", "-o", "-type", "f", "-printf", "%P\\0"],
		req.signal,
	);
	const override = req.glob ? compileOverride(req.glob) : undefined;
	const keep = (rel: string) => {
		if (!override) return true;
		const parts = rel.split("/");
		for (let i = 1; i < parts.length; i++)
			if (override(parts.slice(0, i).join("/"), true) === "ignore") return false;
		return override(rel, false) !== "ignore";
	};
	return splitNul(listing).filter(keep).sort(comparePaths);
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

async function fallbackGrep(conn: SshConnection, grepP: boolean, req: GrepRequest): Promise<GrepOutcome> {
	throwIfAborted(req.signal);
	const type = await remoteType(conn, req.path);
	// A file named explicitly is searched whatever the glob says.
	const files =
		type === "dir" ? (await grepFiles(conn, req)).map((rel) => joinPath(req.path, rel)) : [req.path];
	const found: GrepMatch[] = [];
	const max = req.limit + 1;
	for (let i = 0; i < files.length && found.length < max; i += GREP_BATCH) {
		await grepBatch(conn, grepP, req, files.slice(i, i + GREP_BATCH), found, max);
	}
	throwIfAborted(req.signal);
	return { matches: found.slice(0, req.limit), limitReached: found.length > req.limit, engine: "grep" };
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
			throw new KeelError("INVALID_PATTERN", `Invalid pattern: ${fatal.join("\n")}`, { details: { stderr } });
		}
	}
}

export interface SshSearchOptions {
	engine?: SshSearchEngine;
}

export function createSshSearch(conn: SshConnection, opts: SshSearchOptions = {}): SearchOps {
	const engine = opts.engine ?? "auto";
	const run = sshArgvRunner(conn);
	let detected: Promise<{ tools: NativeTools; grepP: boolean }> | undefined;
	const detect = () => {
		detected ??= conn
			.use(async (live) => {
				const locate = async (name: string) => {
					const r = await live.helper.request("k_which", name);
					const p = r.out.trim();
					return p.startsWith("/") ? p : undefined;
				};
				const tools = engine === "fallback" ? {} : await detectNativeTools(run, locate);
				return { tools, grepP: live.caps.grepP };
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
			return fallbackGrep(conn, d.grepP, req);
		},
		async find(req) {
			const d = await detect();
			if (d.tools.fd || engine === "native") return createNativeSearch(run, d.tools).find(req);
			return fallbackFind(conn, req);
		},
	};
}
