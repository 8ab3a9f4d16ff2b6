// keel in the Claude Agent SDK: keel's MCP server in-process, the SDK's built-in file tools off.
// Needs a model: set ANTHROPIC_API_KEY (the SDK runs the Claude Code CLI, which calls the API).
// Without it this example says so and exits 0; examples/run-all.mjs counts it as skipped.
import { query } from "@anthropic-ai/claude-agent-sdk";
import { keelAllowedTools, keelMcpServer } from "keel/claude-agent-sdk";
import { checkEdited, scratchProject } from "./workspace.mjs";

if (!process.env.ANTHROPIC_API_KEY) {
	console.log("skipped: set ANTHROPIC_API_KEY to run this example against the API");
	process.exit(0);
}

const project = await scratchProject();
try {
	const options = {
		cwd: project.dir,
		mcpServers: { keel: keelMcpServer(project.session) },
		allowedTools: keelAllowedTools(project.session),
		// Only keel's tools: the SDK's own Read/Edit/Bash would bypass keel's guard.
		tools: [],
		maxTurns: 6,
	};
	for await (const m of query({ prompt: "In notes.txt, replace draft with final.", options })) {
		if (m.type === "result") console.log(`result: ${m.subtype}`);
	}
	await checkEdited(project);
} finally {
	await project.close();
}
