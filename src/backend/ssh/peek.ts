/**
 * The guard's resolution, stat and read in one request. The tools ask FileOps for `realpath`, then
 * `stat` of the canonical path, then `readFile` of it: three round trips. With the file helper,
 * `realpath` sends `k_look`, which resolves the path, stats it and, for a regular file up to
 * LOOK_MAX_BYTES, reads it, name, stat and bytes all of one handle (remote/host/file_helper_look.py) — all at
 * one instant on the host. The answer to the
 * `stat` and the `readFile` that follow is kept here, each handed out once:
 *
 *  - only within PEEK_TTL_MS of the answer (a later call asks the host again);
 *  - never across a change made through this backend: a write, unlink, mkdir, copy, command or
 *    process start empties it;
 *  - `readFile` with `expect` only when the kept stat is that object (else the host is asked).
 *
 * A stat or read served here is the state of the host when `realpath` ran, which lies inside the
 * same tool call: the call sees one consistent instant instead of three.
 */
import type { FileStat } from "../types.js";

/** Regular files up to this size come back with the resolution. */
export const LOOK_MAX_BYTES = 256 * 1024;
/** How long a kept answer may be handed out after it arrived. */
export const PEEK_TTL_MS = 100;

interface Peek {
	stat: FileStat;
	statTaken: boolean;
	data: Buffer | undefined;
	at: number;
}

export class PeekCache {
	private readonly entries = new Map<string, Peek>();

	put(path: string, stat: FileStat, data: Buffer | undefined): void {
		const now = performance.now();
		for (const [k, e] of this.entries) if (now - e.at > PEEK_TTL_MS) this.entries.delete(k);
		this.entries.set(path, { stat, statTaken: false, data, at: now });
	}

	private fresh(path: string): Peek | undefined {
		const e = this.entries.get(path);
		if (!e) return undefined;
		if (performance.now() - e.at > PEEK_TTL_MS) {
			this.entries.delete(path);
			return undefined;
		}
		return e;
	}

	/** The kept stat of `path`, once. */
	takeStat(path: string): FileStat | undefined {
		const e = this.fresh(path);
		if (!e || e.statTaken) return undefined;
		e.statTaken = true;
		if (!e.data) this.entries.delete(path);
		return e.stat;
	}

	/** The kept bytes of `path` and the stat of the handle they were read from, once. */
	takeRead(path: string): { stat: FileStat; data: Buffer } | undefined {
		const e = this.fresh(path);
		if (!e?.data) return undefined;
		this.entries.delete(path);
		return { stat: e.stat, data: e.data };
	}

	/** Something may have changed on the host: nothing kept is handed out any more. */
	clear(): void {
		this.entries.clear();
	}
}
