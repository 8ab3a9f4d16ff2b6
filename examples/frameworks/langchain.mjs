// keel/langchain in LangChain's createAgent loop, driven offline by @langchain/core's fakeModel.
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { keelTools } from "keel/langchain";
import { createAgent } from "langchain";
import { CALLS, checkEdited, FINAL_TEXT, scratchProject } from "./workspace.mjs";

// A real chat model goes here (e.g. new ChatAnthropic({ model: "claude-..." })).
const model = fakeModel();
for (const c of CALLS) model.respondWithTools([{ name: c.name, args: c.args, id: c.id }]);
model.respond(new AIMessage(FINAL_TEXT));

const project = await scratchProject();
try {
	const agent = createAgent({ model, tools: keelTools(project.session) });
	const result = await agent.invoke({ messages: [{ role: "user", content: "Mark the notes final." }] });
	for (const m of result.messages) if (m.getType() === "tool") console.log(`${m.name}: ${m.content}`);
	console.log(`model: ${result.messages.at(-1).content}`);
	await checkEdited(project);
} finally {
	await project.close();
}
