/**
 * Names a model types for a file that exists under a look-alike name (pi's read does the same):
 * odd Unicode spaces for plain ones, macOS screenshot names without their narrow no-break space
 * before AM/PM, a straight apostrophe for the curly one, NFC for NFD and back. Tried only when the
 * exact name does not exist, only for reads, and each candidate goes through the guard like any
 * path: a look-alike never widens what can be reached.
 */

const UNICODE_SPACES = /[\u00a0\u2000-\u200a\u202f\u205f\u3000]/g;

/** Candidate names for `input`, most likely first, without `input` itself or repeats. */
export function lookalikes(input: string): string[] {
	const spaced = input.replace(UNICODE_SPACES, " ");
	const amPm = spaced.replace(/ (AM|PM)\./gi, "\u202f$1.");
	const nfd = spaced.normalize("NFD");
	const nfc = spaced.normalize("NFC");
	const curly = (s: string) => s.replace(/'/g, "\u2019");
	const out = new Set([spaced, amPm, nfd, nfc, curly(spaced), curly(amPm), curly(nfd), curly(nfc)]);
	out.delete(input);
	return [...out];
}
