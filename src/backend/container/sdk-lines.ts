/**
 * The reading side of sdk-process.ts's WRAPPER: a text stream of lines, ":B64" a chunk of the
 * program's output, "!N" its exit status; any other line (a login shell's greeting) is dropped.
 * Chunks may split lines anywhere, so the partial last line is kept for the next chunk.
 */
export interface LineDecoder {
	push(chunk: string | Uint8Array): void;
	/** The stream ended: a last line without its newline still counts. */
	end(): void;
}

export function lineDecoder(onData: (c: Buffer) => void, onStatus?: (status: number) => void): LineDecoder {
	let partial = "";
	const line = (l: string) => {
		if (l.startsWith(":")) {
			const b = Buffer.from(l.slice(1), "base64");
			if (b.length > 0) onData(b);
		} else if (l.startsWith("!") && onStatus) {
			const n = Number(l.slice(1));
			if (Number.isInteger(n)) onStatus(n);
		}
	};
	return {
		push(chunk) {
			// base64 and the status are ASCII: latin1 keeps any byte one character.
			partial += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("latin1");
			let nl = partial.indexOf("\n");
			while (nl >= 0) {
				line(partial.slice(0, nl).replace(/\r$/, ""));
				partial = partial.slice(nl + 1);
				nl = partial.indexOf("\n");
			}
		},
		end() {
			if (partial) line(partial);
			partial = "";
		},
	};
}
