/**
 * keel for the Claude Agent SDK (@anthropic-ai/claude-agent-sdk): keel's own MCP server, run
 * in-process as an "sdk" server in `mcpServers`, so the tools reach Claude Code with keel's
 * schemas, annotations, results and error codes exactly as `keel serve` gives them.
 *
 * The SDK's createSdkMcpServer() + tool() want zod shapes and validate with them, which would put
 * the MCP SDK's validation in front of keel's; the SDK only needs an MCP server object it can
 * connect() to a transport, and keel's is one. Nothing here loads the Agent SDK itself.
 *
 * One server object serves one query() (an MCP server connects to one transport): call
 * keelMcpServer() per query.
 */
import type { McpSdkServerConfigWithInstance } from "@anthropic-ai/claude-agent-sdk";
import { type SessionApi, sessionInternals } from "../session.js";
import { createMcpServer } from "./mcp/server.js";

/** The server name keelMcpServer and keelAllowedTools use unless given another. */
export const SERVER_NAME = "keel";

/** The in-process MCP server of `session`'s tools, as an `mcpServers` entry (one per query()). */
export function keelMcpServer(session: SessionApi, name = SERVER_NAME): McpSdkServerConfigWithInstance {
	const instance = createMcpServer(
		sessionInternals(session),
	) as unknown as McpSdkServerConfigWithInstance["instance"];
	return { type: "sdk", name, instance };
}

/** The names Claude Code gives keel's tools, for `allowedTools`: mcp__keel__read, mcp__keel__bash, ... */
export function keelAllowedTools(session: Pick<SessionApi, "tools">, name = SERVER_NAME): string[] {
	return session.tools.map((t) => `mcp__${name}__${t.name}`);
}
