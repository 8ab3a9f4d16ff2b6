/** What a model-facing tool is: a schema, an annotation set, and execute(args, ctx). */
import type { Static, TSchema } from "typebox";
import { type Checker, compileChecker } from "../boundary/validate.js";
import type { Session } from "../session.js";

export interface TextContent {
	type: "text";
	text: string;
}

export interface ImageContent {
	type: "image";
	data: string;
	mimeType: string;
}

export type Content = TextContent | ImageContent;

export interface ToolResult<D = unknown> {
	content: Content[];
	details?: D;
}

export interface ToolAnnotations {
	readOnly: boolean;
	destructive: boolean;
	idempotent: boolean;
}

export interface ToolContext {
	session: Session;
	signal?: AbortSignal;
	onUpdate?: (partial: ToolResult) => void;
}

export interface ToolSpec<S extends TSchema = TSchema> {
	name: string;
	label: string;
	description: string;
	parameters: S;
	annotations: ToolAnnotations;
	/** Repair well-known model quirks before validation (e.g. an array sent as a JSON string). */
	prepareArguments?: (raw: unknown) => unknown;
	execute(args: Static<S>, ctx: ToolContext): Promise<ToolResult>;
}

export interface ToolDefinition<S extends TSchema = TSchema> extends ToolSpec<S> {
	/** Throws INVALID_ARGS when `args` does not fit the schema. */
	check: Checker;
}

/** Attach a compiled validator to a tool spec (compiled once, when the module loads). */
export function defineTool<S extends TSchema>(spec: ToolSpec<S>): ToolDefinition<S> {
	return { ...spec, check: compileChecker(spec.name, spec.parameters) };
}

export function text(t: string): TextContent {
	return { type: "text", text: t };
}
