/**
 * inotify(7) and poll(2) through koffi, for the kept protected-set scan (protect-cache.ts). Node's
 * fs.watch cannot be used: it adds its watches on the event loop's own schedule, so a change between
 * the listing and the watch could be missed, and it cannot say a queue overflowed. Loaded on the
 * first scan of each backend that reaches the watch threshold (`require("koffi")` costs 13-19 ms
 * once per process; a small workspace never loads it).
 */
import { lazyBinding } from "../native-lib.js";

export interface InotifyLibc {
	/** inotify_init1(IN_NONBLOCK | IN_CLOEXEC): the instance's descriptor, or -1. */
	init(): number;
	/** inotify_add_watch: the watch descriptor, or -1. */
	addWatch(fd: number, path: string, mask: number): number;
	/** read(2) into `buf`: bytes read, or -1 (EAGAIN when the queue is empty). */
	read(fd: number, buf: Buffer, size: number): number;
	/** poll(2) of one descriptor with no wait: its revents, or -1. */
	pollNow(fd: number, events: number): number;
	/** The errno of the last call made through here, by name ("ENOSPC", ...). */
	errnoName(): string;
}

export type LazyInotify = () => InotifyLibc | null;

export const IN = {
	ATTRIB: 0x4,
	MOVED_FROM: 0x40,
	MOVED_TO: 0x80,
	CREATE: 0x100,
	DELETE: 0x200,
	DELETE_SELF: 0x400,
	MOVE_SELF: 0x800,
	UNMOUNT: 0x2000,
	Q_OVERFLOW: 0x4000,
	IGNORED: 0x8000,
	ONLYDIR: 0x1000000,
	DONT_FOLLOW: 0x2000000,
	EXCL_UNLINK: 0x4000000,
	ISDIR: 0x40000000,
} as const;

const IN_NONBLOCK = 0o4000;
const IN_CLOEXEC = 0o2000000;
export const POLLPRI = 0x2;
export const POLLERR = 0x8;

/** One per backend: loads on the first call, then returns the same binding. */
export function lazyInotify(): LazyInotify {
	return lazyBinding(({ lib, errnoName }) => {
		const init = lib.func("int inotify_init1(int flags)");
		const addWatch = lib.func("int inotify_add_watch(int fd, const char *path, uint32_t mask)");
		const read = lib.func("long read(int fd, _Out_ uint8_t *buf, size_t count)");
		const poll = lib.func("int poll(_Inout_ uint8_t *fds, unsigned long nfds, int timeout)");
		const pollfd = Buffer.alloc(8); // struct pollfd { int fd; short events; short revents; }
		return {
			init: () => init(IN_NONBLOCK | IN_CLOEXEC),
			addWatch: (fd: number, path: string, mask: number) => addWatch(fd, path, mask),
			read: (fd: number, buf: Buffer, size: number) => Number(read(fd, buf, size)),
			pollNow: (fd: number, events: number) => {
				pollfd.writeInt32LE(fd, 0);
				pollfd.writeInt16LE(events, 4);
				pollfd.writeInt16LE(0, 6);
				return poll(pollfd, 1, 0) < 0 ? -1 : pollfd.readUInt16LE(6);
			},
			errnoName,
		};
	});
}
