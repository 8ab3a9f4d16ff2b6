/**
 * keel as an MCP server: every tool of the session's profile, with its JSON schema
 * and annotations; tool failures as `isError` results carrying the keel code, never protocol errors.
 *
 * The low-level SDK Server is used on purpose: keel's schemas are plain JSON Schema already, and
 * McpServer wants zod shapes and validates arguments itself, which would bypass keel's own checks
 * and error messages.
 */
import { createRequire } from "node:module";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
	CallToolRequestSchema,
	ListRootsResultSchema,
	ListToolsRequestSchema,
	RootsListChangedNotificationSchema,
	type ServerNotification,
	type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { Session } from "../../session.js";
import { boundResult, MAX_RESULT_BYTES } from "./bound.js";
import { withoutClientControl } from "./client-control.js";
import { ProgressReporter } from "./progress.js";
import { toCallToolResult, toMcpTool } from "./results.js";
import { type ClientPeer, fixedSession, type SessionProvider } from "./sessions.js";

// ../../../package.json from both src/adapters/mcp and dist/adapters/mcp.
const VERSION: string = createRequire(import.meta.url)("../../../package.json").version;

/** How long the first call waits for the client to answer roots/list. */
const ROOTS_TIMEOUT_MS = 10_000;

const INSTRUCTIONS =
	"keel's file, search and shell tools work inside the workspace roots (the server's --root, or the " +
	"client's MCP roots when the server was given none); relative paths resolve against the first root. " +
	"A failed call returns isError with a stable code in brackets, e.g. [NOT_FOUND]; structuredContent " +
	"then holds ok: false, code, message and retry (whether to retry, change approach, or retarget), and " +
	"directive, when present: what to do instead of repeating the call.";

export interface McpServerOptions {
	/** Diagnostics (stderr); never stdout, which may be the stdio transport. */
	log?: (line: string) => void;
	/** A call that runs this long without output sends a progress heartbeat (default 10 s). */
	heartbeatMs?: number;
	/** Largest result, in bytes of JSON (default 8 MiB, below the SDK client's 10 MiB). */
	maxResultBytes?: number;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function clientPeer(server: Server, extra: Extra): ClientPeer {
	return {
		supportsRoots: Boolean(server.getClientCapabilities()?.roots),
		// Sent as part of this request, so over HTTP it travels on the request's own response stream
		// (a standalone GET stream may not be open yet).
		listRoots: async () =>
			(
				await extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema, {
					timeout: ROOTS_TIMEOUT_MS,
				})
			).roots,
	};
}

/**
 * An MCP server over `source`: a Session the caller owns, or a provider such as LazySession that
 * opens the session on the first call (so the client's roots can apply).
 */
export function createMcpServer(source: Session | SessionProvider, options: McpServerOptions = {}): Server {
	const provider = source instanceof Session ? fixedSession(source) : source;
	const server = new Server(
		{ name: "keel", version: VERSION },
		{ capabilities: { tools: {} }, instructions: INSTRUCTIONS },
	);
	const tools = provider.tools.map(toMcpTool);
	const schemaProperties = new Map(
		provider.tools.map((t) => [t.name, new Set(Object.keys(t.parameters.properties ?? {}))]),
	);
	server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
	server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
		const token = request.params._meta?.progressToken;
		const progress =
			token === undefined
				? undefined
				: new ProgressReporter(token, (n) => extra.sendNotification(n), { heartbeatMs: options.heartbeatMs });
		progress?.startHeartbeat();
		const name = request.params.name;
		try {
			const result = await provider.call(
				name,
				withoutClientControl(request.params.arguments ?? {}, schemaProperties.get(name)),
				{ signal: extra.signal, onUpdate: progress && ((partial) => progress.update(partial)) },
				clientPeer(server, extra),
			);
			return boundResult(toCallToolResult(result), options.maxResultBytes ?? MAX_RESULT_BYTES);
		} finally {
			progress?.stop();
		}
	});
	server.setNotificationHandler(RootsListChangedNotificationSchema, () => provider.rootsChanged?.());
	server.onerror = (e) => options.log?.(`keel: MCP transport error: ${e.message}`);
	return server;
}
