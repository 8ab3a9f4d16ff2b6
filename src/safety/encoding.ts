/**
 * Text encoding facts a safe edit needs: BOM, UTF-8 validity, NUL bytes, and
 * the line endings in use.
 */
const BOM = "\uFEFF";

export interface DecodedText {
	bom: boolean;
	/** Text without the BOM. */
	text: string;
}

const strictDecoder = () => new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** True when the buffer has a NUL byte in its first `window` bytes (how rg and git spot binaries). */
export function looksBinary(buf: Uint8Array, window = 8192): boolean {
	return buf.subarray(0, Math.min(buf.length, window)).indexOf(0) !== -1;
}

/** Strict UTF-8 decode; undefined when the bytes are not valid UTF-8. */
export function decodeUtf8Strict(buf: Uint8Array): DecodedText | undefined {
	let text: string;
	try {
		text = strictDecoder().decode(buf);
	} catch {
		return undefined;
	}
	const bom = text.startsWith(BOM);
	return { bom, text: bom ? text.slice(1) : text };
}

/** Lenient decode for display: invalid sequences become U+FFFD. */
export function decodeUtf8Lenient(buf: Uint8Array): DecodedText & { valid: boolean } {
	const strict = decodeUtf8Strict(buf);
	if (strict) return { ...strict, valid: true };
	const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString("utf8");
	const bom = text.startsWith(BOM);
	return { bom, text: bom ? text.slice(1) : text, valid: false };
}

export function encodeUtf8(text: string, bom: boolean): Buffer {
	return Buffer.from(bom ? BOM + text : text, "utf8");
}

export type LineEnding = "\n" | "\r\n" | "\r";

/** The ending most lines use (CRLF, LF or a lone CR); LF when there are none or on a tie. */
export function dominantEnding(text: string): LineEnding {
	let crlf = 0;
	let lf = 0;
	for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
		if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
		else lf++;
	}
	let cr = 0;
	for (let i = text.indexOf("\r"); i !== -1; i = text.indexOf("\r", i + 1))
		if (text.charCodeAt(i + 1) !== 10) cr++;
	if (cr > crlf && cr > lf) return "\r";
	return crlf > lf ? "\r\n" : "\n";
}
