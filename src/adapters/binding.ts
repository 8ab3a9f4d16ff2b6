/**
 * The binding every in-process framework adapter stands on: a keel session's
 * palette, once, as (name, description, JSON Schema, annotations, call) with results in one
 * neutral shape. Validation, errors, bounds, timing and the failure memory all stay in
 * Session.call; an adapter only renames fields into its framework's idiom.
 *
 * The source is anything with `tools` and `call(name, args, opts)`: a Session, or a provider that
 * opens its session lazily. The MCP adapter (which also passes the client's roots) and the pi
 * adapter (which must throw to mark an error) call the session themselves and take their result
 * shape and error text from here.
 */
import type { JsonSchema } from "../boundary/schema.js";
import type { CallError, CallOptions, CallResult } from "../session.js";
import type { Content, ImageContent, ToolAnnotations, ToolDefinition } from "../tools/types.js";

/** What the binding needs from a session (a Session is one): its tools, and calls by any name. */
export interface ToolSource {
	readonly tools: ToolDefinition[];
	callDynamic(name: string, args: unknown, opts?: CallOptions): Promise<CallResult>;
}

export interface BindOptions {
	/** Only these tools (by keel name); default: the session's whole palette. */
	only?: readonly string[];
}

/** One call's outcome, the same for every framework. */
export interface BoundResult {
	isError: boolean;
	/** Text and image parts in order; a failure has one text part, `text`. */
	content: Content[];
	/** The text parts joined: what a text-only framework hands the model (for a failure: errorText). */
	text: string;
	images: ImageContent[];
	/** The KeelError (code, message, retry, path, directive) when isError. */
	error?: CallError;
	/** The tool's structured details, JSON-safe (for hosts, not the model). */
	details?: unknown;
	elapsedMs: number;
}

export interface BoundTool {
	name: string;
	title: string;
	description: string;
	inputSchema: JsonSchema;
	annotations: ToolAnnotations;
	call(args: unknown, opts?: CallOptions): Promise<BoundResult>;
}

/** What the model reads for a failure: `[CODE] message`, then the failure memory's directive. */
export function errorText(e: CallError): string {
	const head = `[${e.code}] ${e.message}`;
	return e.directive ? `${head}\n\n${e.directive}` : head;
}

export function toBoundResult(r: CallResult): BoundResult {
	if (!r.ok) {
		const text = errorText(r.error);
		return {
			isError: true,
			content: [{ type: "text", text }],
			text,
			images: [],
			error: r.error,
			elapsedMs: r.elapsedMs,
		};
	}
	const texts: string[] = [];
	const images: ImageContent[] = [];
	for (const c of r.content) {
		if (c.type === "text") texts.push(c.text);
		else images.push(c);
	}
	return {
		isError: false,
		content: r.content,
		text: texts.join("\n"),
		images,
		details: r.details === undefined ? undefined : jsonSafe(r.details),
		elapsedMs: r.elapsedMs,
	};
}

export function bindTools(source: ToolSource, options: BindOptions = {}): BoundTool[] {
	const only = options.only && new Set(options.only);
	return source.tools
		.filter((def) => !only || only.has(def.name))
		.map((def) => ({
			name: def.name,
			title: def.label,
			description: def.description,
			inputSchema: def.parameters,
			annotations: def.annotations,
			call: async (args, opts) => toBoundResult(await source.callDynamic(def.name, args, opts)),
		}));
}

/**
 * keel's JSON Schema as a Standard JSON Schema (standardschema.dev) that leaves validation to keel:
 * frameworks that check input against a tool's schema themselves (LangChain, Mastra) would
 * otherwise answer with their own error text and skip keel's repair of known model quirks.
 */
export function standardSchema(schema: JsonSchema) {
	// No JSON Schema keywords of its own, so a framework's JSON Schema validator finds nothing to check.
	return {
		"~standard": {
			version: 1 as const,
			vendor: "keel",
			validate: (value: unknown) => ({ value }),
			jsonSchema: { input: () => schema, output: () => schema },
		},
	};
}

/** Nesting past this is left to JSON.stringify (which also reports a cycle). */
const PLAIN_DEPTH = 32;

/**
 * True when `v` already is what JSON.parse(JSON.stringify(v)) gives back: plain objects and arrays
 * of strings, finite numbers, booleans and null (no bigint, undefined, function, toJSON, class).
 */
function isPlainJson(v: unknown, depth = 0): boolean {
	if (v === null || typeof v === "string" || typeof v === "boolean") return true;
	if (typeof v === "number") return Number.isFinite(v);
	if (typeof v !== "object" || depth > PLAIN_DEPTH) return false;
	if (Array.isArray(v)) return v.every((x) => isPlainJson(x, depth + 1));
	const proto = Object.getPrototypeOf(v);
	if ((proto !== Object.prototype && proto !== null) || "toJSON" in v) return false;
	if (Object.getOwnPropertySymbols(v).length > 0) return false;
	for (const k in v) if (!isPlainJson((v as Record<string, unknown>)[k], depth + 1)) return false;
	return true;
}

/**
 * A JSON-only form: bigints become numbers (or strings past 2^53), functions and undefined drop
 * out. A value that already is plain JSON comes back as it is (most tools' details: a stringify
 * and a parse per call saved); anything else is copied.
 */
export function jsonSafe(value: unknown): unknown {
	if (isPlainJson(value)) return value;
	try {
		return JSON.parse(
			JSON.stringify(value, (_k, v) =>
				typeof v === "bigint" ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : v,
			) ?? "null",
		);
	} catch (e) {
		return { unserializable: e instanceof Error ? e.message : String(e) };
	}
}
