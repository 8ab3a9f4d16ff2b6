/**
 * contentRef handles: every successful write or edit names the file it produced
 * with its identity and hash. Writing the same content elsewhere takes the handle; the backend
 * copies file to file and verifies the hash, so the bytes never pass through the JS heap. A handle
 * dies when its source file changes.
 */
import { randomBytes } from "node:crypto";
import type { FileStat } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";

export interface ContentSource {
	canonical: string;
	stat: FileStat;
	sha256: string;
}

const MAX_REFS = 256;

/** What every ref `issue` returns looks like (anything else was never issued). */
export const CONTENT_REF_SHAPE = /^cr_[0-9a-f]{24}$/;

export class ContentRefs {
	private readonly refs = new Map<string, ContentSource>();

	issue(source: ContentSource): string {
		const ref = `cr_${randomBytes(12).toString("hex")}`; // CONTENT_REF_SHAPE
		this.refs.set(ref, source);
		if (this.refs.size > MAX_REFS) this.refs.delete(this.refs.keys().next().value!);
		return ref;
	}

	get(ref: string): ContentSource {
		const src = this.refs.get(ref);
		if (!src)
			throw new KeelError(
				"INVALID_ARGS",
				`contentRef ${ref} is unknown or expired; send the content instead.`,
			);
		return src;
	}
}
