/**
 * The framing of keel's persistent remote shells. Every job gets a fresh random marker; the shell
 * writes records `\x1f<marker><body>\n` around the job's output. Output cannot fake a record
 * without guessing 128 random bits, so any bytes (binary included) pass through untouched.
 */
import { randomBytes } from "node:crypto";

export function newMarker(): string {
	return randomBytes(16).toString("hex");
}

const EMPTY = Buffer.alloc(0);

/** How many bytes at the end of `buf` could be the start of `token` (held back until more arrives). */
function tokenPrefixAtEnd(buf: Buffer, token: Buffer): number {
	const from = Math.max(0, buf.length - token.length + 1);
	for (let at = buf.indexOf(token[0], from); at >= 0; at = buf.indexOf(token[0], at + 1)) {
		if (buf.subarray(at).equals(token.subarray(0, buf.length - at))) return buf.length - at;
	}
	return 0;
}

/**
 * Splits one stream into data and this job's records. `onRecord` returns true for the job's last
 * record on this stream; `push` then returns the bytes after it (they belong to the next reader).
 */
export class RecordSplitter {
	private readonly token: Buffer;
	private held = EMPTY;
	private ended = false;

	constructor(
		marker: string,
		private readonly onData: (chunk: Buffer) => void,
		private readonly onRecord: (body: string) => boolean,
	) {
		this.token = Buffer.from(`\x1f${marker}`);
	}

	get done(): boolean {
		return this.ended;
	}

	push(chunk: Buffer): Buffer | undefined {
		if (this.ended) return chunk;
		let buf = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk;
		this.held = EMPTY;
		for (;;) {
			const at = buf.indexOf(this.token);
			if (at < 0) {
				const keep = tokenPrefixAtEnd(buf, this.token);
				if (buf.length > keep) this.onData(buf.subarray(0, buf.length - keep));
				this.held = Buffer.from(buf.subarray(buf.length - keep));
				return undefined;
			}
			if (at > 0) this.onData(buf.subarray(0, at));
			const nl = buf.indexOf(0x0a, at + this.token.length);
			if (nl < 0) {
				this.held = Buffer.from(buf.subarray(at));
				return undefined;
			}
			const body = buf
				.subarray(at + this.token.length, nl)
				.toString("utf8")
				.trim();
			buf = buf.subarray(nl + 1);
			if (this.onRecord(body)) {
				this.ended = true;
				return buf;
			}
		}
	}
}
