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
import type { JsonSchema } from "../../boundary/schema.js";
import { type BoundResult, bindTools, standardSchema, type ToolSource } from "../binding.js";
import { importPeer } from "../peer.js";
import { offeredSchema, type StrictBindOptions } from "../strict.js";
import { callReporting } from "../updates.js";

/**
 * A tool as @langchain/core's tool() makes it, typed by the members of its StructuredToolInterface
 * (what createAgent, ToolNode and deepagents take), so keel builds and its published types load
 * without LangChain, an optional peer; the frameworks suite's typecheck hands these to the
 * installed LangChain. The Runnable methods' types are LangChain's own and left to it.
 */
export interface KeelLangChainTool {
	name: string;
	description: string;
	schema: any;
	returnDirect: boolean;
	lc_namespace: string[];
	lc_serializable: boolean;
	readonly lc_id: string[];
	/** Runs the tool on one input (LangChain's Runnable.invoke). */
	invoke(...args: any[]): Promise<any>;
	/** Runs the tool (LangChain's older entry point). */
	call(...args: any[]): Promise<any>;
	/** Runs the tool on several inputs. */
	batch(...args: any[]): Promise<any[]>;
	/** Runs the tool, its result as a stream. */
	stream(...args: any[]): Promise<any>;
	/** Runs the tool on each input of a stream. */
	transform(...args: any[]): AsyncGenerator<any>;
	/** The tool's name, with `suffix` appended when given. */
	getName(suffix?: string): string;
}

/** The parts of the config LangChain hands a tool that this adapter reads. */
interface ToolConfig {
	callbacks?: unknown;
	signal?: AbortSignal;
	toolCall?: { id?: string };
	writer?: ((chunk: unknown) => void) | null;
}

/** The parts of @langchain/core this adapter calls. */
type LangChainCore = [
	{
		tool(
			run: (input: unknown, config: ToolConfig) => Promise<unknown>,
			fields: { name: string; description: string; schema: unknown },
		): KeelLangChainTool;
	},
	{
		ToolMessage: new (fields: {
			content: unknown;
			tool_call_id: string;
			name: string;
			status: "error" | "success";
			artifact: unknown;
		}) => unknown;
	},
	{ dispatchCustomEvent(name: string, payload: unknown, config: ToolConfig): Promise<void> },
];

// `as string` keeps the compiler from resolving the peer; the emitted imports stay literals.
const [core, messages, dispatch] = await importPeer(
	"@langchain/core",
	"keel/langchain",
	() =>
		Promise.all([
			import("@langchain/core/tools" as string),
			import("@langchain/core/messages" as string),
			import("@langchain/core/callbacks/dispatch" as string),
		]) as Promise<LangChainCore>,
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

/**
 * `options.strict` offers schemas strict mode accepts, for a chat model bound with
 * `bindTools(tools, { strict: true })`.
 */
export function keelTools(session: ToolSource, options: StrictBindOptions = {}): KeelLangChainTool[] {
	return bindTools(session, options).map((t) => {
		const schema = standardSchema(offeredSchema(t.inputSchema, options) as JsonSchema);
		return core.tool(
			async (input, config) => {
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
					content: toLangChainContent(r),
					tool_call_id: id,
					name: t.name,
					status: r.isError ? "error" : "success",
					artifact: r,
				});
			},
			{ name: t.name, description: t.description, schema },
		);
	});
}
