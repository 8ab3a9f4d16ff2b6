/**
 * Names of keel's temp files and identity comparison, shared by every backend.
 * A temp name carries the writer's pid so a sweep can tell a dead writer's leftovers from a live one's.
 */
import { randomBytes } from "node:crypto";
import type { FileStat } from "./types.js";

export const TEMP_PREFIX = ".keel-tmp-";

export function tempNameFor(base: string, pid: number = process.pid): string {
	// Keep the name short: long basenames could push the temp name over NAME_MAX.
	const stem = base.length > 100 ? base.slice(0, 100) : base;
	return `${TEMP_PREFIX}${pid}-${randomBytes(6).toString("hex")}-${stem}`;
}

/** The pid in a keel temp name, or undefined when the name is not one. */
export function tempNamePid(name: string): number | undefined {
	if (!name.startsWith(TEMP_PREFIX)) return undefined;
	const pid = Number.parseInt(name.slice(TEMP_PREFIX.length), 10);
	return Number.isFinite(pid) ? pid : undefined;
}

export function sameIdentity(a: FileStat, b: FileStat): boolean {
	return (
		a.type === b.type &&
		a.dev === b.dev &&
		a.ino === b.ino &&
		a.size === b.size &&
		a.mtimeNs === b.mtimeNs &&
		a.ctimeNs === b.ctimeNs
	);
}

/** Same file system object (dev and inode), whatever its content. */
export function sameObject(a: FileStat, b: FileStat): boolean {
	return a.dev === b.dev && a.ino === b.ino && a.type === b.type;
}
