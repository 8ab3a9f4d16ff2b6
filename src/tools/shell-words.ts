/**
 * A shell word's value as far as it is known before the command runs: quoting and escapes undone,
 * `$'...'` strings decoded, brace lists expanded, and markers for a home directory and for a part
 * known only at run time. Apart from the bash policy, which decides what is catastrophic, because
 * this is bash's own word semantics, the part most likely to be asked again by another rule.
 */
import type { SyntaxNode } from "./shell-syntax.js";

/** Markers in a word's value: a home directory (`~`, `$HOME`), a part known only at run time. */
export const HOME = "\u0000H";
export const UNKNOWN = "\u0000U";
/** Words a brace list expands to at most. */
const MAX_BRACE_WORDS = 256;

/** A value with its markers written back as shell source (for a nested parse). */
export function asSource(value: string): string {
	return value.split(HOME).join("$HOME").split(UNKNOWN).join("$KEEL_UNKNOWN");
}

/** Bash's brace lists (`/{,}` is `/ /`), up to MAX_BRACE_WORDS words; sequences are left as they are. */
export function expandBraces(word: string): string[] {
	let out = [word];
	for (let round = 0; round < 16; round++) {
		let changed = false;
		const next: string[] = [];
		for (const w of out) {
			const m = /\{([^{}]*,[^{}]*)\}/.exec(w);
			if (!m) {
				next.push(w);
				continue;
			}
			changed = true;
			for (const alt of m[1].split(","))
				next.push(w.slice(0, m.index) + alt + w.slice(m.index + m[0].length));
		}
		out = next.slice(0, MAX_BRACE_WORDS);
		if (!changed) break;
	}
	return out;
}

/** A word's value as far as it is known before it runs, with HOME and UNKNOWN markers. */
export function wordValue(node: SyntaxNode): string {
	switch (node.type) {
		case "command_name":
			return node.firstChild ? wordValue(node.firstChild) : node.text;
		case "word": {
			const text = node.text.replace(/\\(.)/gs, "$1");
			return /^~[^/]*/.test(node.text) ? text.replace(/^~[^/]*/, HOME) : text;
		}
		case "number":
			return node.text;
		case "raw_string":
			return node.text.slice(1, -1);
		case "ansi_c_string":
			return ansiC(node.text.slice(2, -1));
		case "string_content":
			return node.text.replace(/\\([$`"\\\n])/g, "$1");
		case "simple_expansion":
		case "expansion":
			return /^\$\{?HOME\}?$/.test(node.text) ? HOME : UNKNOWN;
		case "string":
		case "concatenation":
			return node.namedChildren.map((c) => (c ? wordValue(c) : UNKNOWN)).join("");
		default:
			return UNKNOWN;
	}
}

/** The value of a `$'...'` string's body. */
function ansiC(body: string): string {
	const simple: Record<string, string> = {
		n: "\n",
		t: "\t",
		r: "\r",
		a: "\x07",
		b: "\b",
		e: "\x1b",
		E: "\x1b",
	};
	return body.replace(
		/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|.)/gs,
		(_, e: string) => {
			if (/^[xuU]/.test(e)) return String.fromCodePoint(Number.parseInt(e.slice(1), 16));
			if (/^[0-7]/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
			return simple[e] ?? e;
		},
	);
}
