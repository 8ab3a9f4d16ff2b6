/**
 * keel/langchain: a session's tools as @langchain/core tools (for createAgent, LangGraph's
 * ToolNode, deepagents), and a deepagents sandbox backend over the same session (deepagents.ts).
 *
 * LangChain validates a tool's input against a JSON Schema itself, which would put its own error
 * text (and no repair of known model quirks) in front of keel's, so the schema goes over as the
 * binding's pass-through Standard JSON Schema and keel validates in Session.call.
 *
 * A tool's partial results (bash's output so far) go out while it runs, both ways LangChain
 * offers: to the graph's stream writer (`streamMode: "custom"`) and as a custom event named
 * KEEL_TOOL_OUTPUT (`streamEvents`' on_custom_event), each as a KeelToolOutputEvent.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { JsonSchema } from "../../boundary/schema.js";
import { type BoundResult, bindTools, standardSchema, type ToolSource } from "../binding.js";
import { importPeer } from "../peer.js";
import { offeredSchema, type StrictBindOptions } from "../strict.js";
import { callReporting } from "../updates.js";

const [core, messages, dispatch] = await importPeer("@langchain/core", "keel/langchain", () =>
	Promise.all([
		import("@langchain/core/tools"),
		import("@langchain/core/messages"),
		import("@langchain/core/callbacks/dispatch"),
	]),
);

export { KeelSandbox } from "./deepagents.js";

/** The name of the custom event that carries a running tool's partial result. */
export const KEEL_TOOL_OUTPUT = "keel_tool_output";

/** What the stream writer and the custom event carry: the whole output so far, not a delta. */
export interface KeelToolOutputEvent {
	event: typeof KEEL_TOOL_OUTPUT;
	toolCallId?: string;
	name: string;
	output: BoundResult;
}

/** Content for the model: the text, or text and image blocks (LangChain's standard blocks). */
export function toLangChainContent(r: BoundResult) {
	if (r.isError || r.images.length === 0) return r.text;
	return r.content.map((c) =>
		c.type === "text"
			? { type: "text" as const, text: c.text }
			: { type: "image" as const, mimeType: c.mimeType, data: c.data },
	);
}

/** The parts of the config LangChain hands a tool that this adapter reads. */
type ToolConfig = Parameters<typeof dispatch.dispatchCustomEvent>[2] & {
	signal?: AbortSignal;
	toolCall?: { id?: string };
	writer?: ((chunk: unknown) => void) | null;
};

/**
 * `options.strict` offers schemas strict mode accepts, for a chat model bound with
 * `bindTools(tools, { strict: true })`.
 */
export function keelTools(session: ToolSource, options: StrictBindOptions = {}): StructuredToolInterface[] {
	return bindTools(session, options).map((t) => {
		const schema = standardSchema(offeredSchema(t.inputSchema, options) as JsonSchema);
		return core.tool(
			async (input: unknown, config: ToolConfig) => {
				const id = config?.toolCall?.id;
				const report = (output: BoundResult) => {
					const event: KeelToolOutputEvent = {
						event: KEEL_TOOL_OUTPUT,
						toolCallId: id,
						name: t.name,
						output,
					};
					config?.writer?.(event);
					return config?.callbacks
						? dispatch.dispatchCustomEvent(KEEL_TOOL_OUTPUT, event, config)
						: undefined;
				};
				const r = await callReporting(t, input, { signal: config?.signal }, config ? report : undefined);
				if (!id) return toLangChainContent(r);
				// A ToolMessage of our own carries the error status and keel's result as the artifact.
				return new messages.ToolMessage({
					content: toLangChainContent(r) as string,
					tool_call_id: id,
					name: t.name,
					status: r.isError ? "error" : "success",
					artifact: r,
				});
			},
			{ name: t.name, description: t.description, schema: schema as never },
		) as unknown as StructuredToolInterface;
	});
}
