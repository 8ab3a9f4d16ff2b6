/**
 * A checker's output as errors: the formats the common checkers print, one diagnostic a line.
 *   tsc          src/a.ts(3,7): error TS2322: Type 'string' is not assignable ...
 *   pyright        /abs/a.py:3:7 - error: ...
 *   file:line    a.py:3:7: E999 ... / a.c:3:7: error: ... / a.py:3: error: ... (ruff, mypy, gcc-like)
 *   Python       File "a.py", line 3   ... then   SyntaxError: invalid syntax   (py_compile)
 * Only errors: lines a checker marks as a warning, note or information are skipped; a file:line
 * line without a severity counts as an error (ruff prints rules it fails on that way).
 * The output is untrusted text: control characters and escape sequences are removed, a line is cut
 * short, and the count is bounded; paths are resolved and judged by the caller (diagnostics.ts).
 */

export interface RawDiagnostic {
	/** The path as the checker printed it. */
	file: string;
	/** 1-based; column 0 when the checker gave none. */
	line: number;
	column: number;
	/** The checker's code (TS2322, E999) when it gave one, and the message. */
	message: string;
}

/** Diagnostics read from one output at most (a broken project prints thousands). */
export const MAX_PARSED = 2000;
/** A line longer than this is cut before it is parsed (a message is short; a binary blob is not). */
const MAX_LINE_CHARS = 2000;
/** A message longer than this is cut. */
export const MAX_MESSAGE_CHARS = 200;

const TSC = /^(.+?)\((\d+),(\d+)\): (error|warning|message) (TS\d+: .*)$/;
const PYRIGHT = /^\s*(.+?):(\d+):(\d+) - (error|warning|information): (.*)$/;
const FILE_LINE = /^([^\s:][^:]*):(\d+):(?:(\d+):)?\s+(.*)$/;
const SEVERITY = /^(fatal error|error|warning|note|info|information|hint)\s*:\s*/i;
const PY_FILE = /^\s*File "(.+)", line (\d+)/;
const PY_ERROR = /^([A-Za-z_][\w.]*(?:Error|Exception)): (.*)$/;

/** Escape sequences (colours), control and direction-changing characters, from untrusted text. */
function clean(line: string): string {
	return line
		.replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, "")
		.replace(/[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ufffd]/g, "")
		.slice(0, MAX_LINE_CHARS);
}

const cut = (message: string) =>
	message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 3)}...` : message;

/** The errors in a checker's output, in order, at most MAX_PARSED. */
export function parseDiagnostics(output: string): RawDiagnostic[] {
	const out: RawDiagnostic[] = [];
	const lines = output.split(/\r?\n/);
	let pythonAt: { file: string; line: number } | undefined;
	for (const raw of lines) {
		if (out.length >= MAX_PARSED) break;
		const line = clean(raw);
		const add = (file: string, l: string, c: string | undefined, message: string) => {
			const n = Number(l);
			if (!Number.isSafeInteger(n) || n < 1 || message.trim() === "") return;
			out.push({ file: file.trim(), line: n, column: c ? Number(c) || 0 : 0, message: cut(message.trim()) });
		};
		let m = TSC.exec(line);
		if (m) {
			if (m[4] === "error") add(m[1], m[2], m[3], m[5]);
			continue;
		}
		m = PYRIGHT.exec(line);
		if (m) {
			if (m[4] === "error") add(m[1], m[2], m[3], m[5]);
			continue;
		}
		m = PY_FILE.exec(line);
		if (m) {
			pythonAt = { file: m[1], line: Number(m[2]) };
			continue;
		}
		if (pythonAt) {
			m = PY_ERROR.exec(line);
			if (m) {
				add(pythonAt.file, String(pythonAt.line), undefined, `${m[1]}: ${m[2]}`);
				pythonAt = undefined;
				continue;
			}
			// The lines between (the source line, the caret) belong to the same report.
			if (/^\s/.test(line)) continue;
			pythonAt = undefined;
		}
		m = FILE_LINE.exec(line);
		if (m) {
			const severity = SEVERITY.exec(m[4]);
			const kind = severity?.[1].toLowerCase();
			if (kind === undefined || kind === "error" || kind === "fatal error")
				add(m[1], m[2], m[3], severity ? m[4].slice(severity[0].length) : m[4]);
		}
	}
	return out;
}
