/**
 * keel/openai-agents: a session's tools as @openai/agents function tools, plus keel behind the
 * SDK's own apply_patch and shell shapes (editor.ts, shell.ts).
 *
 * The tools are non-strict unless asked: keel's schemas have optional fields, which strict mode
 * takes only rewritten (every field required, the optional ones nullable; see ../strict.ts). keel
 * validates the arguments itself either way.
 */
import type { JsonSchema, StrictJsonSchema } from "../../boundary/schema.js";
import { type BoundResult, bindTools, type ToolSource } from "../binding.js";
import { offeredSchema, type StrictBindOptions } from "../strict.js";
import { keelEditor } from "./editor.js";
import { agents } from "./sdk.js";
import type { KeelApplyPatchTool, KeelFunctionTool } from "./types.js";

export { keelEditor } from "./editor.js";
export { keelShell } from "./shell.js";
export type {
	ApplyPatchOperation,
	ApplyPatchResult,
	Editor,
	KeelApplyPatchTool,
	KeelFunctionTool,
	Shell,
	ShellAction,
	ShellResult,
} from "./types.js";

/** Options of keelTools for the OpenAI Agents SDK. */
export interface KeelAgentsOptions extends StrictBindOptions {
	/**
	 * Serve apply_patch as the SDK's own applyPatchTool over keelEditor(session) (the shape OpenAI's
	 * models are trained on) in place of keel's apply_patch function tool, so the model is never
	 * offered two tools of that name. Needs a session with the file tool (profile "unified").
	 */
	editor?: boolean;
}

/** What the model gets back: the text (a failure's errorText), or text and image parts. */
export function toAgentsOutput(r: BoundResult) {
	if (r.isError || r.images.length === 0) return r.text;
	return r.content.map((c) =>
		c.type === "text"
			? { type: "text" as const, text: c.text }
			: { type: "image" as const, image: { data: c.data, mediaType: c.mimeType } },
	);
}

/** A session's tools as OpenAI Agents function tools (and, with `editor`, apply_patch as the SDK's own tool). */
export function keelTools(
	session: ToolSource,
	options?: StrictBindOptions & { editor?: false },
): KeelFunctionTool[];
export function keelTools(
	session: ToolSource,
	options: KeelAgentsOptions,
): Array<KeelFunctionTool | KeelApplyPatchTool>;
export function keelTools(
	session: ToolSource,
	options: KeelAgentsOptions = {},
): Array<KeelFunctionTool | KeelApplyPatchTool> {
	const bound = bindTools(session, options).filter((t) => !(options.editor && t.name === "apply_patch"));
	const tools: Array<KeelFunctionTool | KeelApplyPatchTool> = bound.map((t) => {
		const execute = async (input: unknown, _context: unknown, details?: { signal?: AbortSignal }) =>
			toAgentsOutput(await t.call(input, { signal: details?.signal }));
		const parameters = offeredSchema(t.inputSchema, options) as JsonSchema | StrictJsonSchema;
		return agents.tool({
			name: t.name,
			description: t.description,
			parameters,
			strict: options.strict ?? false,
			execute,
		});
	});
	if (options.editor) tools.push(agents.applyPatchTool({ editor: keelEditor(session) }));
	return tools;
}
