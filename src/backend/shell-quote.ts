/** One POSIX shell word: single-quoted, safe for any string without NUL. */
export function shq(s: string): string {
	return `'${s.replaceAll("'", `'\\''`)}'`;
}
