/**
 * Who holds a file, read from /proc: the processes that have it open for writing (each
 * descriptor's target, then its access mode in fdinfo) and the holders of a flock(2) on it
 * (/proc/locks). Used to name them when a commit is refused, and to find a writer at all where no
 * lease can be taken (local/lease.ts). It sees only what this process may inspect: as a user
 * other than root, that user's own processes.
 */
import { readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { posix } from "node:path";
import type { Holder as HolderFact } from "../../boundary/fact-extras.js";
import { type PathFactError, pathFact } from "../../boundary/path-facts.js";

/** A process holding a file or lock; its command name (/proc/PID/comm) is "" when it is gone or hidden. */
export type Holder = Required<HolderFact>;

function commandOf(pid: number): string {
	try {
		return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
	} catch {
		return "";
	}
}

function pids(): number[] {
	try {
		return readdirSync("/proc")
			.filter((n) => /^\d+$/.test(n))
			.map(Number);
	} catch {
		return [];
	}
}

/** Whether descriptor `fd` of `pid` is open for writing (O_WRONLY or O_RDWR in its fdinfo). */
function openForWriting(pid: number, fd: string): boolean {
	try {
		const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"));
		return flags !== null && (Number.parseInt(flags[1] as string, 8) & 3) !== 0;
	} catch {
		return false;
	}
}

/**
 * The processes (this one included) that have the file `dev`/`ino`, named `name`, open for
 * writing. Only descriptors whose target ends in that name are stat'ed: a stat of an unrelated
 * one could wait on a hung network mount.
 */
export function openWriters(name: string, dev: bigint, ino: bigint): Holder[] {
	const found: Holder[] = [];
	for (const pid of pids()) {
		let fds: string[];
		try {
			fds = readdirSync(`/proc/${pid}/fd`);
		} catch {
			continue; // gone, or another user's
		}
		for (const fd of fds) {
			const link = `/proc/${pid}/fd/${fd}`;
			try {
				const to = readlinkSync(link);
				if (posix.basename(to.replace(/ \(deleted\)$/, "")) !== name) continue;
				const st = statSync(link, { bigint: true });
				if (st.dev !== dev || st.ino !== ino || !openForWriting(pid, fd)) continue;
			} catch {
				continue;
			}
			found.push({ pid, command: commandOf(pid) });
			break;
		}
	}
	return found;
}

/** The kernel's major and minor numbers of a device number as stat(2) gives it (glibc's encoding). */
function majorMinor(dev: bigint): [bigint, bigint] {
	return [((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn), (dev & 0xffn) | ((dev >> 12n) & ~0xffn)];
}

/** The processes holding a flock(2) on the file `dev`/`ino` (waiters are not listed). */
export function flockHolders(dev: bigint, ino: bigint): Holder[] {
	let table: string;
	try {
		table = readFileSync("/proc/locks", "utf8");
	} catch {
		return [];
	}
	const [major, minor] = majorMinor(dev);
	const found: Holder[] = [];
	for (const m of table.matchAll(/^\d+: FLOCK\s+\S+\s+\S+\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/gm)) {
		const [, pid, maj, min, inode] = m as unknown as [string, string, string, string, string];
		if (BigInt(`0x${maj}`) !== major || BigInt(`0x${min}`) !== minor || BigInt(inode) !== ino) continue;
		const n = Number(pid);
		if (n > 0) found.push({ pid: n, command: commandOf(n) });
	}
	return found;
}

/** The refusal of a replace while another process has the file open for writing. */
export function openForWritingError(target: string, holders: Holder[]): PathFactError {
	return pathFact("open-for-writing", target, { holders });
}
