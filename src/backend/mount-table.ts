/**
 * keel's mount table (/proc/self/mountinfo): which file system each mount point holds, and which
 * mounts there are. For bwrap's kept scan (dir-watches.ts: did a change to the table move a path
 * it read?) and grep's lookahead (search/lookahead.ts: is every read below a path local?).
 */
import { readSync } from "node:fs";

/**
 * File systems whose every change goes through this kernel's VFS (so inotify sees it), and whose
 * reads never wait on a server.
 */
export const LOCAL_FS = new Set([
	"ext2",
	"ext3",
	"ext4",
	"xfs",
	"btrfs",
	"tmpfs",
	"ramfs",
	"rootfs",
	"overlay",
	"f2fs",
	"bcachefs",
	"zfs",
	"jfs",
	"reiserfs",
]);

/** A file's whole text, read from `fd` (a /proc file has no size to read up to). */
export function readAll(fd: number): string {
	const chunks: Buffer[] = [];
	for (;;) {
		const b = Buffer.allocUnsafe(64 * 1024);
		const n = readSync(fd, b, 0, b.length, null);
		if (n <= 0) break;
		chunks.push(b.subarray(0, n));
	}
	return Buffer.concat(chunks).toString("utf8");
}

function unescapeOctal(field: string): string {
	return field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

/** Mount id -> mount point. */
export function mountIds(text: string): Map<string, string> {
	const out = new Map<string, string>();
	for (const line of text.split("\n")) {
		const fields = line.split(" ");
		if (fields.length >= 5) out.set(fields[0], unescapeOctal(fields[4]));
	}
	return out;
}

/** Mount point -> file system type, the mount seen last (on top) winning. */
export function parseMountinfo(text: string): Map<string, string> {
	const out = new Map<string, string>();
	for (const line of text.split("\n")) {
		const fields = line.split(" ");
		const dash = fields.indexOf("-");
		if (fields.length < 5 || dash < 0) continue;
		const point = unescapeOctal(fields[4]);
		out.set(point, fields[dash + 1] ?? "");
	}
	return out;
}
