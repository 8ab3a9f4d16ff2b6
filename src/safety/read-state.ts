/**
 * What this session has read: identity and SHA-256 per canonical path.
 */
import * as crypto from "node:crypto";
import { sameIdentity } from "../backend/temp-names.js";
import type { Expected, FileStat, LaterDigest } from "../backend/types.js";

export interface ReadRecord {
	stat: FileStat;
	sha256: string;
}

/** crypto.hash (Node 20.12+): one call, no Hash object; half the cost of createHash on a small file. */
const oneShot = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: "hex") => string }).hash;

export function sha256(data: Uint8Array): string {
	if (oneShot) return oneShot("sha256", data, "hex");
	return crypto.createHash("sha256").update(data).digest("hex");
}

/**
 * What a compare-and-swap against `bytes` (read with identity `stat`) expects. The caller must not
 * change `bytes` afterwards. Their hash is computed only when a backend asks for it: local files
 * compare small files byte for byte, so the hash of what was read is usually never needed.
 */
export function expectBytes(stat: FileStat, bytes: Uint8Array): Expected {
	let hash: string | undefined;
	return {
		stat,
		bytes,
		get sha256() {
			hash ??= sha256(bytes);
			return hash;
		},
	};
}

/**
 * The hash of small recorded data waits until something asks for it (a write's compare-and-swap,
 * the file tool's check): an edit after an edit compares bytes and never does. Such
 * records keep their data's buffer meanwhile; all of them in the map together keep at most
 * PENDING_BYTES (counting whole underlying buffers), and past that the oldest is hashed and lets
 * its buffer go. Data in a buffer larger than LAZY_MAX_BYTES is hashed at once.
 */
const LAZY_MAX_BYTES = 64 * 1024;
const PENDING_BYTES = 1024 * 1024;

export class ReadState {
	private readonly records = new Map<string, ReadRecord>();
	/** Records in `records` whose hash is not computed yet, oldest first, with the bytes each holds. */
	private readonly pending = new Map<ReadRecord, number>();
	private pendingBytes = 0;
	/** Records whose hash a backend takes later, to tell it when they are replaced. */
	private readonly later = new WeakMap<ReadRecord, LaterDigest>();

	/** Record `data` as what `canonical` holds; the caller must not change `data` afterwards. */
	record(canonical: string, stat: FileStat, data: Uint8Array): ReadRecord {
		const holds = data.buffer.byteLength;
		if (holds > LAZY_MAX_BYTES) return this.recordHash(canonical, stat, sha256(data));
		let bytes: Uint8Array | undefined = data;
		let hash: string | undefined;
		const state = this;
		const rec: ReadRecord = {
			stat,
			get sha256() {
				if (hash === undefined) {
					hash = sha256(bytes!);
					bytes = undefined;
					state.unpend(rec);
				}
				return hash;
			},
		};
		this.put(canonical, rec);
		this.pending.set(rec, holds);
		this.pendingBytes += holds;
		for (const [oldest] of this.pending) {
			if (this.pendingBytes <= PENDING_BYTES) break;
			void oldest.sha256; // hashes it, and unpends it
		}
		return rec;
	}

	/** A hash known, or one a backend takes later (LaterDigest: a streamed read's held bytes). */
	recordHash(canonical: string, stat: FileStat, hash: string | LaterDigest): ReadRecord {
		const rec =
			typeof hash === "string"
				? { stat, sha256: hash }
				: {
						stat,
						get sha256() {
							return hash.hex;
						},
					};
		if (typeof hash !== "string") this.later.set(rec, hash);
		this.put(canonical, rec);
		return rec;
	}

	get(canonical: string): ReadRecord | undefined {
		return this.records.get(canonical);
	}

	forget(canonical: string): void {
		const old = this.records.get(canonical);
		if (old) this.unpend(old);
		this.records.delete(canonical);
	}

	/** True when the file on disk still has the identity recorded at read time. */
	isFresh(canonical: string, now: FileStat): boolean {
		const rec = this.records.get(canonical);
		return rec !== undefined && sameIdentity(rec.stat, now);
	}

	/** Bytes of recorded data not hashed yet (for tests). */
	get pendingSize(): number {
		return this.pendingBytes;
	}

	/**
	 * A record replaced in the map leaves the count: whoever still holds it (a call in flight) can
	 * still ask for its hash, and once nobody does, its buffer goes with it.
	 */
	private put(canonical: string, rec: ReadRecord): void {
		const old = this.records.get(canonical);
		if (old) this.unpend(old);
		this.records.set(canonical, rec);
	}

	private unpend(rec: ReadRecord): void {
		this.later.get(rec)?.superseded?.();
		const holds = this.pending.get(rec);
		if (holds === undefined) return;
		this.pending.delete(rec);
		this.pendingBytes -= holds;
	}
}
