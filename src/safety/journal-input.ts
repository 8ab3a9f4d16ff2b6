/**
 * The journal read back as input: keel's own state on disk, so every file is opened without
 * following links and checked by descriptor (a regular file of this user, private, one link,
 * bounded), and every record is checked field by field before recovery acts on it. Apart from
 * recovery, which decides what to do with a record, because these checks are the boundary
 * between what a planted entry can say and what keel will believe.
 */
import { constants } from "node:fs";
import * as fsp from "node:fs/promises";
import { posix } from "node:path";
import { isWithin } from "./canonical-paths.js";
import { BACKUP_NAME, type Intent, type JournalFile } from "./journal.js";

const uid = () => process.geteuid?.() ?? -1;

/** A journal entry that is not a record keel wrote for this user: set aside, never acted on. */
export class Hostile extends Error {}

/** A file of the journal, read through a descriptor opened without following a link and checked. */
export async function readPrivate(path: string, max: number): Promise<Buffer> {
	const h = await fsp.open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
	try {
		const st = await h.stat();
		if (!st.isFile()) throw new Hostile(`${path} is not a regular file`);
		if (uid() >= 0 && st.uid !== uid()) throw new Hostile(`${path} is owned by uid ${st.uid}`);
		if (st.mode & 0o077) throw new Hostile(`${path} has mode ${(st.mode & 0o777).toString(8)}`);
		if (st.nlink !== 1) throw new Hostile(`${path} has ${st.nlink} links`);
		if (st.size > max) throw new Hostile(`${path} is too large`);
		return await h.readFile();
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code === "ELOOP") throw new Hostile(`${path} is a symbolic link`);
		throw e;
	} finally {
		await h.close();
	}
}

/** Why `path` is not a private directory of this user (undefined: it is one); never follows a link. */
export async function privateDir(path: string): Promise<string | undefined> {
	const st = await fsp.lstat(path);
	if (st.isSymbolicLink()) return "a symbolic link";
	if (!st.isDirectory()) return "not a directory";
	if (uid() >= 0 && st.uid !== uid()) return `owned by uid ${st.uid}`;
	if (st.mode & 0o077) return `open to others (mode ${(st.mode & 0o777).toString(8)})`;
	return undefined;
}

const HEX64 = /^[0-9a-f]{64}$/;
const isPath = (p: unknown): p is string =>
	typeof p === "string" &&
	p.startsWith("/") &&
	!p.includes("\0") &&
	posix.normalize(p) === p &&
	p.length < 8192;

/** The record's body checked field by field; throws Hostile naming what is wrong. */
export function checkIntent(body: unknown, backend: string): Intent {
	const r = body as Partial<Intent> | undefined;
	if (r?.version !== 2 || r.purpose !== "intent") throw new Hostile("not an intent record of this version");
	if (r.backend !== backend) throw new Hostile(`written for the ${String(r.backend)} backend`);
	if (!Number.isSafeInteger(r.pid) || typeof r.pidStart !== "string" || !isPath(r.workspace))
		throw new Hostile("malformed writer or workspace");
	if (!Array.isArray(r.roots) || r.roots.length === 0 || !r.roots.every(isPath))
		throw new Hostile("malformed roots");
	if (!Array.isArray(r.dirs) || !r.dirs.every(isPath)) throw new Hostile("malformed directories");
	if (!Array.isArray(r.files) || r.files.length === 0) throw new Hostile("no files");
	const roots = r.roots;
	const inRoots = (p: string) => roots.some((root) => isWithin(root, p) && p !== root);
	for (const f of r.files as JournalFile[]) {
		if (!f || !isPath(f.path) || !inRoots(f.path)) throw new Hostile("names a file outside its roots");
		const b = f.before;
		const a = f.after;
		const beforeOk =
			b?.kind === "absent" ||
			(b?.kind === "link" && typeof b.target === "string") ||
			(b?.kind === "file" &&
				typeof b.sha256 === "string" &&
				HEX64.test(b.sha256) &&
				Number.isInteger(b.mode) &&
				b.mode >= 0 &&
				b.mode <= 0o7777 &&
				typeof b.backup === "string" &&
				BACKUP_NAME.test(b.backup));
		const afterOk =
			a?.kind === "absent" || (a?.kind === "file" && typeof a.sha256 === "string" && HEX64.test(a.sha256));
		if (!beforeOk || !afterOk) throw new Hostile(`malformed entry for ${f.path}`);
	}
	if (!r.dirs.every((d) => roots.some((root) => isWithin(root, d))))
		throw new Hostile("names a directory outside its roots");
	return r as Intent;
}
