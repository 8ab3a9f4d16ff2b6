/**
 * keel in the Claude Agent SDK: keel's MCP server in-process in `mcpServers`, and the SDK's real
 * loop (it spawns the Claude Code CLI) against a scripted Anthropic Messages endpoint on 127.0.0.1.
 * The requests the CLI sends show what it handed the model for each keel result.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { query } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keelAllowedTools, keelMcpServer } from "../../src/adapters/claude-agent-sdk.js";
import { processesWith, waitFor } from "../fixtures/processes.js";
import {
	EXPECTED_TEXT,
	FINAL_TEXT,
	SCRIPT,
	type ScriptedCall,
	sleeper,
	type Workspace,
	workspace,
} from "./helpers.js";

/** The CLI ships as a per-platform optional package; without it the SDK cannot run a loop. */
function cliInstalled(): boolean {
	try {
		createRequire(import.meta.url).resolve(
			`@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}/package.json`,
		);
		return true;
	} catch {
		return false;
	}
}
const HAS_CLI = cliInstalled();
if (!HAS_CLI)
	console.warn(
		"skipping Claude Agent SDK loop tests: the Claude Code CLI package for this platform is absent",
	);

type Block = Record<string, unknown>;
type Message = { role: string; content: string | Block[] };

/** A Messages API stub: each main-loop request gets the next scripted tool_use, then FINAL_TEXT. */
async function anthropicStub(script: ScriptedCall[]) {
	const requests: Array<{ tools: string[]; messages: Message[] }> = [];
	let step = 0;
	const server: Server = createServer(async (req, res) => {
		let body = "";
		for await (const chunk of req) body += chunk;
		if (!req.url?.startsWith("/v1/messages") || req.url.includes("count_tokens")) {
			res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 1 }));
			return;
		}
		const request = JSON.parse(body) as {
			model: string;
			tools?: Array<{ name: string }>;
			messages: Message[];
		};
		const tools = (request.tools ?? []).map((t) => t.name);
		const mainLoop = tools.includes("mcp__keel__read");
		if (mainLoop) requests.push({ tools, messages: request.messages });
		const call = mainLoop ? script[step++] : undefined;
		const block = call
			? { type: "tool_use", id: `toolu_${call.id}`, name: `mcp__keel__${call.name}`, input: {} }
			: { type: "text", text: "" };
		const delta = call
			? { type: "input_json_delta", partial_json: JSON.stringify(call.args) }
			: { type: "text_delta", text: FINAL_TEXT };
		const message = {
			id: `msg_${step}`,
			type: "message",
			role: "assistant",
			model: request.model,
			content: [],
			stop_reason: null,
			usage: { input_tokens: 1, output_tokens: 1 },
		};
		const events = [
			{ type: "message_start", message },
			{ type: "content_block_start", index: 0, content_block: block },
			{ type: "content_block_delta", index: 0, delta },
			{ type: "content_block_stop", index: 0 },
			{
				type: "message_delta",
				delta: { stop_reason: call ? "tool_use" : "end_turn" },
				usage: { output_tokens: 1 },
			},
			{ type: "message_stop" },
		];
		res.writeHead(200, { "content-type": "text/event-stream" });
		res.end(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""));
	});
	await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
	const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	return { url, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** tool_result blocks in the last main-loop request, by the scripted call id. */
function toolResults(requests: Array<{ messages: Message[] }>): Map<string, Block> {
	const out = new Map<string, Block>();
	for (const m of requests.at(-1)!.messages) {
		if (typeof m.content === "string") continue;
		for (const b of m.content)
			if (b.type === "tool_result") out.set(String(b.tool_use_id).replace(/^toolu_/, ""), b);
	}
	return out;
}

const textOf = (b: Block) =>
	typeof b.content === "string"
		? b.content
		: (b.content as Block[])
				.filter((c) => c.type === "text")
				.map((c) => c.text)
				.join("\n");

describe.skipIf(!HAS_CLI)("keel in the Claude Agent SDK", () => {
	let ws: Workspace;
	let stub: Awaited<ReturnType<typeof anthropicStub>> | undefined;
	beforeEach(async () => {
		ws = await workspace();
	});
	afterEach(async () => {
		await stub?.close();
		stub = undefined;
		await ws.close();
	});

	const options = (url: string, extra: Record<string, unknown> = {}) => ({
		cwd: ws.dir,
		mcpServers: { keel: keelMcpServer(ws.session) },
		allowedTools: keelAllowedTools(ws.session),
		tools: [] as string[],
		model: "claude-sonnet-4-5",
		env: {
			PATH: process.env.PATH,
			HOME: ws.dir,
			ANTHROPIC_BASE_URL: url,
			ANTHROPIC_API_KEY: "test-key",
			CLAUDE_CONFIG_DIR: join(ws.dir, ".claude"),
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
		},
		...extra,
	});

	it("allowedTools are mcp__keel__<tool>", () => {
		expect(keelAllowedTools(ws.session)).toEqual(
			["read", "write", "edit", "bash", "grep", "find", "ls"].map((n) => `mcp__keel__${n}`),
		);
	});

	it("query(): read, a failing edit, an edit, bash and an image read through keel's MCP server", async () => {
		stub = await anthropicStub(SCRIPT);
		let result: Record<string, unknown> | undefined;
		for await (const m of query({ prompt: "work", options: options(stub.url) })) {
			if (m.type === "result") result = m as never;
		}
		expect(result).toMatchObject({ subtype: "success", result: FINAL_TEXT });
		expect(stub.requests[0].tools.filter((t) => t.startsWith("mcp__"))).toEqual(
			expect.arrayContaining(keelAllowedTools(ws.session)),
		);
		expect(await ws.notes()).toBe("ALPHA\nbeta\n");
		const seen = toolResults(stub.requests);
		for (const [id, pattern] of Object.entries(EXPECTED_TEXT)) expect(textOf(seen.get(id)!)).toMatch(pattern);
		expect(seen.get("c2")!.is_error).toBe(true);
		expect(seen.get("c3")!.is_error).toBeFalsy();
		const image = (seen.get("c5")!.content as Block[]).find((c) => c.type === "image")!;
		expect(image.source).toMatchObject({ type: "base64", media_type: "image/png" });
	}, 60_000);

	it("interrupting the query kills the running command", async () => {
		const marker = `keel-claude-abort-${process.pid}`;
		const { command, started } = sleeper(ws.dir, marker);
		stub = await anthropicStub([{ id: "s1", name: "bash", args: { command } }]);
		const abortController = new AbortController();
		const q = query({ prompt: "p", options: options(stub.url, { abortController }) });
		const drained = (async () => {
			for await (const _ of q);
		})().catch((e: Error) => e);
		expect(await waitFor(() => existsSync(started), 30_000)).toBe(true);
		abortController.abort();
		await drained;
		expect(await waitFor(() => processesWith(marker).length === 0, 15_000)).toBe(true);
	}, 60_000);
});
