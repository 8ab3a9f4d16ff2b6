/**
 * Validation of tool arguments against the JSON Schema subset in schema.ts, with errors a model
 * can act on (which field, what was expected).
 */
import { KeelError } from "./errors.js";
import { type JsonSchema, type NumericRange, rangeOf } from "./schema.js";

export type Checker = (args: unknown) => void;

const MAX_PROBLEMS = 5;

/** Any surrogate code unit left over once the `u` flag has paired the well-formed ones. */
const LONE_SURROGATE = /\p{Cs}/u;

function typeName(v: unknown): string {
	if (v === null) return "null";
	if (Array.isArray(v)) return "array";
	return typeof v;
}

function fits(schema: JsonSchema, v: unknown): boolean {
	switch (schema.type) {
		case "object":
			return typeof v === "object" && v !== null && !Array.isArray(v);
		case "array":
			return Array.isArray(v);
		case "integer":
			return typeof v === "number" && Number.isInteger(v);
		case "number":
			return typeof v === "number" && Number.isFinite(v);
		case "string":
		case "boolean":
			return typeof v === schema.type;
		default:
			return true;
	}
}

/** "must be from 1 to 10 seconds"-style wording of a range, or undefined when `v` is inside it. */
function outsideRange(range: NumericRange, v: number): string | undefined {
	const { minimum, exclusiveMinimum, maximum, unit } = range;
	const below =
		(minimum !== undefined && v < minimum) || (exclusiveMinimum !== undefined && v <= exclusiveMinimum);
	const above = maximum !== undefined && v > maximum;
	if (!below && !above) return undefined;
	const low =
		exclusiveMinimum !== undefined
			? `greater than ${exclusiveMinimum}`
			: minimum !== undefined
				? `at least ${minimum}`
				: undefined;
	const high = maximum !== undefined ? `at most ${maximum}` : undefined;
	const bounds = [low, high].filter(Boolean).join(" and ");
	return `must be ${bounds}${unit ? ` ${unit}` : ""} (got ${v})`;
}

function collect(schema: JsonSchema, v: unknown, at: string, out: string[]): void {
	if (out.length >= MAX_PROBLEMS) return;
	const where = at || "arguments";
	if (!fits(schema, v)) {
		out.push(
			`${where} must be ${schema.type === "integer" ? "an integer" : `a ${schema.type}`} (got ${typeName(v)})`,
		);
		return;
	}
	if (schema.enum && !schema.enum.includes(v as string)) {
		out.push(`${where} must be one of ${schema.enum.map((e) => `"${e}"`).join(", ")}`);
	}
	if (schema.type === "number" || schema.type === "integer") {
		const problem = outsideRange(rangeOf(schema), v as number);
		if (problem) out.push(`${where} ${problem}`);
	}
	// A lone UTF-16 surrogate has no UTF-8 form: it would reach a file, a path or a command as
	// U+FFFD, so two different arguments would name one thing.
	if (typeof v === "string" && LONE_SURROGATE.test(v)) {
		out.push(`${where} has a broken character (a lone UTF-16 surrogate); send whole characters`);
	}
	if (schema.type === "array") {
		const arr = v as unknown[];
		if (schema.minItems !== undefined && arr.length < schema.minItems)
			out.push(`${where} must have at least ${schema.minItems} item(s)`);
		if (schema.maxItems !== undefined && arr.length > schema.maxItems)
			out.push(`${where} must have at most ${schema.maxItems} items`);
		if (schema.items) for (const [i, item] of arr.entries()) collect(schema.items, item, `${at}[${i}]`, out);
	}
	if (schema.type === "object") {
		const obj = v as Record<string, unknown>;
		const props = schema.properties ?? {};
		const prefix = at ? `${at}.` : "";
		for (const key of schema.required ?? []) {
			if (obj[key] === undefined) out.push(`missing required field "${prefix}${key}"`);
		}
		for (const [key, value] of Object.entries(obj)) {
			const sub = props[key];
			if (!sub) {
				if (schema.additionalProperties === false) out.push(`unexpected field "${prefix}${key}"`);
			} else if (value !== undefined) collect(sub, value, `${prefix}${key}`, out);
		}
	}
}

/** Problems with `v` against `schema`, at most five. */
export function validate(schema: JsonSchema, v: unknown): string[] {
	const out: string[] = [];
	collect(schema, v, "", out);
	return out;
}

/** A checker that throws INVALID_ARGS naming each problem. */
export function compileChecker(toolName: string, schema: JsonSchema): Checker {
	return (args: unknown) => {
		if (args === null || typeof args !== "object" || Array.isArray(args)) {
			throw new KeelError("INVALID_ARGS", `Arguments for ${toolName} must be a JSON object.`);
		}
		const problems = validate(schema, args);
		if (problems.length)
			throw new KeelError("INVALID_ARGS", `Invalid arguments for ${toolName}: ${problems.join("; ")}.`);
	};
}

/**
 * `v` with every `null` in an optional field left out, at any depth the schema describes: a model
 * in strict mode must send every field and says "absent" with null (strictSchema() offers it that
 * way), and keel's schemas have no field where null means anything else. A null in a required
 * field stays for the checker to refuse. Copies what it changes; `v` itself is left as it was.
 */
export function withoutAbsentNulls(schema: JsonSchema, v: unknown): unknown {
	if (schema.type === "array" && schema.items && Array.isArray(v)) {
		const items = schema.items;
		let changed = false;
		const out = v.map((item) => {
			const next = withoutAbsentNulls(items, item);
			if (next !== item) changed = true;
			return next;
		});
		return changed ? out : v;
	}
	if (schema.type !== "object" || !schema.properties || typeof v !== "object" || v === null) return v;
	if (Array.isArray(v)) return v;
	const required = new Set(schema.required ?? []);
	let out: Record<string, unknown> | undefined;
	for (const [key, value] of Object.entries(v)) {
		const sub = schema.properties[key];
		if (!sub) continue;
		if (value === null && !required.has(key)) {
			out ??= { ...(v as Record<string, unknown>) };
			delete out[key];
			continue;
		}
		const next = withoutAbsentNulls(sub, value);
		if (next !== value) {
			out ??= { ...(v as Record<string, unknown>) };
			out[key] = next;
		}
	}
	return out ?? v;
}
