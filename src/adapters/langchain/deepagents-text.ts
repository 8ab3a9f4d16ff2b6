/**
 * keel's text as a deepagents backend passes it on: the patterns that read a read page's
 * continuation and a grep row back out of keel's answers, and keel's failure text put in
 * deepagents' terms. Apart from the backend (deepagents.ts) so that everything that depends on
 * keel's exact wording sits in one place.
 */
import type { BoundResult } from "../binding.js";
import type { FileDownloadResponse } from "./deepagents-types.js";

/** keel's continuation notice at the end of a read page. */
export const READ_NOTICE =
	/\n\n\[(?:Showing lines \d+-(\d+) of \d+[^\]]*|\d+ more lines in file\. Use offset=(\d+) to continue\.)\]$/;
/** One row of keel's grep output: path, line number, text. */
export const GREP_ROW = /^(.*?):(\d+): (.*)$/;

/** The sentence keel adds when it keeps a refused write's payload: deepagents' tools take no payloadRef. */
const PAYLOAD_KEPT = / The \w+ payload is kept: retry with payloadRef "[^"]*" and the corrected path\./;
/** keel's argument and tool names in its own sentences, as a deepagents model knows them. */
const VOCABULARY: Array<[RegExp, string]> = [
	[/\boldText\b/g, "old_string"],
	[/\bnewText\b/g, "new_string"],
	[/\breplaceAll\b/g, "replace_all"],
	[/\bls or find\b/g, "ls or glob"],
];

/**
 * keel's failure text in deepagents' terms: deepagents' wording for the codes its tools and tests
 * expect first, and no name a deepagents model does not have (keel's tools, payloadRef, keel's
 * argument names). Only keel's own first line and the failure memory's advice are reworded; lines
 * quoted from a file are left as they are.
 */
export function failure(r: BoundResult, op: string, path?: string): string {
	const [head = "", ...rest] = r.text.replace(PAYLOAD_KEPT, "").split("\n");
	let first = head;
	for (const [from, to] of VOCABULARY) first = first.replace(from, to);
	// The failure memory's advice opens with the keel tool's name (boundary/failure-memory.ts).
	const body = [first, ...rest].join("\n").replace(/\n\n[a-z_]+ failed with /, `\n\n${op} failed with `);
	if (r.error?.code === "NOT_FOUND") return `File '${path}' not found. ${body}`;
	if (r.error?.code === "AMBIGUOUS_MATCH") return `String occurs multiple times. ${body}`;
	if (r.error?.code === "NO_MATCH") return `String not found in file. ${body}`;
	return body;
}

/** keel's error codes a download names in deepagents' words; every other refusal is permission_denied. */
export const DOWNLOAD_ERRORS: Record<string, FileDownloadResponse["error"]> = {
	NOT_FOUND: "file_not_found",
	IS_DIRECTORY: "is_directory",
};
