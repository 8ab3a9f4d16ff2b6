/**
 * What changed since a checkpoint, for a model or a user to read: every changed path with its
 * state then and now, and a unified diff of the text files, bounded. Binary files, files whose
 * bytes were not kept and files past DIFF_MAX_BYTES are named, not diffed (a diff of two large
 * texts costs time quadratic in their difference).
 */
import { jsdiff } from "../edit/jsdiff.js";
import type { PathSince } from "./restore-plan.js";
import type { TreeSource } from "./source.js";
import { describeState, type PathState, sameState } from "./types.js";

const PATCH_CHARS = 20_000;
const DIFF_MAX_BYTES = 256 * 1024;

export interface TextDiff {
	changes: Array<{ path: string; was: string; now: string }>;
	patch: string;
}

export async function diffOf(source: TreeSource, changes: ReadonlyMap<string, PathSince>): Promise<TextDiff> {
	const listed: TextDiff["changes"] = [];
	let patch = "";
	for (const [path, s] of changes) {
		if (sameState(s.was, s.now)) continue;
		listed.push({ path, was: describeState(s.was), now: describeState(s.now) });
		if (patch.length < PATCH_CHARS) patch += await textPatch(source, path, s.was, s.now);
	}
	if (patch.length > PATCH_CHARS)
		patch = `${patch.slice(0, PATCH_CHARS)}\n[diff cut at ${PATCH_CHARS} characters]\n`;
	return { changes: listed, patch };
}

async function textPatch(source: TreeSource, path: string, was: PathState, now: PathState): Promise<string> {
	const text = async (s: PathState) => {
		if (s.kind === "absent") return "";
		if (s.kind !== "file" || !s.sha256 || s.size > DIFF_MAX_BYTES) return undefined;
		const bytes = await source.blob(s.sha256);
		return bytes && !bytes.includes(0) ? bytes.toString("utf8") : undefined;
	};
	const a = await text(was);
	const b = await text(now);
	if (a === undefined || b === undefined) return "";
	return jsdiff().createTwoFilesPatch(
		was.kind === "absent" ? "/dev/null" : path,
		now.kind === "absent" ? "/dev/null" : path,
		a,
		b,
		"",
		"",
		{ context: 3 },
	);
}
