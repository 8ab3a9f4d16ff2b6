/**
 * Ignore-file text → rules, for levels built from fetched files. It mirrors the parser in
 * search/ignore-rules.ts line for line (that one is private and reads local files); once that
 * module exports `parseIgnoreFile`, this file should go.
 */
import type { Level } from "../search/ignore-rules.js";
import { compileGlob } from "../search/patterns.js";

type Rule = Level["custom"][number];

function parseLine(raw: string): Rule | undefined {
	if (raw.startsWith("#")) return undefined;
	let line = raw.endsWith("\\ ") ? raw : raw.trimEnd();
	if (line === "") return undefined;
	let whitelist = false;
	let anchored = false;
	if (line.startsWith("\\!") || line.startsWith("\\#")) {
		line = line.slice(1);
	} else {
		if (line.startsWith("!")) {
			whitelist = true;
			line = line.slice(1);
		}
		if (line.startsWith("/")) {
			anchored = true;
			line = line.slice(1);
		}
	}
	let dirOnly = false;
	if (line.endsWith("/")) {
		dirOnly = true;
		line = line.slice(0, -1);
		if (line.endsWith("\\")) line = line.slice(0, -1);
	}
	if (line === "") return undefined;
	let glob = line;
	if (!anchored && !line.includes("/") && !glob.startsWith("**/") && glob !== "**") glob = `**/${glob}`;
	if (glob.endsWith("/**")) glob += "/*";
	try {
		return { match: compileGlob(glob), whitelist, dirOnly };
	} catch {
		return undefined; // a bad glob in an ignore file is skipped, as rg does
	}
}

export function parseIgnoreText(text: string | undefined): Rule[] {
	if (text === undefined) return [];
	const rules: Rule[] = [];
	for (const line of text.split(/\r?\n/)) {
		const rule = parseLine(line);
		if (rule) rules.push(rule);
	}
	return rules;
}
