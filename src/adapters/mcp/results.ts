/**
 * keel ↔ MCP shapes: a ToolDefinition as an MCP Tool, a CallResult as a CallToolResult.
 *
 * Where keel's extra facts go: a success carries `details` and `elapsedMs` in `_meta` only, never in
 * `structuredContent`, because some clients (Claude Code, anthropics/claude-code#55677 and #79944)
 * hand the model JSON.stringify(structuredContent) instead of the text when both are present, which
 * would hide the file the model asked for. A failure carries the error object in `structuredContent`
 * too, with `ok: false`, `code`, `message` and `retry` at its top level beside the full `error`
 * object: Codex forwards only structuredContent when a result has it, so that part alone must say
 * that the call failed, how, and what to do.
 *
 * Every result is bounded (boundResult) below what MCP clients accept in one message: the SDK
 * client's stdio reader stops at 10 MiB, and a larger message kills its connection.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchema } from "../../boundary/schema.js";
import type { CallResult } from "../../session.js";
import type { Content, ToolDefinition } from "../../tools/types.js";
import { jsonSafe, toBoundResult } from "../binding.js";

/** `_meta` keys (MCP reserves only prefixes under modelcontextprotocol/mcp). */
export const META_DETAILS = "keel/details";
export const META_ELAPSED_MS = "keel/elapsedMs";

/** Tools that run code the model wrote: those reach whatever the code reaches (openWorldHint stays true). */
const OPEN_WORLD_TOOLS = new Set(["bash", "python", "python_jobs", "exec_command", "write_stdin", "process"]);

/** The schema as plain JSON Schema (its argument type is TypeScript's only). */
const publishedSchema = (schema: JsonSchema): JsonSchema => schema;

export function toMcpTool(def: ToolDefinition): Tool {
	const a = def.annotations;
	return {
		name: def.name,
		title: def.label,
		description: def.description,
		inputSchema: publishedSchema(def.parameters) as Tool["inputSchema"],
		annotations: {
			title: def.label,
			readOnlyHint: a.readOnly,
			destructiveHint: a.destructive,
			idempotentHint: a.idempotent,
			// File and search tools touch only the roots (the MCP default, true, would say otherwise).
			openWorldHint: OPEN_WORLD_TOOLS.has(def.name),
		},
	};
}

function toBlock(c: Content): CallToolResult["content"][number] {
	return c.type === "text"
		? { type: "text", text: c.text }
		: { type: "image", data: c.data, mimeType: c.mimeType };
}

export function toCallToolResult(r: CallResult): CallToolResult {
	const bound = toBoundResult(r);
	const meta: Record<string, unknown> = { [META_ELAPSED_MS]: bound.elapsedMs };
	if (bound.error) {
		const e = bound.error;
		return {
			isError: true,
			content: [{ type: "text", text: bound.text }],
			structuredContent: jsonSafe({
				ok: false,
				code: e.code,
				message: e.message,
				retry: e.retry,
				...(e.directive ? { directive: e.directive } : {}),
				error: e,
				elapsedMs: bound.elapsedMs,
			}) as Record<string, unknown>,
			_meta: meta,
		};
	}
	if (bound.details !== undefined) meta[META_DETAILS] = bound.details;
	return { content: bound.content.map(toBlock), _meta: meta };
}
