/**
 * File identity on the remote host. SFTP v3 attributes have no device, inode or nanosecond times,
 * so identity comes from the remote `stat -c '%f %s %d %i %.9Y %.9Z'` (seconds only where stat
 * cannot print fractions): the same fields the local backend compares.
 */
import { formatTime, parseStatLine, TYPE_BITS, typeOfMode } from "../stat-line.js";
import type { EntryType, FileStat } from "../types.js";

export function typeOfSftpMode(mode: number): EntryType {
	return typeOfMode(mode);
}

/** A FileStat from one line of the remote stat; undefined when the line is not one. */
export const parseIdentity = parseStatLine;

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
