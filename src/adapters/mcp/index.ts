/** keel's MCP adapter: `keel serve` and the pieces to embed it. */

export { DEFAULT_HOST, type HttpHandle, type HttpServeOptions, MCP_PATH, startHttp } from "./http.js";
export { META_DETAILS, META_ELAPSED_MS, toCallToolResult, toMcpTool } from "./results.js";
export { runServe, type ServeIO, type ServeOptions } from "./serve.js";
export { createMcpServer, type McpServerOptions } from "./server.js";
export { type ClientPeer, fixedSession, LazySession, type SessionProvider } from "./sessions.js";
export { type StdioOptions, serveStdio } from "./stdio.js";
