// keel/openai-agents in the Agents SDK's Runner, driven offline by the SDK's ScriptedModel.
import { Agent, run, setTracingDisabled } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { keelTools } from "keel/openai-agents";
import { CALLS, checkEdited, FINAL_TEXT, scratchProject } from "./workspace.mjs";

// A real model goes here (the Agent's default is OpenAI's; set OPENAI_API_KEY).
const model = new ScriptedModel([
	...CALLS.map((c) => [functionCall(c.name, c.args, { callId: c.id })]),
	[assistantMessage(FINAL_TEXT)],
]);

setTracingDisabled(true); // offline: no trace export
const project = await scratchProject();
try {
	const agent = new Agent({ name: "editor", model, tools: keelTools(project.session) });
	const result = await run(agent, "Mark the notes final.", { maxTurns: 5 });
	console.log(`model: ${result.finalOutput}`);
	await checkEdited(project);
} finally {
	await project.close();
}
