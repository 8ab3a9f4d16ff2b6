/**
 * The stat line: `stat -c '%f %s %d %i %.9Y %.9Z'` (raw mode in hex, size, dev, ino, mtime,
 * ctime; whole seconds where stat cannot print fractions), the fields the local backend compares.
 * Every host program prints it (the sh library, the Python helpers) and compares an entry with
 * one keel formats here: the one encoding of a file's identity for the exec and ssh backends.
 */
import type { EntryType, FileStat } from "./types.js";

const NS = 1_000_000_000n;
const S_IFMT = 0o170000;

/** The S_IFMT bits of each type a line can be rebuilt for ("other" has none: it fails closed). */
export const TYPE_BITS: Partial<Record<EntryType, number>> = {
	file: 0o100000,
	dir: 0o040000,
	symlink: 0o120000,
};

export function typeOfMode(raw: number): EntryType {
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

function parseTime(text: string): bigint {
	const [sec, frac = ""] = text.split(".");
	return BigInt(sec) * NS + BigInt(frac.padEnd(9, "0").slice(0, 9) || "0");
}

/** Nanoseconds as stat prints them: `SEC.NNNNNNNNN`, or whole seconds. */
export function formatTime(ns: bigint, fractions: boolean): string {
	const sec = ns / NS;
	return fractions ? `${sec}.${String(ns % NS).padStart(9, "0")}` : String(sec);
}

/** Each field as the host programs print it: hex mode, decimal size, dev, ino, then two times. */
const FIELD_SHAPES = [
	/^[0-9a-f]{1,8}$/,
	/^\d{1,20}$/,
	/^\d{1,20}$/,
	/^\d{1,20}$/,
	/^-?\d{1,20}(\.\d{1,9})?$/,
];

/** A FileStat from one stat line; undefined when the line is not one (a field out of shape included). */
export function parseStatLine(line: string): FileStat | undefined {
	const f = line.trim().split(" ");
	if (f.length !== 6 || f.some((field, i) => !FIELD_SHAPES[Math.min(i, 4)].test(field))) return undefined;
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
 * The stat line the host programs would print for an entry with this stat, for them to compare
 * with what is there now; undefined for a type it cannot be rebuilt for (compared as changed:
 * fail closed).
 */
export function formatStatLine(st: FileStat, fractions: boolean): string | undefined {
	const bits = TYPE_BITS[st.type];
	if (bits === undefined) return undefined;
	const t = (ns: bigint) => formatTime(ns, fractions);
	return `${(bits | st.mode).toString(16)} ${st.size} ${st.dev} ${st.ino} ${t(st.mtimeNs)} ${t(st.ctimeNs)}`;
}
