/**
 * The `normalized` match mode: Unicode quotes, dashes and spaces folded, runs of blanks collapsed,
 * trailing whitespace ignored. Every normalized character remembers where it came from, so a match
 * found in the normalized text maps back to an exact range of the original.
 */

export interface NormalizedText {
	text: string;
	/** Original offset where normalized char i starts. */
	starts: number[];
	/** Original offset just past normalized char i. */
	ends: number[];
}

const QUOTE_SINGLE = /[\u2018\u2019\u201A\u201B\u2032\u2035]/;
const QUOTE_DOUBLE = /[\u201C\u201D\u201E\u201F\u2033\u2036]/;
const DASH = /[\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uFE58\uFE63\uFF0D]/;
const SPACE = /[ \t\u00A0\u2000-\u200A\u202F\u205F\u3000]/;

function fold(ch: string): string {
	if (QUOTE_SINGLE.test(ch)) return "'";
	if (QUOTE_DOUBLE.test(ch)) return '"';
	if (DASH.test(ch)) return "-";
	return ch;
}

/** Normalize LF text. */
export function normalizeText(src: string): NormalizedText {
	const out: string[] = [];
	const starts: number[] = [];
	const ends: number[] = [];
	let i = 0;
	while (i < src.length) {
		const ch = src[i];
		if (SPACE.test(ch)) {
			let j = i;
			while (j < src.length && SPACE.test(src[j])) j++;
			// Trailing whitespace (before a newline or the end) disappears; inner runs become one space.
			if (j < src.length && src[j] !== "\n") {
				out.push(" ");
				starts.push(i);
				ends.push(j);
			}
			i = j;
			continue;
		}
		out.push(fold(ch));
		starts.push(i);
		ends.push(i + 1);
		i++;
	}
	return { text: out.join(""), starts, ends };
}
