/**
 * Relative links and anchors in markdown: every `[text](target)` and `![alt](target)` outside code
 * must name a file or directory that exists, and a `#fragment` must name a heading of the target
 * (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered).
 * Links with a scheme (https:, mailto:) are not followed.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

export interface Dangling {
	file: string;
	line: number;
	target: string;
	why: string;
}

/** The text without fenced code blocks and inline code spans, line numbers kept. */
function withoutCode(text: string): string {
	let inFence = false;
	return text
		.split("\n")
		.map((line) => {
			if (/^\s*(```|~~~)/.test(line)) {
				inFence = !inFence;
				return "";
			}
			return inFence ? "" : line.replace(/`[^`]*`/g, "``");
		})
		.join("\n");
}

/** GitHub's anchor for a heading's text. */
export function slug(heading: string): string {
	const text = heading
		.replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
		.replace(/[`*_]/g, (c) => (c === "_" ? "_" : ""))
		.trim()
		.toLowerCase();
	return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor a markdown file offers. */
export function anchors(text: string): Set<string> {
	const seen = new Map<string, number>();
	const out = new Set<string>();
	let inFence = false;
	for (const line of text.split("\n")) {
		if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
		const m = !inFence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
		if (!m) continue;
		const base = slug(m[1]);
		const n = seen.get(base) ?? 0;
		seen.set(base, n + 1);
		out.add(n === 0 ? base : `${base}-${n}`);
	}
	return out;
}

const LINK = /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/** The dangling relative links of `files` (absolute paths); `root` only shortens the report. */
export function danglingLinks(files: string[], root: string): Dangling[] {
	const out: Dangling[] = [];
	const anchorCache = new Map<string, Set<string>>();
	const anchorsOf = (path: string) => {
		let a = anchorCache.get(path);
		if (!a) {
			a = anchors(readFileSync(path, "utf8"));
			anchorCache.set(path, a);
		}
		return a;
	};
	for (const file of files) {
		const lines = withoutCode(readFileSync(file, "utf8")).split("\n");
		lines.forEach((line, i) => {
			for (const m of line.matchAll(LINK)) {
				const target = m[1];
				if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
				const [pathPart, fragment] = target.split("#", 2);
				const dest = pathPart === "" ? file : resolve(dirname(file), decodeURIComponent(pathPart));
				const report = (why: string) => out.push({ file: relative(root, file), line: i + 1, target, why });
				if (!existsSync(dest)) {
					report("no such file");
					continue;
				}
				if (fragment === undefined) continue;
				if (statSync(dest).isDirectory() || !dest.endsWith(".md")) {
					report("an anchor into something that is not a markdown file");
				} else if (!anchorsOf(dest).has(decodeURIComponent(fragment).toLowerCase())) {
					report("no such heading");
				}
			}
		});
	}
	return out;
}
