/**
 * A replace must not cut off a process that has the file open for writing (a log being appended
 * to, a server's output): after the rename, what it writes goes to the replaced file, which no
 * name leads to any more, and is lost. A read lease (fcntl F_SETLEASE with F_RDLCK) is granted only
 * while no process has the file open for writing, and the kernel breaks it when one opens the file
 * for writing or truncates it (the opener then waits until the lease is let go). Taken on the
 * commit's handle right before the final check, and checked again as the last step before the
 * rename, it tells whether a writer was there or came in between: either refuses the commit with
 * FILE_BUSY, and the writer's open goes on, on the file it meant, once the handle is closed.
 *
 * A lease needs the file's owner or CAP_LEASE, a file system that grants them, and leases enabled
 * (/proc/sys/fs/leases-enable). Where one cannot be taken, /proc is searched for writers instead
 * (local-holders.ts): that sees only the processes this user may inspect, and not a writer that
 * opens the file between the search and the rename.
 */
import { fstatSync } from "node:fs";
import { constants } from "node:os";
import { posix } from "node:path";
import { openForWritingError, openWriters } from "./local-holders.js";
import type { LazyLibc } from "./local-libc.js";

const F_SETSIG = 10;
const F_SETLEASE = 1024;
const F_GETLEASE = 1025;
const F_RDLCK = 0;
const F_UNLCK = 2;
/** A broken lease signals its holder; SIGIO, the default, would end the process. SIGURG is ignored unless handled. */
const BREAK_SIGNAL = constants.signals.SIGURG;

/** Refuses the commit (FILE_BUSY) if a writer opened the file since the watch began. */
export type WriterCheck = () => void;

/**
 * Watch the file open at `fd` (read-only: the commit's handle on `target`) for writers: throws
 * FILE_BUSY if one has it open now, and returns the check to run last before the rename (one
 * fcntl). The lease ends when `fd` is closed.
 */
export function watchWriters(lib: LazyLibc, fd: number, target: string): WriterCheck {
	const c = lib();
	if (c && c.fcntl(fd, F_SETSIG, BREAK_SIGNAL) === 0) {
		if (c.fcntl(fd, F_SETLEASE, F_RDLCK) === 0) {
			return () => {
				if (c.fcntl(fd, F_GETLEASE, 0) === F_RDLCK) return;
				c.fcntl(fd, F_SETLEASE, F_UNLCK); // the writer waits for that: let it go before the search
				throw busy(fd, target);
			};
		}
		// EAGAIN: open for writing (or leased for writing) by someone. Anything else means no
		// lease can be had here (not the owner, a file system without leases): search /proc.
		if (c.errnoName() === "EAGAIN") throw busy(fd, target);
	}
	const st = fstatSync(fd, { bigint: true });
	const writers = openWriters(posix.basename(target), st.dev, st.ino);
	if (writers.length > 0) throw openForWritingError(target, writers);
	return () => {};
}

function busy(fd: number, target: string) {
	const st = fstatSync(fd, { bigint: true });
	return openForWritingError(target, openWriters(posix.basename(target), st.dev, st.ino));
}
