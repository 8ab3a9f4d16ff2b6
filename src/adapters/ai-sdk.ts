/**
 * keel/ai-sdk: a session's tools as a Vercel AI SDK ToolSet (ai 5 and later), for generateText,
 * streamText and ToolLoopAgent. keel validates the arguments (jsonSchema() without a validator);
 * toModelOutput hands the model images as images and failures as error text. `execute` streams:
 * a tool's partial results (bash's output so far) are the SDK's preliminary tool results, and the
 * last result is the final one, the only one the model sees.
 *
 * "ai" is an optional peer: the types here are keel's own, so keel builds and its published types
 * load without it; the frameworks suite's typecheck hands a KeelToolSet to the installed ai.
 */
import { createRequire } from "node:module";
import { toModelOutput } from "./ai-sdk-output.js";
import { type BoundResult, bindTools, type ToolSource } from "./binding.js";
import { importPeer } from "./peer.js";
import { offeredSchema, type StrictBindOptions } from "./strict.js";
import { streamCall } from "./updates.js";

/** The part of "ai" this adapter calls. */
interface AiModule {
	tool(definition: KeelAiTool): KeelAiTool;
	jsonSchema(schema: object): unknown;
}

// `as string` keeps the compiler from resolving the peer; the emitted import stays a literal.
const ai = await importPeer("ai", "keel/ai-sdk", () => import("ai" as string) as Promise<AiModule>);

const AI_MAJOR = await aiMajor();

/**
 * ai's major version, from its package.json: a JSON import, which resolves as the peer import above does
 * (the test runner's and Node's resolve hooks see it), or require() on a Node before 20.10, which
 * has no import attributes.
 */
async function aiMajor(): Promise<number> {
	const manifest: { version: string } = await import("ai/package.json" as string, {
		with: { type: "json" },
	}).then(
		(m) => m.default,
		() => createRequire(import.meta.url)("ai/package.json"),
	);
	return Number(manifest.version.split(".")[0]);
}

/**
 * A tool as ai 5, 6 and 7 type it (`Tool`). The schema is the SDK's own jsonSchema() object (branded
 * by a symbol of the SDK's) and the model output differs by major, so both are left to the SDK.
 */
export interface KeelAiTool {
	title?: string;
	description?: string;
	strict?: boolean;
	inputSchema: any;
	/** Runs the call; yields preliminary results while bash runs, then the final one. */
	execute(input: unknown, options: { abortSignal?: AbortSignal }): AsyncIterable<BoundResult>;
	/** The result as the model sees it: text, images as images, failures as error text. */
	toModelOutput(options: { output: BoundResult }): any;
}

/** keel's tools as an AI SDK ToolSet, by name. */
export type KeelToolSet = Record<string, KeelAiTool>;

/** `options.strict` offers schemas the SDK's `strict` mode takes, and sets that switch on each tool. */
export function keelTools(session: ToolSource, options: StrictBindOptions = {}): KeelToolSet {
	const tools: KeelToolSet = {};
	for (const t of bindTools(session, options)) {
		tools[t.name] = ai.tool({
			title: t.title,
			description: t.description,
			inputSchema: ai.jsonSchema(offeredSchema(t.inputSchema, options) as object),
			...(options.strict ? { strict: true } : {}),
			execute: (input, { abortSignal }) => streamCall(t, input, { signal: abortSignal }),
			toModelOutput: ({ output }) => toModelOutput(output, AI_MAJOR),
		});
	}
	return tools;
}
