/**
 * Arguments an MCP client adds to every tool for its own control, not for the tool. Gemini CLI adds
 * an optional `wait_for_previous` boolean to each tool's schema (it orders calls) and passes it on
 * when its model sets it. keel's tools refuse fields they do not declare (so a misspelled field gets
 * INVALID_ARGS naming it); these known names are removed before that check, and only when the tool
 * does not declare a field of that name itself. Add a name here when another client is found doing
 * the same; never a name a model could mean for a tool.
 */
export const CLIENT_CONTROL_FIELDS: readonly string[] = ["wait_for_previous"];

export function withoutClientControl(args: unknown, declared: ReadonlySet<string> | undefined): unknown {
	if (args === null || typeof args !== "object" || Array.isArray(args)) return args;
	const strip = CLIENT_CONTROL_FIELDS.filter((f) => f in args && !declared?.has(f));
	if (strip.length === 0) return args;
	const copy: Record<string, unknown> = { ...(args as Record<string, unknown>) };
	for (const f of strip) delete copy[f];
	return copy;
}
