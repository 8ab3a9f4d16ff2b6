/**
 * keel/ai-sdk: a session's tools as a Vercel AI SDK ToolSet (ai 5 and later), for generateText,
 * streamText and ToolLoopAgent. keel validates the arguments (jsonSchema() without a validator);
 * toModelOutput hands the model images as images and failures as error text.
 */
import { createRequire } from "node:module";
import type { JSONSchema7, Tool } from "ai";
import { toModelOutput } from "./ai-sdk-output.js";
import { type BindOptions, type BoundResult, bindTools, type ToolSource } from "./binding.js";
import { importPeer } from "./peer.js";

const ai = await importPeer("ai", "keel/ai-sdk", () => import("ai"));

const AI_MAJOR = Number(createRequire(import.meta.url)("ai/package.json").version.split(".")[0]);

export type KeelToolSet = Record<string, Tool<unknown, BoundResult>>;
type ModelOutput = Awaited<ReturnType<NonNullable<Tool["toModelOutput"]>>>;

export function keelTools(session: ToolSource, options: BindOptions = {}): KeelToolSet {
	const tools: KeelToolSet = {};
	for (const t of bindTools(session, options)) {
		tools[t.name] = ai.tool({
			title: t.title,
			description: t.description,
			inputSchema: ai.jsonSchema(t.inputSchema as JSONSchema7),
			execute: (input: unknown, { abortSignal }): Promise<BoundResult> =>
				t.call(input, { signal: abortSignal }),
			toModelOutput: ({ output }: { output: BoundResult }) => toModelOutput(output, AI_MAJOR) as ModelOutput,
		});
	}
	return tools;
}
