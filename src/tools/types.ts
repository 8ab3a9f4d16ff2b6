/** What a model-facing tool is: a schema, an annotation set, and execute(args, ctx). */

import type { WorkOwner } from "../boundary/call-scope.js";
import type { Schema } from "../boundary/schema.js";
import { type Checker, compileChecker, withoutAbsentNulls } from "../boundary/validate.js";
import type { CheckMode } from "../syntax/report.js";
import type { ToolHost } from "../tool-host.js";

/** A text part of a tool result. */
export interface TextContent {
	type: "text";
	text: string;
}

/** An image part of a tool result, base64-encoded. */
export interface ImageContent {
	type: "image";
	data: string;
	mimeType: string;
}

/** One part of a tool result: text, or an image. */
export type Content = TextContent | ImageContent;

/** A tool's answer: its content for the model and its structured details for the host. */
export interface ToolResult<D = unknown> {
	content: Content[];
	details?: D;
}

/** What a tool does to the workspace: only reads, may destroy, is idempotent (MCP's hints). */
export interface ToolAnnotations {
	readOnly: boolean;
	destructive: boolean;
	idempotent: boolean;
}

export interface ToolContext {
	/** What the tool may use of the session it runs in. */
	host: ToolHost;
	/** Aborted when the caller aborts, when the call has its answer, or when the session closes. */
	signal?: AbortSignal;
	/** The call's owner for work not awaited at once (see boundary/call-scope.ts); set by Session.call. */
	scope?: WorkOwner;
	onUpdate?: (partial: ToolResult) => void;
	/** The call's syntax check mode, when the caller set one (else the session's). */
	check?: CheckMode;
}

/**
 * A tool as written: `A` is its argument type (the one its schema accepts), `D` the type of its
 * result's `details`, `N` its name.
 */
export interface ToolSpec<A = any, D = unknown, N extends string = string> {
	name: N;
	label: string;
	description: string;
	/** The JSON Schema of the arguments; its builders give it the type `A`. */
	parameters: Schema<A>;
	annotations: ToolAnnotations;
	/**
	 * Repair well-known model quirks before validation (e.g. an array sent as a JSON string). A
	 * defined tool's also reads null in an optional field as absent.
	 */
	prepareArguments?: (raw: unknown) => unknown;
	/** Run the tool with checked arguments on the host in `ctx`; throws a KeelError for a failure. */
	execute(args: A, ctx: ToolContext): Promise<ToolResult<D>>;
}

/** A tool with its compiled argument check: what a session offers and runs. */
export interface ToolDefinition<A = any, D = unknown, N extends string = string> extends ToolSpec<A, D, N> {
	/** Throws INVALID_ARGS when `args` does not fit the schema. */
	check: Checker;
}

/** The argument type of a tool definition. */
export type ArgsOf<T> = T extends ToolDefinition<infer A, any, any> ? A : never;
/** The type of a tool definition's result details. */
export type DetailsOf<T> = T extends ToolDefinition<any, infer D, any> ? D : never;

/**
 * Attach a compiled validator to a tool spec (compiled once, when the module loads), and the
 * boundary's reading of null as "absent" to its argument repair, so every host that runs
 * prepareArguments before its own validation (Session.call, pi) gets both. The argument type is
 * the schema's, the details type what execute returns.
 */
export function defineTool<A, D, const N extends string>(spec: ToolSpec<A, D, N>): ToolDefinition<A, D, N> {
	const { parameters, prepareArguments: repair } = spec;
	return {
		...spec,
		prepareArguments: (raw) => withoutAbsentNulls(parameters, repair ? repair(raw) : raw),
		check: compileChecker(spec.name, spec.parameters),
	};
}

export function text(t: string): TextContent {
	return { type: "text", text: t };
}
