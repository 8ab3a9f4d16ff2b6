/**
 * The payload store: when a valid payload fails only on its path, its bytes are
 * kept here so the retry sends a corrected path and an opaque `payloadRef`, not the bytes again.
 * Session-owned, on disk (0600 files in a 0700 directory), bounded by count, bytes and age; every
 * read is verified by SHA-256.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { KeelError } from "../boundary/errors.js";
import { sha256 } from "./read-state.js";

export type PayloadKind = "write" | "edit";

/** What every ref `put` returns looks like (anything else was never issued). */
export const PAYLOAD_REF_SHAPE = /^pl_[0-9a-f]{24}$/;

export interface PayloadLimits {
	maxCount: number;
	maxBytes: number;
	maxAgeMs: number;
}

export const DEFAULT_PAYLOAD_LIMITS: PayloadLimits = {
	maxCount: 32,
	maxBytes: 256 * 1024 * 1024,
	maxAgeMs: 30 * 60 * 1000,
};

interface Entry {
	kind: PayloadKind;
	file: string;
	size: number;
	sha256: string;
	createdAt: number;
}

export class PayloadStore {
	private readonly entries = new Map<string, Entry>();
	private bytes = 0;
	private dirReady: Promise<void> | undefined;

	constructor(
		readonly dir: string,
		private readonly limits: PayloadLimits = DEFAULT_PAYLOAD_LIMITS,
		private readonly now: () => number = Date.now,
	) {}

	/** Keep `data`; returns the ref, or undefined when it is larger than the whole store. */
	async put(kind: PayloadKind, data: Uint8Array): Promise<string | undefined> {
		if (data.length > this.limits.maxBytes) return undefined;
		this.dirReady ??= mkdir(this.dir, { recursive: true, mode: 0o700 }).then(() => undefined);
		await this.dirReady;
		const ref = `pl_${randomBytes(12).toString("hex")}`; // PAYLOAD_REF_SHAPE
		const file = join(this.dir, ref);
		await writeFile(file, data, { mode: 0o600, flag: "wx" });
		this.entries.set(ref, { kind, file, size: data.length, sha256: sha256(data), createdAt: this.now() });
		this.bytes += data.length;
		await this.evict();
		return ref;
	}

	/** The verified bytes of `ref`, which must be of `kind`. */
	async get(ref: string, kind: PayloadKind): Promise<Buffer> {
		await this.evict();
		const e = this.entries.get(ref);
		if (!e)
			throw new KeelError("INVALID_ARGS", `payloadRef ${ref} is unknown or expired; send the content again.`);
		if (e.kind !== kind)
			throw new KeelError("INVALID_ARGS", `payloadRef ${ref} holds a ${e.kind} payload, not a ${kind} one.`);
		const data = await readFile(e.file).catch(() => undefined);
		if (!data || sha256(data) !== e.sha256) {
			await this.drop(ref);
			throw new KeelError(
				"INVALID_ARGS",
				`payloadRef ${ref} failed verification and was discarded; send the content again.`,
			);
		}
		return data;
	}

	async drop(ref: string): Promise<void> {
		const e = this.entries.get(ref);
		if (!e) return;
		this.entries.delete(ref);
		this.bytes -= e.size;
		await rm(e.file, { force: true });
	}

	get count(): number {
		return this.entries.size;
	}

	/** Oldest first: expired entries, then whatever exceeds the count or byte bound. */
	private async evict(): Promise<void> {
		const cutoff = this.now() - this.limits.maxAgeMs;
		for (const [ref, e] of this.entries) {
			const over = this.entries.size > this.limits.maxCount || this.bytes > this.limits.maxBytes;
			if (e.createdAt >= cutoff && !over) break;
			await this.drop(ref);
		}
	}

	async close(): Promise<void> {
		this.entries.clear();
		this.bytes = 0;
		await rm(this.dir, { recursive: true, force: true });
	}
}
