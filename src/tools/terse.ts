/**
 * A tool with shorter model-facing text: its description replaced and its arguments' descriptions
 * replaced or dropped, for a profile that pays for every character of tool text each turn (the
 * unified profile). Descriptions do not change validation, so the tool's checker is kept.
 */
import { type JsonSchema, UNPUBLISHED_RANGE, withUnpublishedRange } from "../boundary/schema.js";
import type { ToolDefinition } from "./types.js";

export function terse<A, D, N extends string>(
	tool: ToolDefinition<A, D, N>,
	description: string,
	args: Record<string, string | undefined> = {},
): ToolDefinition<A, D, N> {
	const schema = tool.parameters as { properties?: Record<string, Record<string, unknown>> };
	const properties = Object.fromEntries(
		Object.entries(schema.properties ?? {}).map(([name, prop]) => {
			const { description: _old, ...rest } = prop;
			const text = args[name];
			const copy: JsonSchema = text === undefined ? rest : { ...rest, description: text };
			// A range enforced but not published lives on a hidden property the spread leaves behind.
			const hidden = (prop as JsonSchema)[UNPUBLISHED_RANGE];
			return [name, hidden ? withUnpublishedRange(copy, hidden) : copy];
		}),
	);
	return {
		...tool,
		description,
		parameters: { ...schema, properties } as JsonSchema as typeof tool.parameters,
	};
}
