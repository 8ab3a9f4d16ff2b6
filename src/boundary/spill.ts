/**
 * Spill files: where the full text of a truncated result goes (REQUIREMENTS T5). Owned by a
 * session; the directory is created on first use and is readable through the session's guard.
 */

import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

export class SpillDir {
	private created = false;
	constructor(readonly dir: string) {}

	/** A new spill file, opened for appending synchronously (keeps chunk order without a queue). */
	open(prefix: string): SpillFile {
		if (!this.created) {
			mkdirSync(this.dir, { recursive: true, mode: 0o700 });
			this.created = true;
		}
		const path = join(this.dir, `${prefix}-${Date.now()}-${randomBytes(4).toString("hex")}.log`);
		return new SpillFile(path, openSync(path, "wx", 0o600));
	}
}

export class SpillFile {
	private fd: number | undefined;
	constructor(
		readonly path: string,
		fd: number,
	) {
		this.fd = fd;
	}

	write(chunk: Uint8Array): void {
		if (this.fd === undefined) return;
		let off = 0;
		while (off < chunk.length) off += writeSync(this.fd, chunk, off);
	}

	close(): void {
		if (this.fd === undefined) return;
		closeSync(this.fd);
		this.fd = undefined;
	}
}
