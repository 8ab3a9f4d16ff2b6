/**
 * Which tools stay active in pi. keel registers every tool it has, under the
 * names of pi's built-ins where they overlap, so no pi built-in read/write/edit/bash/grep/find/ls
 * can come back by any route. The profile then decides which of keel's tools are offered, and the
 * disabled names are switched off. The policy only removes names: tools the user left inactive
 * (pi's --tools) stay inactive.
 */
import { fileToolWithoutHashline } from "../../tools/file.js";
import { PROFILES, type Profile, toolsForProfile } from "../../tools/registry.js";
import type { ToolDefinition } from "../../tools/types.js";

/**
 * Every keel tool, each name once (the union of the profiles' palettes). Where both profiles have
 * a name (read), the pi profile's definition wins: pi registers tools once, at load, before the
 * profile of a session is known, and its read must keep pi's schema (so the unified read's
 * `hashline` option is not offered inside pi, nor file's hashline mode).
 */
export function allKeelTools(): ToolDefinition[] {
	const byName = new Map<string, ToolDefinition>();
	for (const p of PROFILES)
		for (const t of toolsForProfile(p)) if (!byName.has(t.name)) byName.set(t.name, t);
	// pi's read has no hashline option, so the file tool pi offers has no hashline mode either.
	byName.set("file", fileToolWithoutHashline);
	return [...byName.values()];
}

/** Names that must not be active: keel tools outside the profile, and every disabled name. */
export function suppressedNames(profile: Profile, disabled: Iterable<string>): Set<string> {
	const palette = new Set(toolsForProfile(profile).map((t) => t.name));
	const out = new Set(disabled);
	for (const t of allKeelTools()) if (!palette.has(t.name)) out.add(t.name);
	return out;
}

/** The active list with suppressed names removed, or undefined when nothing needs to change. */
export function applyPolicy(
	active: readonly string[],
	suppressed: ReadonlySet<string>,
): string[] | undefined {
	const next = active.filter((n) => !suppressed.has(n));
	return next.length === active.length ? undefined : next;
}
