/**
 * A replace must not cut off a process that has the file open for writing (a log being appended
 * to, a server's output): after the rename, what it writes goes to the replaced file, which no
 * name leads to any more, and is lost. A read lease (fcntl F_SETLEASE with F_RDLCK) is granted only
 * while no process has the file open for writing, and the kernel breaks it when one opens the file
 * for writing or truncates it; the opener then waits until the lease is let go (the handle closed).
 *
 * So the swap (`swapWatched`) takes a lease on the commit's handle right before the final check
 * (a writer there now: FILE_BUSY), and looks at it again right after the swap, which is
 * renameat2's exchange: the replaced file still has a name (the temp file's), so a writer whose
 * open arrived since the lease was taken finds the file put back in place for it (FILE_BUSY)
 * instead of losing what it writes. Every refusal names the writers it can find in /proc.
 *
 * A lease needs the file's owner or CAP_LEASE, a file system that grants them, and leases enabled
 * (/proc/sys/fs/leases-enable). Where one cannot be taken, /proc is searched for writers instead
 * (local/holders.ts): that sees only the processes this user may inspect, and not a writer that
 * opens the file after the search. Where the exchange is not supported (an older libc, a file
 * system without it) the swap is a rename, and the look comes right before it instead.
 */
import { fstatSync, renameSync, unlinkSync } from "node:fs";
import { constants } from "node:os";
import { posix } from "node:path";
import type { KeelError } from "../../boundary/errors.js";
import { openForWritingError, openWriters } from "./holders.js";
import type { LazyLibc, Libc } from "./libc.js";

const F_SETSIG = 10;
const F_SETLEASE = 1024;
const F_GETLEASE = 1025;
const F_RDLCK = 0;
const F_UNLCK = 2;
const AT_FDCWD = -100;
const RENAME_EXCHANGE = 2;
/** A broken lease signals its holder; SIGIO, the default, would end the process. SIGURG is ignored unless handled. */
const BREAK_SIGNAL = constants.signals.SIGURG;

interface WriterWatch {
	/** No writer opened the file since the watch began (one fcntl; always true without a lease). */
	quiet(): boolean;
	/** The refusal, once any writer waiting on the lease has been let go on. */
	refusal(): KeelError;
}

function busy(fd: number, target: string): KeelError {
	const st = fstatSync(fd, { bigint: true });
	return openForWritingError(target, openWriters(posix.basename(target), st.dev, st.ino));
}

/** Throws FILE_BUSY if a process has the file open at `fd` (read-only) for writing now. */
function watchWriters(c: Libc | null, fd: number, target: string): WriterWatch {
	if (c && c.fcntl(fd, F_SETSIG, BREAK_SIGNAL) === 0) {
		if (c.fcntl(fd, F_SETLEASE, F_RDLCK) === 0) {
			return {
				quiet: () => c.fcntl(fd, F_GETLEASE, 0) === F_RDLCK,
				refusal: () => {
					c.fcntl(fd, F_SETLEASE, F_UNLCK);
					return busy(fd, target);
				},
			};
		}
		// EAGAIN: open for writing (or leased for writing) by someone. Anything else means no
		// lease can be had here (not the owner, a file system without leases): search /proc.
		if (c.errnoName() === "EAGAIN") throw busy(fd, target);
	}
	const st = fstatSync(fd, { bigint: true });
	const writers = openWriters(posix.basename(target), st.dev, st.ino);
	if (writers.length > 0) throw openForWritingError(target, writers);
	return { quiet: () => true, refusal: () => busy(fd, target) };
}

/** Exchange the two names; false where the exchange is not supported here. */
function exchange(c: Libc | null, a: string, b: string): boolean {
	if (!c?.renameat2) return false;
	if (c.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) === 0) return true;
	const why = c.errnoName();
	if (why === "EINVAL" || why === "ENOSYS" || why === "EOPNOTSUPP" || why === "ENOTSUP") return false;
	throw Object.assign(new Error(`renameat2: ${why}`), { code: why, path: b });
}

/** The names of one swap: the new file's, the target's in the pinned directory, the target for messages. */
export interface SwapNames {
	temp: string;
	at: string;
	target: string;
}

/**
 * Put the file at `temp` in the place of `at`, whose current file is open (read-only) at `fd`,
 * unless a process holds that file open for writing (FILE_BUSY). `finalCheck` (constant-cost
 * checks of the compare-and-swap, which throw) runs under the lease; after it only the swap
 * (`beforeSwap` is a test's way in there). On FILE_BUSY `temp` still holds the new file.
 */
export function swapWatched(
	lib: LazyLibc,
	fd: number,
	{ temp, at, target }: SwapNames,
	finalCheck: () => void,
	beforeSwap?: (target: string) => void,
): void {
	const c = lib();
	const writers = watchWriters(c, fd, target);
	finalCheck();
	beforeSwap?.(target);
	if (!exchange(c, temp, at)) {
		if (!writers.quiet()) throw writers.refusal();
		renameSync(temp, at);
		return;
	}
	// One look, after the exchange, sees a writer that came at any time since the lease was taken.
	if (!writers.quiet()) {
		// Its open waits on the lease, on the file it meant: put that file back under its name.
		let putBack = false;
		try {
			putBack = exchange(c, temp, at);
		} catch {}
		if (putBack) throw writers.refusal();
		// Not possible to put back (the temp name was taken away meanwhile): the replace stands.
	}
	try {
		unlinkSync(temp); // the replaced file, now under the temp name
	} catch {}
}
