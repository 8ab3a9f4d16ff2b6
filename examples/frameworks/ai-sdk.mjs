// keel/ai-sdk in the AI SDK's generateText loop, driven offline by the SDK's mock model.
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { keelTools } from "keel/ai-sdk";
import { CALLS, checkEdited, FINAL_TEXT, scratchProject } from "./workspace.mjs";

const usage = {
	inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
	outputTokens: { total: 1, text: 1, reasoning: 0 },
};
let step = 0;
// A real model goes here (e.g. anthropic("claude-...") from @ai-sdk/anthropic).
const model = new MockLanguageModelV4({
	doGenerate: async () => {
		const call = CALLS[step++];
		return {
			content: call
				? [{ type: "tool-call", toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.args) }]
				: [{ type: "text", text: FINAL_TEXT }],
			finishReason: call ? { unified: "tool-calls", raw: "tool_calls" } : { unified: "stop", raw: "stop" },
			usage,
			warnings: [],
		};
	},
});

const project = await scratchProject();
try {
	const result = await generateText({
		model,
		tools: keelTools(project.session),
		prompt: "Mark the notes final.",
		stopWhen: stepCountIs(5),
	});
	for (const s of result.steps)
		for (const r of s.toolResults) console.log(`${r.toolName}: ${JSON.stringify(r.output).slice(0, 120)}`);
	console.log(`model: ${result.text}`);
	await checkEdited(project);
} finally {
	await project.close();
}
