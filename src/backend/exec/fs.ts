/**
 * FileOps over an exec transport: one script per operation (scripts.ts), file bytes raw over
 * stdin/stdout. Writes keep local-fs's guarantees, done on the target: exclusive same-directory
 * temp file, content verified by hash (a transport that died mid-stream never commits a short
 * file), fsync, then link (no-clobber) or hash + identity + rename (compare-and-swap), fsync of the
 * directory. The check-to-rename window is wider than local's (a process start for `mv`), still
 * failing closed for every change that lands before the check. A replace keeps the owner and
 * refuses an unwritable file; where the target has python3 it also keeps the extended attributes,
 * and the check and the rename run in that one process (replace-py.ts).
 */
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { pathFact } from "../../boundary/path-facts.js";
import { sourceChanged, writeCollision } from "../changed-errors.js";
import { parseReadCurrentReply } from "../remote/read-current-reply.js";
import { tempNameFor } from "../temp-names.js";
import type { DirEntry, EntryType, FileOps, FileStat, ReadCurrent, WriteOptions } from "../types.js";
import { EXIT, keepRefused, scriptError } from "./errors.js";
import { readCurrentScript } from "./read-current.js";
import {
	hashFileScript,
	lstatScript,
	mkdirpScript,
	readdirScript,
	readFileScript,
	readlinkScript,
	realpathScript,
	statScript,
	sweepScript,
	unlinkScript,
	writeScript,
} from "./scripts.js";
import { identity, parseStat, type Target } from "./target.js";
import { runScript, type ScriptResult } from "./transport.js";

/** Temp files older than this (minutes without a write) are a dead writer's. */
const SWEEP_AGE_MINUTES = 15;
/** The pid in a remote temp name: 0, which a local sweep never takes for a dead process. */
const REMOTE_PID = 0;

const TYPE_LETTERS: Record<string, EntryType> = { f: "file", d: "dir", l: "symlink" };

function stripNul(b: Buffer): string {
	const s = b.toString("utf8");
	return s.endsWith("\0") ? s.slice(0, -1) : s;
}

/** `dir` and its ancestors, deepest first, without "/". */
function ancestors(dir: string): string[] {
	const out: string[] = [];
	for (let d = dir; d !== "/" && d !== "."; d = posix.dirname(d)) out.push(d);
	return out;
}

function sha256(data: Uint8Array): string {
	return createHash("sha256").update(data).digest("hex");
}

export function createExecFs(target: Target): FileOps {
	const { transport } = target;
	/** Run a script; a non-zero exit becomes the matching error for `path`. */
	async function run(
		script: string,
		args: string[],
		path: string,
		stdin?: Uint8Array,
	): Promise<ScriptResult> {
		const r = await runScript(transport, script, args, { stdin });
		if (r.exitCode !== 0) throw scriptError(r, path);
		return r;
	}

	async function commit(
		target_: string,
		opts: WriteOptions,
		fill: { data: Uint8Array } | { source: string; sourceStat: FileStat; sha256: string },
	): Promise<FileStat> {
		const { fmt, precise, python } = await target.info();
		const dir = posix.dirname(target_);
		const temp = posix.join(dir, tempNameFor(posix.basename(target_), REMOTE_PID));
		const expect = opts.expect === "absent" ? "absent" : opts.expect ? "cas" : "none";
		const cas = typeof opts.expect === "object" ? opts.expect : undefined;
		const copy = "source" in fill ? fill : undefined;
		const args = [
			target_,
			temp,
			(opts.mode ?? 0o644).toString(8),
			expect,
			cas?.sha256 ?? "",
			cas ? identity(cas.stat, precise) : "",
			copy ? copy.sha256 : sha256((fill as { data: Uint8Array }).data),
			copy?.source ?? "",
			copy ? identity(copy.sourceStat, precise) : "",
			python,
			...(opts.mkdirs ? ancestors(dir) : []),
		];
		const r = await runScript(transport, writeScript(fmt, precise), args, {
			stdin: copy ? undefined : (fill as { data: Uint8Array }).data,
		});
		if (r.exitCode === 0) return parseStat(r.stdout.toString("utf8"));
		switch (r.exitCode) {
			case EXIT.EXISTS:
				throw writeCollision(target_);
			case EXIT.SOURCE_CHANGED:
				// Only a copy has a source; the status is the copy script's.
				throw sourceChanged(copy?.source ?? target_, false);
			case EXIT.DENIED:
				throw keepRefused(target_, r.stderr);
			case EXIT.PARTIAL:
				throw pathFact("arrived-incomplete", target_);
			default:
				throw scriptError(r, target_);
		}
	}

	return {
		async realpath(p) {
			return stripNul((await run(realpathScript(), [p], p)).stdout);
		},
		async lstat(p) {
			const { fmt } = await target.info();
			return parseStat((await run(lstatScript(fmt), [p], p)).stdout.toString("utf8"));
		},
		async stat(p) {
			const { fmt } = await target.info();
			return parseStat((await run(statScript(fmt), [p], p)).stdout.toString("utf8"));
		},
		async readlink(p) {
			return stripNul((await run(readlinkScript(), [p], p)).stdout);
		},
		async readFile(p, expect) {
			const args = expect ? [p, String(expect.dev), String(expect.ino)] : [p];
			return (await run(readFileScript(), args, p)).stdout;
		},
		readCurrent: (async (p: string, maxBytes?: number) => {
			const { fmt } = await target.info();
			const bound = maxBytes === undefined ? "" : String(maxBytes);
			const r = await run(readCurrentScript(fmt), [p, bound], p);
			return parseReadCurrentReply(r.stdout, p, maxBytes);
		}) as ReadCurrent,
		async readdir(p, expect): Promise<DirEntry[]> {
			const r = await run(readdirScript(), [p, expect ? `${expect.dev} ${expect.ino}` : ""], p);
			const text = r.stdout.toString("utf8");
			if (text === "") return [];
			return text
				.slice(0, text.endsWith("\0") ? -1 : undefined)
				.split("\0")
				.map((rec) => ({ name: rec.slice(1), type: TYPE_LETTERS[rec[0]] ?? "other" }));
		},
		async mkdirp(p) {
			await run(mkdirpScript(), [p], p);
		},
		writeFile(p, data, opts = {}) {
			return commit(p, opts, { data });
		},
		copyFile(source, p, opts) {
			return commit(p, opts, { source, sourceStat: opts.sourceStat, sha256: opts.sha256 });
		},
		async hashFile(p) {
			return (await run(hashFileScript(), [p], p)).stdout.toString("utf8");
		},
		async unlink(p, expect) {
			const { fmt, precise } = await target.info();
			await run(unlinkScript(fmt), [p, posix.dirname(p), expect ? identity(expect, precise) : ""], p);
		},
		async sweepTemps(dir) {
			const r = await runScript(transport, sweepScript(), [dir, String(SWEEP_AGE_MINUTES)]);
			if (r.exitCode !== 0) return 0;
			return r.stdout.toString("utf8").split("\0").length - 1;
		},
	};
}
