/**
 * keel/openai-agents: a session's tools as @openai/agents function tools, plus keel behind the
 * SDK's own apply_patch and shell shapes (editor.ts, shell.ts).
 *
 * The tools are non-strict: keel's schemas have optional fields, which strict mode cannot express
 * without rewriting them (every field required, nullable); keel validates the arguments itself.
 */
import type { FunctionTool } from "@openai/agents";
import { type BindOptions, type BoundResult, bindTools, type ToolSource } from "../binding.js";
import { agents } from "./sdk.js";

export { keelEditor } from "./editor.js";
export { keelShell } from "./shell.js";

type ToolParameters = Extract<Parameters<typeof agents.tool>[0], { strict: false }>["parameters"];

/** What the model gets back: the text (a failure's errorText), or text and image parts. */
export function toAgentsOutput(r: BoundResult) {
	if (r.isError || r.images.length === 0) return r.text;
	return r.content.map((c) =>
		c.type === "text"
			? { type: "text" as const, text: c.text }
			: { type: "image" as const, image: { data: c.data, mediaType: c.mimeType } },
	);
}

export function keelTools(session: ToolSource, options: BindOptions = {}): FunctionTool[] {
	return bindTools(session, options).map(
		(t) =>
			agents.tool({
				name: t.name,
				description: t.description,
				parameters: t.inputSchema as ToolParameters,
				strict: false,
				execute: async (input, _context, details) =>
					toAgentsOutput(await t.call(input, { signal: details?.signal })),
			}) as unknown as FunctionTool,
	);
}
