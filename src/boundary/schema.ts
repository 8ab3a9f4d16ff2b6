/**
 * JSON Schema builders for tool arguments: plain objects, the same JSON pi's TypeBox schemas
 * serialize to. keel does not load TypeBox at run time: importing it costs 0.5–0.9 s of CPU
 * (measured with /usr/bin/time on node --input-type=module -e "await import('typebox')"), which
 * every `keel call` would pay.
 */

export interface JsonSchema {
	type?: "object" | "string" | "number" | "integer" | "boolean" | "array";
	description?: string;
	properties?: Record<string, JsonSchema>;
	required?: string[];
	additionalProperties?: boolean;
	items?: JsonSchema;
	minItems?: number;
	maxItems?: number;
	minimum?: number;
	enum?: string[];
}

type Meta = { description?: string };

/** A property that may be left out. */
export interface Optional {
	optional: JsonSchema;
}

export const optional = (schema: JsonSchema): Optional => ({ optional: schema });

export function object(props: Record<string, JsonSchema | Optional>, meta: Meta = {}): JsonSchema {
	const properties: Record<string, JsonSchema> = {};
	const required: string[] = [];
	for (const [key, value] of Object.entries(props)) {
		if ("optional" in value) properties[key] = value.optional;
		else {
			properties[key] = value;
			required.push(key);
		}
	}
	return {
		type: "object",
		...(required.length ? { required } : {}),
		...meta,
		properties,
		additionalProperties: false,
	};
}

export const string = (meta: Meta = {}): JsonSchema => ({ type: "string", ...meta });
export const number = (meta: Meta = {}): JsonSchema => ({ type: "number", ...meta });
export const integer = (meta: Meta & { minimum?: number } = {}): JsonSchema => ({ type: "integer", ...meta });
export const boolean = (meta: Meta = {}): JsonSchema => ({ type: "boolean", ...meta });
export const array = (
	items: JsonSchema,
	meta: Meta & { minItems?: number; maxItems?: number } = {},
): JsonSchema => ({
	type: "array",
	items,
	...meta,
});
export const oneOf = (values: string[], meta: Meta = {}): JsonSchema => ({
	type: "string",
	enum: values,
	...meta,
});
