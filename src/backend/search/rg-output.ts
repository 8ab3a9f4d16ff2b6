/**
 * Reading rg's output (`--null --line-number --with-filename --no-heading`): one line is
 * `path\0N:text` (a match) or `path\0N-text` (context). rg prints a file's lines together, whether
 * it searches in path order or in parallel (its parallel printer writes each file's output at once),
 * so a file is complete when the next one begins, or at exit.
 */
import type { GrepMatch } from "../types.js";
import { RG_MAX_COLUMNS, stripEol, withContext } from "./semantics.js";

/** What `--max-columns-preview` puts after a cut line. */
const RG_CUT_MARK = " [... omitted end of long line]";
/** The notes rg prints (on stdout, without a NUL) for a file it found to be binary. */
const RG_BINARY_NOTE = /^(binary file matches|WARNING: stopped searching binary file)/;

interface RgLine {
	path: string;
	line: number;
	match: boolean;
	text: string;
}

function parseRgLine(raw: Buffer): RgLine | undefined {
	const nul = raw.indexOf(0);
	if (nul < 0) return undefined;
	let i = nul + 1;
	let line = 0;
	while (i < raw.length && raw[i] >= 0x30 && raw[i] <= 0x39) line = line * 10 + raw[i++] - 0x30;
	const sep = raw[i];
	if (sep !== 0x3a && sep !== 0x2d) return undefined;
	let body = raw.subarray(i + 1);
	// Only a line longer than the column cap is cut, so only such a line can carry the mark.
	if (body.length > RG_MAX_COLUMNS && body.subarray(-RG_CUT_MARK.length).toString("latin1") === RG_CUT_MARK) {
		body = body.subarray(0, body.length - RG_CUT_MARK.length);
	}
	return {
		path: raw.subarray(0, nul).toString("utf8"),
		line,
		match: sep === 0x3a,
		text: stripEol(body.toString("utf8")),
	};
}

/** One searched file's matches (with their context), named as rg printed it. */
export interface RgFile {
	rgPath: string;
	matches: GrepMatch[];
}

export interface RgCollector {
	/** One output line (without its "\n"). */
	line(raw: Buffer): void;
	/** The output ended: the file being read is complete. */
	end(): void;
	/** Complete files, in the order rg printed them. */
	readonly files: RgFile[];
	/** Matches in `files`. */
	count(): number;
}

/**
 * Gathers matches file by file. Memory stays bounded by the limit: once the matches found would
 * pass it, `overLimit` is called and lines past the limit's match (and its context) are not kept.
 */
export function rgCollector(
	req: { limit: number; context: number },
	toName: (rgPath: string) => string,
	overLimit: () => void,
): RgCollector {
	const files: RgFile[] = [];
	let found = 0;
	let file: { path: string; lines: Map<number, string>; matches: number[]; binary: boolean } | undefined;
	const finish = () => {
		// Matches are kept only once rg has seen the whole file: a NUL anywhere drops it.
		if (file && !file.binary && file.matches.length > 0) {
			const keep = file.matches.slice(0, req.limit + 1 - found);
			const lines = file.lines;
			// rg names the file below the pinned start: the match names the checked path.
			const matches = withContext(toName(file.path), keep, (n) => lines.get(n), req.context);
			files.push({ rgPath: file.path, matches });
			found += matches.length;
		}
		file = undefined;
		if (found > req.limit) overLimit();
	};
	return {
		files,
		count: () => found,
		end: finish,
		line(raw) {
			const ev = parseRgLine(raw);
			if (!ev) {
				const note = raw.toString("utf8");
				if (
					file &&
					note.startsWith(`${file.path}: `) &&
					RG_BINARY_NOTE.test(note.slice(file.path.length + 2))
				) {
					file.binary = true;
				}
				return;
			}
			if (file && file.path !== ev.path) finish();
			if (found > req.limit) return;
			file ??= { path: ev.path, lines: new Map(), matches: [], binary: false };
			// Past the match that would exceed the limit (and its context), lines are of no use.
			const need = req.limit + 1 - found;
			if (file.matches.length >= need && ev.line > file.matches[need - 1] + req.context) return;
			file.lines.set(ev.line, ev.text);
			if (ev.match) file.matches.push(ev.line);
		},
	};
}
