/**
 * A text file in its own encoding. An edit decodes the file, changes the text, and encodes it back
 * in the same encoding, so a Latin-1 or Shift-JIS file is edited rather than refused (a refusal
 * sends the model to `sed`, which corrupts it anyway). What makes this safe:
 *   - detection: a BOM (UTF-8, UTF-16 LE/BE) decides; else valid UTF-8 is UTF-8; else chardet's
 *     candidates among the supported encodings, of which only those that decode without a
 *     replacement character and encode back to the very same bytes count. The best must lead the
 *     next by a margin: when two encodings fit about as well, keel refuses and says what it saw;
 *   - a lossless round trip means every byte outside the edited text is written back as it was;
 *   - new text the encoding cannot represent is refused, naming the character.
 * Bytes with NUL and no UTF-16 BOM are binary and stay refused.
 */
import { createRequire } from "node:module";
import { KeelError } from "../boundary/errors.js";
import { decodeUtf8Strict, encodeUtf8, looksBinary } from "./encoding.js";

// Both are CommonJS and needed only for text that is not UTF-8: loaded (synchronously, cached by
// Node's require) when such text first comes, not when keel starts.
const requireHere = createRequire(import.meta.url);
const chardet = (): typeof import("chardet") => requireHere("chardet");
const iconv = (): typeof import("iconv-lite") => requireHere("iconv-lite");

/** The encodings keel edits in, as iconv-lite names them. */
const SUPPORTED: Record<string, string> = {
	"ISO-8859-1": "windows-1252",
	"windows-1252": "windows-1252",
	Shift_JIS: "Shift_JIS",
	"EUC-JP": "EUC-JP",
	GB18030: "GB18030",
	"EUC-KR": "EUC-KR",
	Big5: "Big5",
};

/** The lead (in chardet's confidence points) the best candidate needs over the next one. */
const CERTAIN_MARGIN = 3;
/** Below this confidence no candidate is trusted. */
const MIN_CONFIDENCE = 25;

export interface FileText {
	/** "utf-8", "utf-16le", "utf-16be", or an iconv-lite name ("windows-1252", "Shift_JIS", ...). */
	encoding: string;
	bom: boolean;
	/** The text, without the BOM. */
	text: string;
}

function roundTrips(bytes: Buffer, encoding: string): string | undefined {
	if (encoding === "windows-1252" && /[\x81\x8d\x8f\x90\x9d]/.test(bytes.toString("latin1")))
		encoding = "latin1"; // Bytes windows-1252 leaves undefined: Latin-1 keeps them.
	const text = iconv().decode(bytes, encoding);
	if (text.includes("\ufffd")) return undefined;
	return iconv().encode(text, encoding).equals(bytes) ? text : undefined;
}

/** The file's text and encoding, or why keel will not guess (a sentence for the error). */
export function decodeText(data: Uint8Array): FileText | { unsure: string } {
	const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
	if (bytes[0] === 0xff && bytes[1] === 0xfe) return utf16(bytes, "utf-16le");
	if (bytes[0] === 0xfe && bytes[1] === 0xff) return utf16(bytes, "utf-16be");
	if (looksBinary(bytes, bytes.length)) return { unsure: "it has NUL bytes (binary data)" };
	const utf8 = decodeUtf8Strict(bytes);
	if (utf8) return { encoding: "utf-8", bom: utf8.bom, text: utf8.text };
	const fits: Array<{ encoding: string; confidence: number; text: string }> = [];
	for (const m of chardet().analyse(bytes)) {
		const encoding = SUPPORTED[m.name];
		if (!encoding || fits.some((f) => f.encoding === encoding)) continue;
		const text = roundTrips(bytes, encoding);
		if (text !== undefined) fits.push({ encoding, confidence: m.confidence, text });
	}
	const seen = fits.map((f) => `${f.encoding} (${f.confidence})`).join(", ") || "no supported encoding";
	const [best, next] = fits;
	if (!best || best.confidence < MIN_CONFIDENCE)
		return { unsure: `it is not UTF-8 and no encoding fits with confidence (candidates: ${seen})` };
	if (next && best.confidence - next.confidence < CERTAIN_MARGIN)
		return { unsure: `it is not UTF-8 and several encodings fit about as well (${seen})` };
	return { encoding: best.encoding, bom: false, text: best.text };
}

function utf16(bytes: Buffer, encoding: "utf-16le" | "utf-16be"): FileText | { unsure: string } {
	const body = bytes.subarray(2);
	const text = body.length % 2 === 0 ? roundTrips(body, encoding) : undefined;
	if (text === undefined)
		return { unsure: `it has a ${encoding.toUpperCase()} BOM but is not valid ${encoding}` };
	return { encoding, bom: true, text };
}

/** `text` in the file's encoding (with its BOM); ENCODING_UNSAFE naming the first character it cannot hold. */
export function encodeText(text: string, file: Pick<FileText, "encoding" | "bom">, shown: string): Buffer {
	if (file.encoding === "utf-8") return encodeUtf8(text, file.bom);
	const encoded = iconv().encode(text, file.encoding);
	const back = iconv().decode(encoded, file.encoding);
	if (back !== text) {
		let i = 0;
		while (i < text.length && text[i] === back[i]) i++;
		const ch = String.fromCodePoint(text.codePointAt(i) ?? 0);
		const code = `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
		throw new KeelError(
			"ENCODING_UNSAFE",
			`${shown} is ${file.encoding}, which cannot hold ${JSON.stringify(ch)} (${code}) in the new text; nothing was written. Use characters the file's encoding has (or an escape the language allows).`,
			{ path: shown, details: { encoding: file.encoding, character: ch } },
		);
	}
	if (!file.bom) return encoded;
	const bom = file.encoding === "utf-16le" ? [0xff, 0xfe] : [0xfe, 0xff];
	return Buffer.concat([Buffer.from(bom), encoded]);
}

/** The ENCODING_UNSAFE for a file keel will not decode, saying what it saw. */
export function undecodable(shown: string, why: string): KeelError {
	return new KeelError(
		"ENCODING_UNSAFE",
		`${shown} cannot be edited as text: ${why}; a text edit could corrupt it. Change it another way (e.g. a script that handles its encoding).`,
		{ path: shown },
	);
}
