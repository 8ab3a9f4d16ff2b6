/**
 * The apply_patch format (Codex's grammar) parsed into file operations:
 *
 *   *** Begin Patch
 *   *** Add File: <path>        then "+" lines: the new file
 *   *** Delete File: <path>
 *   *** Update File: <path>     optionally "*** Move to: <path>", then hunks:
 *   @@ [context line]           a hunk; its " ", "-" and "+" lines; optionally "*** End of File"
 *   *** End Patch
 *
 * Lenient where a model's slips are unambiguous: markers padded with whitespace, a heredoc
 * wrapper (`<<'EOF'` … `EOF`), a first hunk without "@@", an empty line read as an empty context
 * line, CRLF in the patch text. Anything else is an INVALID_ARGS naming the patch line.
 */
import { KeelError } from "../boundary/errors.js";

export interface PatchLine {
	/** " " context (kept as the file has it), "-" removed, "+" added. */
	kind: " " | "-" | "+";
	text: string;
}

export interface Hunk {
	/** The `@@ <context>` line: the hunk is searched after the first line matching it. */
	header?: string;
	lines: PatchLine[];
	/** `*** End of File`: the hunk's old lines end the file. */
	eof: boolean;
	/** 1-based line of the patch where the hunk starts (for messages). */
	at: number;
}

export type FileOp =
	| { kind: "add"; path: string; lines: string[]; at: number }
	| { kind: "delete"; path: string; at: number }
	| { kind: "update"; path: string; moveTo?: string; hunks: Hunk[]; at: number };

const BEGIN = "*** Begin Patch";
const END = "*** End Patch";
const ADD = "*** Add File:";
const DELETE = "*** Delete File:";
const UPDATE = "*** Update File:";
const MOVE = "*** Move to:";
const EOF_MARK = "*** End of File";

const HEREDOC_OPEN = /^(?:apply_patch\s+)?<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1\s*$/;

function invalid(message: string): KeelError {
	return new KeelError("INVALID_ARGS", `apply_patch: ${message}`);
}

/** A line that starts another file operation or ends the patch (compared with its padding trimmed). */
function isOpMarker(trimmed: string): boolean {
	return (
		trimmed === END || trimmed.startsWith(ADD) || trimmed.startsWith(DELETE) || trimmed.startsWith(UPDATE)
	);
}

function pathAfter(trimmed: string, prefix: string, lineNo: number): string {
	const path = trimmed.slice(prefix.length).trim();
	if (!path) throw invalid(`line ${lineNo}: "${prefix}" needs a path.`);
	return path;
}

/** The patch's lines between the markers, a heredoc wrapper and CRLF removed. */
function bodyLines(input: string): { lines: string[]; first: number } {
	let lines = input.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
	while (lines.length > 0 && lines[lines.length - 1].trim() === "") lines.pop();
	let first = 0;
	while (first < lines.length && lines[first].trim() === "") first++;
	lines = lines.slice(first);
	const heredoc = lines.length >= 2 ? HEREDOC_OPEN.exec(lines[0].trim()) : null;
	if (heredoc && lines[lines.length - 1].trim() === heredoc[2]) {
		lines = lines.slice(1, -1);
		first++;
	}
	if (lines.length === 0 || lines[0].trim() !== BEGIN)
		throw invalid(`the first line of the patch must be "${BEGIN}".`);
	if (lines.length < 2 || lines[lines.length - 1].trim() !== END)
		throw invalid(`the last line of the patch must be "${END}".`);
	return { lines: lines.slice(1, -1), first: first + 2 };
}

/** Parse a whole patch. Throws INVALID_ARGS (nothing touched) on any malformed line. */
export function parsePatch(input: string): FileOp[] {
	const { lines, first } = bodyLines(input);
	const ops: FileOp[] = [];
	let i = 0;
	const lineNo = (k: number) => k + first;
	while (i < lines.length) {
		const trimmed = lines[i].trim();
		const at = lineNo(i);
		if (trimmed.startsWith(ADD)) {
			const path = pathAfter(trimmed, ADD, at);
			const content: string[] = [];
			i++;
			while (i < lines.length && lines[i].startsWith("+")) content.push(lines[i++].slice(1));
			ops.push({ kind: "add", path, lines: content, at });
		} else if (trimmed.startsWith(DELETE)) {
			ops.push({ kind: "delete", path: pathAfter(trimmed, DELETE, at), at });
			i++;
		} else if (trimmed.startsWith(UPDATE)) {
			const path = pathAfter(trimmed, UPDATE, at);
			i++;
			let moveTo: string | undefined;
			if (i < lines.length && lines[i].trim().startsWith(MOVE))
				moveTo = pathAfter(lines[i++].trim(), MOVE, lineNo(i - 1));
			const hunks: Hunk[] = [];
			while (i < lines.length && !isOpMarker(lines[i].trim())) {
				const parsed = parseHunk(lines, i, hunks.length === 0, lineNo);
				hunks.push(parsed.hunk);
				i = parsed.next;
			}
			if (hunks.length === 0)
				throw invalid(`line ${at}: "${UPDATE} ${path}" has no hunks; give at least one @@ hunk.`);
			ops.push({ kind: "update", path, moveTo, hunks, at });
		} else {
			throw invalid(
				`line ${at}: "${clip(lines[i])}" is not a valid file header. Valid headers: "${ADD} <path>", "${DELETE} <path>", "${UPDATE} <path>".`,
			);
		}
	}
	if (ops.length === 0) throw invalid("the patch changes no files.");
	return ops;
}

function parseHunk(
	lines: string[],
	start: number,
	firstOfFile: boolean,
	lineNo: (k: number) => number,
): { hunk: Hunk; next: number } {
	let i = start;
	const head = lines[i].trim();
	let header: string | undefined;
	if (head === "@@" || head.startsWith("@@ ")) {
		const ctx = head.slice(2).trim();
		header = ctx === "" ? undefined : lines[i].slice(lines[i].indexOf("@@") + 3);
		i++;
	} else if (!firstOfFile) {
		throw invalid(`line ${lineNo(i)}: expected a hunk starting with "@@", got "${clip(lines[i])}".`);
	}
	const hunk: Hunk = { header, lines: [], eof: false, at: lineNo(start) };
	while (i < lines.length) {
		const line = lines[i];
		const trimmed = line.trim();
		if (trimmed === EOF_MARK) {
			hunk.eof = true;
			i++;
			break;
		}
		if (isOpMarker(trimmed) || trimmed === "@@" || trimmed.startsWith("@@ ")) break;
		const c = line[0];
		if (line === "") hunk.lines.push({ kind: " ", text: "" });
		else if (c === " " || c === "-" || c === "+") hunk.lines.push({ kind: c, text: line.slice(1) });
		else {
			throw invalid(
				`line ${lineNo(i)}: "${clip(line)}" in a hunk must start with " " (context), "-" (removed) or "+" (added).`,
			);
		}
		i++;
	}
	if (hunk.lines.length === 0)
		throw invalid(`line ${hunk.at}: the hunk has no lines; give context, "-" and "+" lines.`);
	return { hunk, next: i };
}

function clip(line: string): string {
	return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}
