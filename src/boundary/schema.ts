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
	exclusiveMinimum?: number;
	maximum?: number;
	enum?: string[];
	/** A range the checker enforces that the published JSON does not state (a symbol key: JSON.stringify skips it). */
	[UNPUBLISHED_RANGE]?: NumericRange;
}

/** The bounds of a numeric argument, as JSON Schema states them, plus the unit its messages name. */
export interface NumericRange {
	minimum?: number;
	exclusiveMinimum?: number;
	maximum?: number;
	unit?: string;
}

/**
 * Where a range lives when it must not be published: pi's tools keep pi's schemas exactly, and
 * pi's schemas have no ranges, yet every numeric argument of every tool is bounded.
 */
export const UNPUBLISHED_RANGE: unique symbol = Symbol("keel.unpublishedRange");

type Meta = { description?: string };
type NumberMeta = Meta & Omit<NumericRange, "unit">;

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
export const number = (meta: NumberMeta = {}): JsonSchema => ({ type: "number", ...meta });
export const integer = (meta: NumberMeta = {}): JsonSchema => ({ type: "integer", ...meta });

/** `schema` with `range` enforced but not published (see UNPUBLISHED_RANGE). */
export function withUnpublishedRange(schema: JsonSchema, range: NumericRange): JsonSchema {
	return hideRange({ ...schema }, range);
}

/** Non-enumerable too, so deep comparisons with the published JSON (tests, hosts) do not see it. */
function hideRange(schema: JsonSchema, range: NumericRange): JsonSchema {
	Object.defineProperty(schema, UNPUBLISHED_RANGE, { value: range, enumerable: false });
	return schema;
}

/** `schema` with `range` published as JSON Schema bounds (the unit stays in the checker's messages). */
export function withRange(schema: JsonSchema, range: NumericRange): JsonSchema {
	const { unit, ...bounds } = range;
	const published: JsonSchema = { ...schema, ...bounds };
	return unit ? hideRange(published, { unit }) : published;
}

/** The range the checker enforces on `schema`: its published bounds, then the unpublished ones. */
export function rangeOf(schema: JsonSchema): NumericRange {
	const published: NumericRange = {};
	if (schema.minimum !== undefined) published.minimum = schema.minimum;
	if (schema.exclusiveMinimum !== undefined) published.exclusiveMinimum = schema.exclusiveMinimum;
	if (schema.maximum !== undefined) published.maximum = schema.maximum;
	return { ...published, ...schema[UNPUBLISHED_RANGE] };
}
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

/** A JSON Schema in the form OpenAI's strict mode takes: a field's type may include "null". */
export interface StrictJsonSchema {
	type?: JsonSchema["type"] | [NonNullable<JsonSchema["type"]>, "null"];
	description?: string;
	properties?: Record<string, StrictJsonSchema>;
	required?: string[];
	additionalProperties?: false;
	items?: StrictJsonSchema;
	minItems?: number;
	maxItems?: number;
	minimum?: number;
	exclusiveMinimum?: number;
	maximum?: number;
	enum?: Array<string | null>;
}

/**
 * `schema` as strict mode (OpenAI's, and the frameworks' `strict` switches that pass it on)
 * accepts it: every object lists all its fields as required and no others, and a field keel treats
 * as optional takes null, which the boundary reads as "absent" (validate.ts, withoutAbsentNulls).
 * The checker still runs against keel's own schema.
 */
export function strictSchema(schema: JsonSchema): StrictJsonSchema {
	return strictNode(schema, false);
}

function strictNode(schema: JsonSchema, nullable: boolean): StrictJsonSchema {
	const { properties, required, items, enum: values, type, additionalProperties: _open, ...rest } = schema;
	const out: StrictJsonSchema = { ...rest };
	if (type) out.type = nullable ? [type, "null"] : type;
	if (values) out.enum = nullable ? [...values, null] : [...values];
	if (items) out.items = strictNode(items, false);
	if (type === "object") {
		const given = new Set(required ?? []);
		const props = properties ?? {};
		out.properties = Object.fromEntries(
			Object.entries(props).map(([key, sub]) => [key, strictNode(sub, !given.has(key))]),
		);
		out.required = Object.keys(props);
		out.additionalProperties = false;
	}
	return out;
}
