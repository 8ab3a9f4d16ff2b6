// keel/mastra in a Mastra Agent, driven offline by the AI SDK's mock model.
import { Agent } from "@mastra/core/agent";
import { MockLanguageModelV4 } from "ai/test";
import { keelTools } from "keel/mastra";
import { CALLS, checkEdited, FINAL_TEXT, scratchProject } from "./workspace.mjs";

const usage = {
	inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
	outputTokens: { total: 1, text: 1, reasoning: 0 },
};
let step = 0;
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
	// A real model goes here (a Mastra model string such as "anthropic/claude-...").
	const agent = new Agent({
		id: "editor",
		name: "editor",
		instructions: "Edit files with keel's tools.",
		model,
		tools: keelTools(project.session),
	});
	const result = await agent.generate("Mark the notes final.", { maxSteps: 5 });
	console.log(`model: ${result.text}`);
	await checkEdited(project);
} finally {
	await project.close();
}
