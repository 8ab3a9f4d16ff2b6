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
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Session } from "../session.js";
import { createMcpServer } from "./mcp/server.js";

export const SERVER_NAME = "keel";

/**
 * The Agent SDK's McpSdkServerConfigWithInstance, declared here so keel's types need no Agent SDK:
 * the SDK types the instance as the MCP SDK's McpServer and only connect()s it, which keel's
 * server does.
 */
export interface KeelMcpSdkServerConfig {
	type: "sdk";
	name: string;
	instance: McpServer;
}

export function keelMcpServer(session: Session, name = SERVER_NAME): KeelMcpSdkServerConfig {
	const instance = createMcpServer(session) as unknown as McpServer;
	return { type: "sdk", name, instance };
}

/** The names Claude Code gives keel's tools, for `allowedTools`: mcp__keel__read, mcp__keel__bash, ... */
export function keelAllowedTools(session: Pick<Session, "tools">, name = SERVER_NAME): string[] {
	return session.tools.map((t) => `mcp__${name}__${t.name}`);
}
