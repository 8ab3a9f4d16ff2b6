/**
 * Local searches start in what the guard checked: the search directory (or the
 * file) is opened through its root's handle without following links (local/pin.ts), and the
 * engine is given `/proc/<pid>/fd/N` to start from, so rg, fd and the JS walk begin in that very
 * directory even if a directory on its path is swapped for a link meanwhile.
 */
import { closeSync } from "node:fs";
import type { DirPins } from "../local/pin.js";

/** Run `use` with a path naming `path` through a handle; the handle is closed afterwards. */
export async function withPinnedStart<T>(
	pins: DirPins,
	path: string,
	use: (pinned: string | undefined, isDir: boolean) => Promise<T>,
): Promise<T> {
	let fd: number;
	let isDir = true;
	let close: () => void;
	try {
		const dir = pins.open(path);
		fd = dir.fd;
		close = () => dir.release();
	} catch (e) {
		if ((e as NodeJS.ErrnoException).code !== "ENOTDIR") throw e;
		// A file (grep names one): a handle on the file itself.
		const file = pins.openFile(path);
		isDir = false;
		fd = file.fd;
		close = () => closeSync(file.fd);
	}
	try {
		// Another process (rg, fd) reads this process's descriptor through /proc/<pid>.
		return await use(fd >= 0 ? `/proc/${process.pid}/fd/${fd}` : undefined, isDir);
	} finally {
		close();
	}
}
