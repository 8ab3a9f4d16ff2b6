/**
 * keel/ai-sdk: a session's tools as a Vercel AI SDK ToolSet (ai 5 and later), for generateText,
 * streamText and ToolLoopAgent. keel validates the arguments (jsonSchema() without a validator);
 * toModelOutput hands the model images as images and failures as error text.
 */
import { createRequire } from "node:module";
import type { JSONSchema7, Tool } from "ai";
import { type BindOptions, type BoundResult, bindTools, type ToolSource } from "./binding.js";
import { importPeer } from "./peer.js";

const ai = await importPeer("ai", "keel/ai-sdk", () => import("ai"));

/** ai 5 takes images as "media", ai 6 as "image-data", ai 7 as "file" with tagged data. */
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
			toModelOutput: ({ output }: { output: BoundResult }) => toModelOutput(output),
		});
	}
	return tools;
}

export function toModelOutput(r: BoundResult): ModelOutput {
	if (r.isError) return { type: "error-text", value: r.text };
	if (r.images.length === 0) return { type: "text", value: r.text };
	return {
		type: "content",
		value: r.content.map((c) => {
			if (c.type === "text") return { type: "text", text: c.text };
			if (AI_MAJOR >= 7) return { type: "file", mediaType: c.mimeType, data: { type: "data", data: c.data } };
			// Earlier majors' shapes, which ai 7's types no longer name.
			return (
				AI_MAJOR === 6
					? { type: "image-data", data: c.data, mediaType: c.mimeType }
					: { type: "media", data: c.data, mediaType: c.mimeType }
			) as never;
		}),
	};
}
