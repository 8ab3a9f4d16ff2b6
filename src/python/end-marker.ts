/**
 * Splits one of the worker's output streams (stdout or stderr) at a job's end marker.
 *
 * The worker writes a random per-job marker to fds 1 and 2 after the job's output. Bytes before
 * the marker belong to the job; the marker itself is dropped. While a marker is expected, trailing
 * bytes that could be the start of the marker are held back until the next chunk decides.
 */
export class EndMarkerSplitter {
	private marker: Buffer | undefined;
	private held: Buffer = Buffer.alloc(0);

	/**
	 * @param onBytes output in stream order (never contains a marker)
	 * @param onMarker the expected marker was seen
	 */
	constructor(
		private readonly onBytes: (chunk: Buffer) => void,
		private readonly onMarker: () => void,
	) {}

	/** Start looking for `marker` (one job at a time). */
	expect(marker: Buffer): void {
		this.marker = marker;
	}

	/** Stop looking (the job ended some other way); held bytes are passed on. */
	cancel(): void {
		this.marker = undefined;
		this.flush();
	}

	push(chunk: Buffer): void {
		const marker = this.marker;
		if (!marker) {
			this.flush();
			this.onBytes(chunk);
			return;
		}
		const buf = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk;
		const at = buf.indexOf(marker);
		if (at >= 0) {
			this.held = Buffer.alloc(0);
			this.marker = undefined;
			if (at > 0) this.onBytes(buf.subarray(0, at));
			this.onMarker();
			const rest = buf.subarray(at + marker.length);
			if (rest.length > 0) this.push(rest);
			return;
		}
		const keep = prefixAtEnd(buf, marker);
		if (buf.length > keep) this.onBytes(buf.subarray(0, buf.length - keep));
		this.held = Buffer.from(buf.subarray(buf.length - keep));
	}

	/** Pass on bytes held back as a possible marker prefix. */
	flush(): void {
		if (this.held.length === 0) return;
		const held = this.held;
		this.held = Buffer.alloc(0);
		this.onBytes(held);
	}
}

/** Length of the longest suffix of `buf` that is a proper prefix of `marker`. */
function prefixAtEnd(buf: Buffer, marker: Buffer): number {
	const from = Math.max(0, buf.length - (marker.length - 1));
	for (let i = buf.indexOf(marker[0], from); i !== -1; i = buf.indexOf(marker[0], i + 1)) {
		if (buf.subarray(i).equals(marker.subarray(0, buf.length - i))) return buf.length - i;
	}
	return 0;
}
