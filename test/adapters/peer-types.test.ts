/**
 * keel's own declarations of the frameworks' shapes (src/adapters/*) against the frameworks'
 * published types: `npm run typecheck:frameworks` fails when what keel's adapters return no longer
 * fits where a framework takes it. The runtime assertion checks that keel's adapter sources name
 * no framework in a type position, so keel builds and its published types load without them.
 */

import { readdir, readFile } from "node:fs/promises";
import type { McpSdkServerConfigWithInstance } from "@anthropic-ai/claude-agent-sdk";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { ToolsInput } from "@mastra/core/agent";
import type { Tool as AgentsTool, ApplyPatchTool, Editor, FunctionTool, Shell } from "@openai/agents";
import type { ToolSet } from "ai";
import type { SandboxBackendProtocolV2 } from "deepagents";
import { expect, it } from "vitest";
import type { KeelToolSet } from "../../src/adapters/ai-sdk.js";
import type { KeelMcpSdkServerConfig } from "../../src/adapters/claude-agent-sdk.js";
import type { KeelSandbox } from "../../src/adapters/langchain/deepagents.js";
import type { KeelLangChainTool } from "../../src/adapters/langchain/index.js";
import type { KeelMastraTools } from "../../src/adapters/mastra.js";
import type {
	KeelApplyPatchTool,
	Editor as KeelEditor,
	KeelFunctionTool,
	Shell as KeelShell,
} from "../../src/adapters/openai-agents/index.js";

type Fits<Keel, Real> = Keel extends Real ? true : false;
const fits: Array<true> = [
	true satisfies Fits<KeelToolSet, ToolSet>,
	true satisfies Fits<KeelFunctionTool, FunctionTool>,
	true satisfies Fits<KeelApplyPatchTool, ApplyPatchTool>,
	true satisfies Fits<KeelFunctionTool | KeelApplyPatchTool, AgentsTool>,
	true satisfies Fits<KeelEditor, Editor>,
	true satisfies Fits<KeelShell, Shell>,
	true satisfies Fits<KeelLangChainTool, StructuredToolInterface>,
	true satisfies Fits<KeelSandbox, SandboxBackendProtocolV2>,
	true satisfies Fits<KeelMastraTools, ToolsInput>,
	true satisfies Fits<KeelMcpSdkServerConfig, McpSdkServerConfigWithInstance>,
];

const FRAMEWORKS =
	/"(ai|@openai\/agents|@langchain\/[^"]+|deepagents|@mastra\/[^"]+|@anthropic-ai\/claude-agent-sdk)"/;

it("keel's adapter types fit the frameworks' (checked by tsc); the sources import no framework's types", async () => {
	expect(fits.every((f) => f)).toBe(true);
	const dir = new URL("../../src/adapters/", import.meta.url);
	const files = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".ts"));
	for (const file of files) {
		const text = await readFile(new URL(file, dir), "utf8");
		// A framework is loaded only at run time, by import("name" as string) through importPeer.
		expect({ file, typeImport: text.match(new RegExp(`from ${FRAMEWORKS.source}`))?.[0] }).toEqual({
			file,
			typeImport: undefined,
		});
		expect({ file, literalImport: text.match(new RegExp(`import\\(${FRAMEWORKS.source}\\)`))?.[0] }).toEqual({
			file,
			literalImport: undefined,
		});
	}
});
