/**
 * What this session has read (REQUIREMENTS M2): identity and SHA-256 per canonical path.
 */
import * as crypto from "node:crypto";
import { sameIdentity } from "../backend/temp-names.js";
import type { Expected, FileStat } from "../backend/types.js";

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

export class ReadState {
	private readonly records = new Map<string, ReadRecord>();

	record(canonical: string, stat: FileStat, data: Uint8Array): ReadRecord {
		return this.recordHash(canonical, stat, sha256(data));
	}

	recordHash(canonical: string, stat: FileStat, hash: string): ReadRecord {
		const rec = { stat, sha256: hash };
		this.records.set(canonical, rec);
		return rec;
	}

	get(canonical: string): ReadRecord | undefined {
		return this.records.get(canonical);
	}

	forget(canonical: string): void {
		this.records.delete(canonical);
	}

	/** True when the file on disk still has the identity recorded at read time. */
	isFresh(canonical: string, now: FileStat): boolean {
		const rec = this.records.get(canonical);
		return rec !== undefined && sameIdentity(rec.stat, now);
	}
}
