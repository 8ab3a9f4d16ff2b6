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

/**
 * The TypeScript type of the values a schema accepts: carried by the type of a builder's result
 * only (no such property exists at run time), so a tool's argument type is derived from its schema
 * and never written out a second time.
 */
declare const ACCEPTS: unique symbol;

/** A JSON Schema built by the builders below, typed with the values it accepts. */
export type Schema<T> = JsonSchema & { readonly [ACCEPTS]: T };

/** The values a built schema accepts (a tool's argument type: `Accepted<typeof schema>`). */
export type Accepted<S> = S extends { readonly [ACCEPTS]: infer T } ? T : never;

/** A property that may be left out. */
export interface Optional<T = unknown> {
	optional: Schema<T>;
}

export const optional = <T>(schema: Schema<T>): Optional<T> => ({ optional: schema });

type Fields = Record<string, Schema<unknown> | Optional>;
type Flat<T> = { [K in keyof T]: T[K] };
type ObjectOf<P extends Fields> = Flat<
	{ [K in keyof P as P[K] extends Optional ? never : K]: Accepted<P[K]> } & {
		[K in keyof P as P[K] extends Optional ? K : never]?: P[K] extends Optional<infer T> ? T : never;
	}
>;

/** A built schema typed as accepting `T`: the one place the type is attached. */
const typed = <T>(schema: JsonSchema): Schema<T> => schema as Schema<T>;

export function object<P extends Fields>(props: P, meta: Meta = {}): Schema<ObjectOf<P>> {
	const properties: Record<string, JsonSchema> = {};
	const required: string[] = [];
	for (const [key, value] of Object.entries(props)) {
		if ("optional" in value) properties[key] = value.optional;
		else {
			properties[key] = value;
			required.push(key);
		}
	}
	return typed({
		type: "object",
		...(required.length ? { required } : {}),
		...meta,
		properties,
		additionalProperties: false,
	});
}

export const string = (meta: Meta = {}): Schema<string> => typed({ type: "string", ...meta });
export const number = (meta: NumberMeta = {}): Schema<number> => typed({ type: "number", ...meta });
export const integer = (meta: NumberMeta = {}): Schema<number> => typed({ type: "integer", ...meta });

/** `schema` with `range` enforced but not published (see UNPUBLISHED_RANGE). */
export function withUnpublishedRange<S extends JsonSchema>(schema: S, range: NumericRange): S {
	return hideRange({ ...schema }, range);
}

/** Non-enumerable too, so deep comparisons with the published JSON (tests, hosts) do not see it. */
function hideRange<S extends JsonSchema>(schema: S, range: NumericRange): S {
	Object.defineProperty(schema, UNPUBLISHED_RANGE, { value: range, enumerable: false });
	return schema;
}

/** `schema` with `range` published as JSON Schema bounds (the unit stays in the checker's messages). */
export function withRange<S extends JsonSchema>(schema: S, range: NumericRange): S {
	const { unit, ...bounds } = range;
	const published: S = { ...schema, ...bounds };
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
export const boolean = (meta: Meta = {}): Schema<boolean> => typed({ type: "boolean", ...meta });
export const array = <T>(
	items: Schema<T>,
	meta: Meta & { minItems?: number; maxItems?: number } = {},
): Schema<T[]> =>
	typed({
		type: "array",
		items,
		...meta,
	});
export const oneOf = <const V extends string>(values: readonly V[], meta: Meta = {}): Schema<V> =>
	typed({
		type: "string",
		enum: [...values],
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
