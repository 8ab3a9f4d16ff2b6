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
import { type SessionApi, sessionInternals } from "../session.js";
import { createMcpServer } from "./mcp/server.js";

/** The server name keelMcpServer and keelAllowedTools use unless given another. */
export const SERVER_NAME = "keel";

/**
 * The Agent SDK's McpSdkServerConfigWithInstance, declared here so keel's types need no Agent SDK.
 * The SDK types the instance as its own copy's McpServer, a class with private fields that no other
 * copy of the MCP SDK fits (keel's own, when the two are not deduplicated), and only connect()s it,
 * which keel's server does: so the instance is left to the SDK's type.
 */
export interface KeelMcpSdkServerConfig {
	type: "sdk";
	name: string;
	instance: any;
}

/** The in-process MCP server of `session`'s tools, as an `mcpServers` entry (one per query()). */
export function keelMcpServer(session: SessionApi, name = SERVER_NAME): KeelMcpSdkServerConfig {
	return { type: "sdk", name, instance: createMcpServer(sessionInternals(session)) };
}

/** The names Claude Code gives keel's tools, for `allowedTools`: mcp__keel__read, mcp__keel__bash, ... */
export function keelAllowedTools(session: Pick<SessionApi, "tools">, name = SERVER_NAME): string[] {
	return session.tools.map((t) => `mcp__${name}__${t.name}`);
}
