/**
 * The bytes checkpoints keep, addressed by their SHA-256, in a private directory of keel's state
 * (outside every root, hidden from sandboxed commands). What is read back is input: a blob is used
 * only when its bytes hash to its name, so a planted or damaged blob is a missing one, never
 * content restored into the workspace.
 */
import { createHash, randomBytes } from "node:crypto";
import {
	closeSync,
	constants,
	fstatSync,
	openSync,
	readSync,
	renameSync,
	rmSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import { join } from "node:path";

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export function sha256Of(bytes: Uint8Array): string {
	return createHash("sha256").update(bytes).digest("hex");
}

/** At most `max` bytes from an open descriptor; null when there are more. */
export function readBounded(fd: number, max: number): Buffer | null {
	const size = fstatSync(fd).size;
	let buf = Buffer.allocUnsafe(Math.min(max + 1, Math.max(size + 1, 4096)));
	let len = 0;
	for (;;) {
		if (len === buf.length) {
			if (buf.length > max) return null;
			const grown = Buffer.allocUnsafe(Math.min(max + 1, buf.length * 2));
			buf.copy(grown, 0, 0, len);
			buf = grown;
		}
		const n = readSync(fd, buf, len, buf.length - len, null);
		if (n === 0) break;
		len += n;
		if (len > max) return null;
	}
	return buf.subarray(0, len);
}

export class BlobStore {
	/** Bytes of each blob this store wrote: what it holds, for the budgets. */
	private readonly sizes = new Map<string, number>();
	private total = 0;

	constructor(readonly dir: string) {}

	get bytes(): number {
		return this.total;
	}

	has(sha: string): boolean {
		return this.sizes.has(sha);
	}

	/** Keep `bytes` (whose hash is `sha`); false when `room` bytes are not enough for them. */
	put(sha: string, bytes: Uint8Array, room: number): boolean {
		if (this.sizes.has(sha)) return true;
		if (bytes.length > room) return false;
		const temp = join(this.dir, `.tmp-${randomBytes(6).toString("hex")}`);
		try {
			const fd = openSync(
				temp,
				constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
				0o600,
			);
			try {
				for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off);
			} finally {
				closeSync(fd);
			}
			renameSync(temp, join(this.dir, sha));
		} catch {
			// A full disk (or a store removed under us): the file is kept by identity only, the
			// listing names it as not restorable, and the call it guards goes on.
			rmSync(temp, { force: true });
			return false;
		}
		this.sizes.set(sha, bytes.length);
		this.total += bytes.length;
		return true;
	}

	/** The blob's bytes, or null when it is missing or does not hash to its name. */
	get(sha: string): Buffer | null {
		const size = this.sizes.get(sha);
		if (size === undefined) return null;
		let fd: number;
		try {
			fd = openSync(join(this.dir, sha), READ_FLAGS);
		} catch {
			return null;
		}
		try {
			if (!fstatSync(fd).isFile()) return null;
			const bytes = readBounded(fd, size);
			return bytes && sha256Of(bytes) === sha ? bytes : null;
		} finally {
			closeSync(fd);
		}
	}

	/** Forget and remove every blob not in `keep`. */
	retain(keep: ReadonlySet<string>): void {
		for (const [sha, size] of this.sizes) {
			if (keep.has(sha)) continue;
			this.sizes.delete(sha);
			this.total -= size;
			try {
				unlinkSync(join(this.dir, sha));
			} catch {
				// Already gone: nothing to free.
			}
		}
	}

	/** Remove the store's directory and everything in it. */
	destroy(): void {
		rmSync(this.dir, { recursive: true, force: true });
		this.sizes.clear();
		this.total = 0;
	}
}
