/**
 * The judge of "strict mode accepts this schema": OpenAI's own SDK helper (toStrictJsonSchema,
 * which throws on an optional field that is not nullable and otherwise adds what strict mode
 * needs) must find nothing to add, and every keyword must be one strict mode supports.
 */
import { toStrictJsonSchema } from "openai/lib/transform";
import { expect } from "vitest";

/** Keywords OpenAI's structured outputs take (its documented subset of JSON Schema). */
const SUPPORTED = new Set([
	"type",
	"description",
	"properties",
	"required",
	"additionalProperties",
	"items",
	"enum",
	"minItems",
	"maxItems",
	"minimum",
	"maximum",
	"exclusiveMinimum",
	"exclusiveMaximum",
	"multipleOf",
	"pattern",
	"format",
]);

function keywords(schema: Record<string, unknown>, at: string, out: string[]): void {
	for (const [key, value] of Object.entries(schema)) {
		if (!SUPPORTED.has(key)) out.push(`${at}.${key}`);
		if (key === "properties")
			for (const [name, sub] of Object.entries(value as Record<string, Record<string, unknown>>))
				keywords(sub, `${at}.${name}`, out);
		if (key === "items") keywords(value as Record<string, unknown>, `${at}[]`, out);
	}
}

/** Fails the test naming each tool whose schema strict mode would refuse or change. */
export function strictToolsJudge(tools: Array<{ name: string; schema: unknown }>): void {
	const refused: string[] = [];
	for (const { name, schema } of tools) {
		const plain = JSON.parse(JSON.stringify(schema));
		try {
			const fixed = toStrictJsonSchema(plain);
			if (JSON.stringify(fixed) !== JSON.stringify(plain))
				refused.push(`${name}: strict mode would rewrite it`);
		} catch (e) {
			refused.push(`${name}: ${(e as Error).message.split(" which ")[0]}`);
		}
		const unsupported: string[] = [];
		keywords(plain, name, unsupported);
		if (unsupported.length) refused.push(`${name}: unsupported keywords ${unsupported.join(", ")}`);
	}
	expect(refused).toEqual([]);
}
