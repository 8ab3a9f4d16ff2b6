/**
 * keel/langchain: a session's tools as @langchain/core tools (for createAgent, LangGraph's
 * ToolNode, deepagents), and a deepagents sandbox backend over the same session (deepagents.ts).
 *
 * LangChain validates a tool's input against a JSON Schema itself, which would put its own error
 * text (and no repair of known model quirks) in front of keel's, so the schema goes over as the
 * binding's pass-through Standard JSON Schema and keel validates in Session.call.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import {
	type BindOptions,
	type BoundResult,
	bindTools,
	standardSchema,
	type ToolSource,
} from "../binding.js";
import { importPeer } from "../peer.js";

const [core, messages] = await importPeer("@langchain/core", "keel/langchain", () =>
	Promise.all([import("@langchain/core/tools"), import("@langchain/core/messages")]),
);

export { KeelSandbox } from "./deepagents.js";

/** Content for the model: the text, or text and image blocks (LangChain's standard blocks). */
export function toLangChainContent(r: BoundResult) {
	if (r.isError || r.images.length === 0) return r.text;
	return r.content.map((c) =>
		c.type === "text"
			? { type: "text" as const, text: c.text }
			: { type: "image" as const, mimeType: c.mimeType, data: c.data },
	);
}

export function keelTools(session: ToolSource, options: BindOptions = {}): StructuredToolInterface[] {
	return bindTools(session, options).map(
		(t) =>
			core.tool(
				async (input: unknown, config) => {
					const r = await t.call(input, { signal: config?.signal });
					const id = config?.toolCall?.id;
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
				{ name: t.name, description: t.description, schema: standardSchema(t.inputSchema) as never },
			) as unknown as StructuredToolInterface,
	);
}
