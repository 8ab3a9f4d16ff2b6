/**
 * The few libc calls Node does not offer, through koffi (native-lib.ts): extended attributes
 * (local/xattrs.ts), flock(2) (local/dir-lock.ts), and the file leases of fcntl(2) and the
 * exchange of renameat2(2) (local/lease.ts). Loaded on first use by each backend, which only a replace makes:
 * `require("koffi")` took 13-19 ms once per process on this machine, then each call is under 1 µs.
 */
import { lazyBinding } from "../native-lib.js";

export interface Libc {
	flistxattr(fd: number, list: Buffer, size: number): number;
	/** Names are passed as their own NUL-terminated bytes: a name need not be UTF-8. */
	fgetxattr(fd: number, name: Buffer, value: Buffer, size: number): number;
	fsetxattr(fd: number, name: Buffer, value: Buffer, size: number, flags: number): number;
	flock(fd: number, operation: number): number;
	/** fcntl(2) with one int argument (F_SETLEASE, F_GETLEASE, F_SETSIG). */
	fcntl(fd: number, cmd: number, arg: number): number;
	/** renameat2(2) (glibc 2.28 and later; undefined in a libc without it). */
	renameat2?: (oldDirFd: number, oldPath: string, newDirFd: number, newPath: string, flags: number) => number;
	/** The errno of the last call made through here, by name ("EWOULDBLOCK", ...). */
	errnoName(): string;
}

/** The binding, or null where koffi cannot load (a platform without its prebuilt binary). */
export type LazyLibc = () => Libc | null;

/** One per backend: loads on the first call, then returns the same binding. */
export function lazyLibc(): LazyLibc {
	return lazyBinding(({ lib, errnoName }) => {
		// Variadic: koffi takes the type of each variable argument with the call.
		const fcntl = lib.func("int fcntl(int fd, int cmd, ...)");
		let renameat2: Libc["renameat2"];
		try {
			renameat2 = lib.func(
				"int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags)",
			);
		} catch {
			renameat2 = undefined; // an older libc: commits rename without the exchange
		}
		return {
			flistxattr: lib.func("long flistxattr(int fd, _Out_ uint8_t *list, size_t size)"),
			fgetxattr: lib.func("long fgetxattr(int fd, const uint8_t *name, _Out_ uint8_t *value, size_t size)"),
			fsetxattr: lib.func(
				"int fsetxattr(int fd, const uint8_t *name, const uint8_t *value, size_t size, int flags)",
			),
			flock: lib.func("int flock(int fd, int operation)"),
			fcntl: (fd: number, cmd: number, arg: number): number => fcntl(fd, cmd, "int", arg),
			renameat2,
			errnoName,
		};
	});
}
