/**
 * The worker protocol's framing: a 4-byte big-endian length, then that many bytes of UTF-8 JSON
 * (an object with a numeric `id`). Anything else is protocol corruption and resets the worker.
 */

export class ProtocolError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "ProtocolError";
	}
}

export interface Frame {
	id: number;
	[key: string]: unknown;
}

export function encodeFrame(message: object): Buffer {
	const body = Buffer.from(JSON.stringify(message), "utf8");
	const header = Buffer.allocUnsafe(4);
	header.writeUInt32BE(body.length, 0);
	return Buffer.concat([header, body], 4 + body.length);
}

/** Incremental decoder: push chunks as they arrive, get whole frames back. */
export class FrameDecoder {
	private chunks: Buffer[] = [];
	private buffered = 0;

	constructor(private readonly maxFrameBytes: number) {}

	/** Throws ProtocolError on an oversized or unparsable frame; the decoder is then unusable. */
	push(chunk: Buffer): Frame[] {
		this.chunks.push(chunk);
		this.buffered += chunk.length;
		const frames: Frame[] = [];
		while (this.buffered >= 4) {
			const head = this.peek(4);
			const size = head.readUInt32BE(0);
			if (size > this.maxFrameBytes) {
				throw new ProtocolError(`frame of ${size} bytes exceeds the ${this.maxFrameBytes}-byte limit`);
			}
			if (this.buffered < 4 + size) break;
			const body = this.take(4 + size).subarray(4);
			frames.push(parseFrame(body));
		}
		return frames;
	}

	private peek(n: number): Buffer {
		if (this.chunks[0].length >= n) return this.chunks[0];
		return Buffer.concat(this.chunks, this.buffered).subarray(0, n);
	}

	private take(n: number): Buffer {
		const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
		const rest = all.subarray(n);
		this.chunks = rest.length > 0 ? [rest] : [];
		this.buffered = rest.length;
		return all.subarray(0, n);
	}
}

function parseFrame(body: Buffer): Frame {
	let value: unknown;
	try {
		value = JSON.parse(body.toString("utf8"));
	} catch {
		throw new ProtocolError(`frame of ${body.length} bytes is not JSON`);
	}
	if (typeof value !== "object" || value === null || typeof (value as Frame).id !== "number") {
		throw new ProtocolError("frame is not an object with a numeric id");
	}
	return value as Frame;
}
