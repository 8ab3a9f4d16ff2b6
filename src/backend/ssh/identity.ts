/**
 * File identity on the remote host. SFTP v3 attributes have no device, inode or nanosecond times,
 * so identity comes from the remote `stat -c '%f %s %d %i %.9Y %.9Z'` (seconds only where stat
 * cannot print fractions): the same fields the local backend compares.
 */
import type { EntryType, FileStat } from "../types.js";

const S_IFMT = 0o170000;
const TYPE_BITS: Partial<Record<EntryType, number>> = { file: 0o100000, dir: 0o040000, symlink: 0o120000 };

function typeOfMode(raw: number): EntryType {
	switch (raw & S_IFMT) {
		case 0o100000:
			return "file";
		case 0o040000:
			return "dir";
		case 0o120000:
			return "symlink";
		default:
			return "other";
	}
}

export function typeOfSftpMode(mode: number): EntryType {
	return typeOfMode(mode);
}

function parseTime(text: string): bigint {
	const [sec, frac = ""] = text.split(".");
	return BigInt(sec) * 1_000_000_000n + BigInt(frac.padEnd(9, "0").slice(0, 9) || "0");
}

function formatTime(ns: bigint, fractions: boolean): string {
	const sec = ns / 1_000_000_000n;
	if (!fractions) return String(sec);
	return `${sec}.${String(ns % 1_000_000_000n).padStart(9, "0")}`;
}

/** A FileStat from one line of the remote stat; undefined when the line is not one. */
export function parseIdentity(line: string): FileStat | undefined {
	const f = line.trim().split(" ");
	if (f.length !== 6 || !/^[0-9a-f]+$/.test(f[0])) return undefined;
	const raw = Number.parseInt(f[0], 16);
	return {
		type: typeOfMode(raw),
		size: Number(f[1]),
		mode: raw & 0o7777,
		dev: BigInt(f[2]),
		ino: BigInt(f[3]),
		mtimeNs: parseTime(f[4]),
		ctimeNs: parseTime(f[5]),
	};
}

/**
 * The remote stat line `st` would have produced, for the shell to compare with what is there now;
 * undefined for types it cannot be rebuilt for (those compare as changed: fail closed).
 */
export function formatIdentity(st: FileStat, fractions: boolean): string | undefined {
	const bits = TYPE_BITS[st.type];
	if (bits === undefined) return undefined;
	return [
		(bits | st.mode).toString(16),
		st.size,
		st.dev,
		st.ino,
		formatTime(st.mtimeNs, fractions),
		formatTime(st.ctimeNs, fractions),
	].join(" ");
}
