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
import type { CallResult } from "../../session.js";
import type { Content, ToolDefinition } from "../../tools/types.js";
import { jsonSafe } from "../binding.js";

/** `_meta` keys (MCP reserves only prefixes under modelcontextprotocol/mcp). */
export const META_DETAILS = "keel/details";
export const META_ELAPSED_MS = "keel/elapsedMs";

/** Tools that run code the model wrote: those reach whatever the code reaches (openWorldHint stays true). */
const OPEN_WORLD_TOOLS = new Set(["bash", "python", "python_jobs"]);

export function toMcpTool(def: ToolDefinition): Tool {
	const a = def.annotations;
	return {
		name: def.name,
		title: def.label,
		description: def.description,
		inputSchema: def.parameters as Tool["inputSchema"],
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

/** What the model reads: `[CODE] message`, then the failure memory's directive when there is one (R3). */
function errorText(r: Extract<CallResult, { ok: false }>): string {
	const head = `[${r.error.code}] ${r.error.message}`;
	return r.error.directive ? `${head}\n\n${r.error.directive}` : head;
}

export function toCallToolResult(r: CallResult): CallToolResult {
	const meta: Record<string, unknown> = { [META_ELAPSED_MS]: r.elapsedMs };
	if (!r.ok) {
		return {
			isError: true,
			content: [{ type: "text", text: errorText(r) }],
			structuredContent: jsonSafe({
				ok: false,
				code: r.error.code,
				message: r.error.message,
				retry: r.error.retry,
				...(r.error.directive ? { directive: r.error.directive } : {}),
				error: r.error,
				elapsedMs: r.elapsedMs,
			}) as Record<string, unknown>,
			_meta: meta,
		};
	}
	if (r.details !== undefined) meta[META_DETAILS] = jsonSafe(r.details);
	return { content: r.content.map(toBlock), _meta: meta };
}
