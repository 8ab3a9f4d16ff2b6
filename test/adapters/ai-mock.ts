/** The AI SDK's mock language model, scripted with keel calls (ai-sdk and mastra tests). */
import type { ModelMessage } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { FINAL_TEXT, type ScriptedCall } from "./helpers.js";

const usage = {
	inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
	outputTokens: { total: 1, text: 1, reasoning: 0 },
};

export type CallOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0];

/** A model that makes `script`'s calls one per step, then answers FINAL_TEXT; it keeps every prompt. */
export function scriptedModel(script: ScriptedCall[]): {
	model: MockLanguageModelV4;
	prompts: CallOptions[];
} {
	const prompts: CallOptions[] = [];
	const step = (options: CallOptions) => {
		prompts.push(options);
		return script[prompts.length - 1];
	};
	const model = new MockLanguageModelV4({
		doGenerate: async (options) => {
			const call = step(options);
			return call
				? {
						content: [
							{
								type: "tool-call",
								toolCallId: call.id,
								toolName: call.name,
								input: JSON.stringify(call.args),
							},
						],
						finishReason: { unified: "tool-calls", raw: "tool_calls" },
						usage,
						warnings: [],
					}
				: {
						content: [{ type: "text", text: FINAL_TEXT }],
						finishReason: { unified: "stop", raw: "stop" },
						usage,
						warnings: [],
					};
		},
		doStream: async (options) => {
			const call = step(options);
			const parts = call
				? [{ type: "tool-call", toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.args) }]
				: [
						{ type: "text-start", id: "t" },
						{ type: "text-delta", id: "t", delta: FINAL_TEXT },
						{ type: "text-end", id: "t" },
					];
			return {
				stream: convertArrayToReadableStream([
					{ type: "stream-start", warnings: [] },
					...parts,
					{
						type: "finish",
						finishReason: call
							? { unified: "tool-calls", raw: "tool_calls" }
							: { unified: "stop", raw: "stop" },
						usage,
					},
				] as never[]),
			};
		},
	});
	return { model, prompts };
}

/** The tool results in the last prompt the model saw, by toolCallId. */
export function toolOutputs(prompts: CallOptions[]): Map<string, { type: string; value: unknown }> {
	const out = new Map<string, { type: string; value: unknown }>();
	for (const m of prompts.at(-1)!.prompt as ModelMessage[]) {
		if (m.role !== "tool") continue;
		for (const part of m.content)
			if (part.type === "tool-result") out.set(part.toolCallId, part.output as never);
	}
	return out;
}
