/**
 * keel/ai-sdk: a session's tools as a Vercel AI SDK ToolSet (ai 5 and later), for generateText,
 * streamText and ToolLoopAgent. keel validates the arguments (jsonSchema() without a validator);
 * toModelOutput hands the model images as images and failures as error text. `execute` streams:
 * a tool's partial results (bash's output so far) are the SDK's preliminary tool results, and the
 * last result is the final one, the only one the model sees.
 */
import { createRequire } from "node:module";
import type { JSONSchema7, Tool } from "ai";
import { toModelOutput } from "./ai-sdk-output.js";
import { type BoundResult, bindTools, type ToolSource } from "./binding.js";
import { importPeer } from "./peer.js";
import { offeredSchema, type StrictBindOptions } from "./strict.js";
import { streamCall } from "./updates.js";

const ai = await importPeer("ai", "keel/ai-sdk", () => import("ai"));

const AI_MAJOR = Number(createRequire(import.meta.url)("ai/package.json").version.split(".")[0]);

/** keel's tools as an AI SDK ToolSet, by name. */
export type KeelToolSet = Record<string, Tool<unknown, BoundResult>>;
type ModelOutput = Awaited<ReturnType<NonNullable<Tool["toModelOutput"]>>>;

/** `options.strict` offers schemas the SDK's `strict` mode takes, and sets that switch on each tool. */
export function keelTools(session: ToolSource, options: StrictBindOptions = {}): KeelToolSet {
	const tools: KeelToolSet = {};
	for (const t of bindTools(session, options)) {
		tools[t.name] = ai.tool({
			title: t.title,
			description: t.description,
			inputSchema: ai.jsonSchema(offeredSchema(t.inputSchema, options) as JSONSchema7),
			...(options.strict ? { strict: true } : {}),
			execute: (input: unknown, { abortSignal }): AsyncIterable<BoundResult> =>
				streamCall(t, input, { signal: abortSignal }),
			toModelOutput: ({ output }: { output: BoundResult }) => toModelOutput(output, AI_MAJOR) as ModelOutput,
		});
	}
	return tools;
}
