/**
 * keel/mastra: a session's tools as @mastra/core 1.x tools (createTool), keyed by name for
 * `new Agent({ tools })`. Mastra validates input against a tool's schema itself, so the schema is
 * the binding's pass-through Standard JSON Schema and keel validates in Session.call. The model
 * gets images as image parts and failures as error text (the AI SDK's output shapes, which Mastra
 * hands to its models). A tool's partial results (bash's output so far) go to Mastra's tool writer,
 * which an agent's stream shows as "tool-output" chunks: each is the whole output so far.
 */
import { toModelOutput } from "./ai-sdk-output.js";
import { type BindOptions, type BoundResult, bindTools, standardSchema, type ToolSource } from "./binding.js";
import { importPeer } from "./peer.js";
import { callReporting } from "./updates.js";

/**
 * A tool as @mastra/core's createTool makes it, typed by the fields an Agent's `tools` requires
 * (its ToolAction), so keel builds and its published types load without Mastra, an optional peer;
 * the frameworks suite's typecheck hands these to the installed Mastra's Agent.
 */
export interface KeelMastraTool {
	id: string;
	description: string;
	inputSchema?: any;
}

/** keel's tools as Mastra tools, by name. */
export type KeelMastraTools = Record<string, KeelMastraTool>;

interface ToolContext {
	abortSignal?: AbortSignal;
	writer?: { write(chunk: unknown): unknown };
}

/** The part of @mastra/core/tools this adapter calls. */
interface MastraTools {
	createTool(options: {
		id: string;
		description: string;
		inputSchema: unknown;
		execute(input: unknown, context?: ToolContext): Promise<BoundResult>;
		toModelOutput(output: unknown): unknown;
	}): KeelMastraTool;
}

// `as string` keeps the compiler from resolving the peer; the emitted import stays a literal.
const mastra = await importPeer(
	"@mastra/core",
	"keel/mastra",
	() => import("@mastra/core/tools" as string) as Promise<MastraTools>,
);

/** A session's tools as Mastra tools (keel validates; the schema goes through as is). */
export function keelTools(session: ToolSource, options: BindOptions = {}): KeelMastraTools {
	const tools: KeelMastraTools = {};
	for (const t of bindTools(session, options)) {
		tools[t.name] = mastra.createTool({
			id: t.name,
			description: t.description,
			inputSchema: standardSchema(t.inputSchema),
			execute: async (input, context) => {
				const writer = context?.writer;
				return callReporting(
					t,
					input,
					{ signal: context?.abortSignal },
					writer && ((partial) => writer.write(partial)),
				);
			},
			toModelOutput: (output) => toModelOutput(output as BoundResult, 7),
		});
	}
	return tools;
}
