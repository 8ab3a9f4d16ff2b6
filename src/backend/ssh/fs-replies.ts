/**
 * The helpers' replies read back: stat lines, `st ` lines after a commit, and the errors a
 * compare-and-swap or an identity check turns into. Shared by fs.ts and fs-fast.ts.
 */
import { pathFact } from "../../boundary/path-facts.js";
import { swappedDir } from "../changed-errors.js";
import type { FileStat } from "../types.js";
import { shellError, sysError } from "./errors.js";
import { parseIdentity } from "./identity.js";
import { ask, type Live } from "./live.js";
import type { HelperReply } from "./shell.js";

export { changed, changedWhileRead, sourceChanged, swapped, swappedDir } from "../changed-errors.js";

/** A failed helper reply as an error: a swap seen on the way, else errno-style. */
export function replyError(out: string, path: string): Error {
	if (out.trim() === "swapped") return swappedDir(path);
	const attr = /^attrs (.*)$/m.exec(out);
	if (attr) return pathFact("attributes-not-kept", path, { detail: `give its replacement (${attr[1]})` });
	return shellError(out, path);
}

/** Run a helper function; a non-zero status becomes an errno-style error about `path`. */
export async function helper(live: Live, path: string, fn: string, ...args: string[]): Promise<string> {
	const r = await ask(live, fn, ...args);
	if (r.status !== 0) throw replyError(r.out, path);
	return r.out;
}

export function statFrom(out: string, path: string): FileStat {
	const st = parseIdentity(out.split("\n").find((l) => l.trim() !== "") ?? "");
	if (!st) throw sysError("EIO", `unexpected stat output: ${out.trim().slice(0, 200)}`, path);
	return st;
}

/** The stat after a `st ` line of a helper's output. */
export function statAfter(out: string, path: string): FileStat {
	const line = out.split("\n").find((l) => l.startsWith("st "));
	if (!line) throw sysError("EIO", `unexpected output: ${out.trim().slice(0, 200)}`, path);
	return statFrom(line.slice(3), path);
}

export function hasStat(r: HelperReply): boolean {
	return r.status === 0 && /^st /m.test(r.out);
}

export async function lstatOf(live: Live, p: string): Promise<FileStat> {
	return statFrom(await helper(live, p, "k_lstat", p), p);
}
