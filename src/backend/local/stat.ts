/** Node's stats as keel's FileStat. */
import type { BigIntStats } from "node:fs";
import type { EntryType, FileStat } from "../types.js";

export function typeOf(s: {
	isFile(): boolean;
	isDirectory(): boolean;
	isSymbolicLink(): boolean;
}): EntryType {
	if (s.isFile()) return "file";
	if (s.isDirectory()) return "dir";
	if (s.isSymbolicLink()) return "symlink";
	return "other";
}

export function toFileStat(s: BigIntStats): FileStat {
	return {
		type: typeOf(s),
		size: Number(s.size),
		mode: Number(s.mode) & 0o7777,
		dev: s.dev,
		ino: s.ino,
		mtimeNs: s.mtimeNs,
		ctimeNs: s.ctimeNs,
		uid: Number(s.uid),
		gid: Number(s.gid),
	};
}
