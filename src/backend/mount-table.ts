/**
 * keel's mount table (/proc/self/mountinfo): which file system each mount point holds, and which
 * mounts there are. For bwrap's kept scan (dir-watches.ts: did a change to the table move a path
 * it read?) and grep's lookahead (onlyLocalFs: are the path, all below it and all above it local?).
 */
import { readFileSync, readSync } from "node:fs";

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

/**
 * Whether `dir`, everything below it and the directories above it (whose ignore files count) lie
 * on local filesystems (/proc/self/mountinfo): a mount inside it (FUSE, NFS, anything a stalled
 * server could hold) or a remote filesystem at or above it means no lookahead. Read on every
 * grep: a mount may come at any time.
 */
export function onlyLocalFs(dir: string): boolean {
	try {
		return localThroughout(dir, parseMountinfo(readFileSync("/proc/self/mountinfo", "utf8")));
	} catch {
		return false;
	}
}

/** onlyLocalFs on a mount table (mount point to file system type). */
export function localThroughout(dir: string, mounts: ReadonlyMap<string, string>): boolean {
	const under = `${dir}/`;
	let holding = false;
	for (const [point, fs] of mounts) {
		if (point.startsWith(under)) return false;
		const holds = point === "/" || point === dir || under.startsWith(`${point}/`);
		if (holds && !LOCAL_FS.has(fs)) return false;
		holding ||= holds;
	}
	return holding;
}

/** Whether `path` is a mount point (a bind-mounted file too): rename(2) over it fails with EBUSY, always. */
export function isMountPoint(path: string): boolean {
	try {
		return [...mountIds(readFileSync("/proc/self/mountinfo", "utf8")).values()].includes(path);
	} catch {
		return false;
	}
}
