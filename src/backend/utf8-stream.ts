/**
 * Strict UTF-8 check of a stream in chunks (node's isUtf8, simdutf, per chunk): a sequence cut by
 * a chunk's end is carried into the next chunk.
 */
import { isUtf8 } from "node:buffer";

/** Bytes a UTF-8 sequence starting with `lead` takes (1 for anything that is not a lead byte). */
const sequenceLength = (lead: number) => (lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1);

export class Utf8Checker {
	private valid = true;
	private carry: Buffer | undefined;

	push(data: Buffer): void {
		if (!this.valid) return;
		let from = 0;
		if (this.carry) {
			const need = sequenceLength(this.carry[0]) - this.carry.length;
			if (data.length < need) {
				this.carry = Buffer.concat([this.carry, data]);
				return;
			}
			this.valid = isUtf8(Buffer.concat([this.carry, data.subarray(0, need)]));
			this.carry = undefined;
			from = need;
		}
		// The last up to 3 bytes may begin a sequence the next chunk completes.
		let cut = data.length;
		for (let i = data.length - 1; i >= Math.max(from, data.length - 3); i--) {
			if ((data[i] & 0xc0) === 0x80) continue; // a continuation byte: look further back
			if (i + sequenceLength(data[i]) > data.length) cut = i;
			break;
		}
		if (this.valid && cut > from) this.valid = isUtf8(data.subarray(from, cut));
		if (cut < data.length) this.carry = Buffer.from(data.subarray(cut));
	}

	/** True when every byte pushed was valid UTF-8 and no sequence is left open. */
	end(): boolean {
		return this.valid && this.carry === undefined;
	}
}
