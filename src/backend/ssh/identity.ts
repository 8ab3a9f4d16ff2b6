/**
 * File identity on the remote host. SFTP v3 attributes have no device, inode or nanosecond times,
 * so identity comes from the host programs' stat line (stat-line.ts).
 */
import { formatStatLine, parseStatLine, typeOfMode } from "../stat-line.js";
import type { EntryType } from "../types.js";

export function typeOfSftpMode(mode: number): EntryType {
	return typeOfMode(mode);
}

/** A FileStat from one line of the remote stat; undefined when the line is not one. */
export const parseIdentity = parseStatLine;

/** The stat line for the host to compare with what is there now (undefined: compared as changed). */
export const formatIdentity = formatStatLine;
