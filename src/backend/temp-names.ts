/**
 * Names of keel's temp files and identity comparison, shared by every backend.
 * A temp name carries the writer's pid so a sweep can tell a dead writer's leftovers from a live one's.
 */
import { randomUUID } from "node:crypto";
import type { FileStat } from "./types.js";

export const TEMP_PREFIX = ".keel-tmp-";
/** Bytes of randomness in a temp name (written as twice as many hex digits). */
const RANDOM_BYTES = 6;
const MAX_STEM = 100;
/** Exactly what tempNameFor writes: prefix, decimal pid, 12 lowercase hex digits, the target's name. */
const TEMP_NAME = new RegExp(`^\\.keel-tmp-([1-9][0-9]{0,9})-[0-9a-f]{${RANDOM_BYTES * 2}}-(.+)$`, "s");

/**
 * RANDOM_BYTES * 2 random hex digits. randomUUID draws from a buffered CSPRNG pool (randomBytes
 * calls into OpenSSL each time, ~3× the cost); a v4 UUID's first 12 hex digits are all random.
 */
function randomHex(): string {
	const u = randomUUID();
	return `${u.slice(0, 8)}${u.slice(9, 13)}`;
}

export function tempNameFor(base: string, pid: number = process.pid): string {
	// Keep the name short: long basenames could push the temp name over NAME_MAX.
	const stem = base.length > MAX_STEM ? base.slice(0, MAX_STEM) : base;
	return `${TEMP_PREFIX}${pid}-${randomHex()}-${stem}`;
}

/**
 * The writer's pid when `name` has exactly the form tempNameFor writes, else undefined. A user's
 * file that merely starts like one (`.keel-tmp-99999999-notes.txt`) is not a temp name.
 */
export function tempNamePid(name: string): number | undefined {
	const m = TEMP_NAME.exec(name);
	if (!m || m[2].length > MAX_STEM || m[2].includes("/")) return undefined;
	return Number(m[1]);
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
