/**
 * The MCP server in real clients: Claude Code and Codex each run a whole agent loop against keel's MCP server
 * (stdio, and Streamable HTTP with a bearer token), driven by a scripted model: a read, a failing edit, an edit, an image, and the unified
 * profile's file tool, and the codex profile's exec_command and write_stdin. The test checks the files on disk and what each client sent back to the
 * model after every call: the text, the failure with its code, the image.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import photon from "@silvia-odwyer/photon-node";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ScriptedModel, type Step, startScriptedModel } from "../fixtures/scripted-model.js";
import { CLAUDE, CODEX, keelStdio, missing, runClaude, runCodex, startKeelHttp } from "./agents.js";

let dir: string;
let model: ScriptedModel | undefined;
beforeEach(async () => {
	dir = await mkdtemp(join(tmpdir(), "keel-clients-"));
	await writeFile(join(dir, "a.txt"), "hello file\nsecond line\n");
	await writeFile(join(dir, "b.txt"), "never read\n");
	const px = new Uint8Array(4 * 4 * 4).fill(200);
	const img = new photon.PhotonImage(px, 4, 4);
	await writeFile(join(dir, "dot.png"), Buffer.from(img.get_bytes()));
	img.free();
});
afterEach(async () => {
	await model?.close();
	model = undefined;
	await rm(dir, { recursive: true, force: true });
});

const PI_STEPS = (tool: (name: string) => { tool: string; namespace?: string }): Step[] => [
	{ ...tool("read"), args: { path: "a.txt" } },
	{ ...tool("edit"), args: { path: "a.txt", edits: [{ oldText: "not in the file", newText: "x" }] } },
	{
		...tool("edit"),
		args: { path: "a.txt", edits: [{ oldText: "hello file", newText: "edited by the agent" }] },
	},
	{ ...tool("read"), args: { path: "dot.png" } },
	{ text: "all done" },
];

const UNIFIED_STEPS = (tool: (name: string) => { tool: string; namespace?: string }): Step[] => [
	{
		...tool("file"),
		args: {
			queries: [
				{ type: "edit", path: "a.txt", edits: [{ oldText: "second line", newText: "via file tool" }] },
			],
		},
	},
	{ ...tool("file"), args: { queries: [{ type: "write", path: "b.txt", content: "clobber" }] } },
	{ text: "done" },
];

/** The codex profile's unified exec: a command waiting on stdin, then the line it waits for. */
const EXEC_STEPS = (tool: (name: string) => { tool: string; namespace?: string }): Step[] => [
	{ ...tool("exec_command"), args: { cmd: "read line; echo got:$line", yield_time_ms: 500 } },
	{ ...tool("write_stdin"), args: { session_id: 1, chars: "hello from the model\n", yield_time_ms: 5000 } },
	{ text: "done" },
];

/** What the client sent back for each scripted call: text, whether it was marked failed, images. */
interface Returned {
	text: string;
	failed: boolean;
	images: number;
}

function claudeReturned(model: ScriptedModel): Returned[] {
	return model.requests.slice(1).map((body) => {
		const messages = body.messages as Array<{ role: string; content: unknown }>;
		const last = messages[messages.length - 1];
		const blocks = (last.content as Array<Record<string, unknown>>).filter((b) => b.type === "tool_result");
		const parts = blocks.flatMap((b) =>
			typeof b.content === "string"
				? [{ type: "text", text: b.content }]
				: (b.content as Array<Record<string, unknown>>),
		);
		return {
			text: parts.map((p) => (p.type === "text" ? String(p.text) : "")).join("\n"),
			failed: blocks.some((b) => b.is_error === true),
			images: parts.filter((p) => p.type === "image").length,
		};
	});
}

function codexReturned(model: ScriptedModel): Returned[] {
	return model.requests.slice(1).map((body, i) => {
		const input = body.input as Array<Record<string, unknown>>;
		const out = input.find((x) => x.type === "function_call_output" && x.call_id === `call_${i + 1}`);
		const output = out?.output;
		const parts =
			typeof output === "string"
				? [{ type: "input_text", text: output }]
				: ((output ?? []) as Array<Record<string, unknown>>);
		const text = parts.map((p) => (p.type === "input_text" ? String(p.text) : "")).join("\n");
		// Codex marks no failure flag of its own: the model learns it from the text.
		return {
			text,
			// Codex forwards only structuredContent when a result has it: keel puts the failure there too.
			failed: /\[[A-Z_]+\]|"ok":\s*false/.test(text),
			images: parts.filter((p) => p.type === "input_image").length,
		};
	});
}

const clients = [
	{
		name: "Claude Code",
		bin: CLAUDE,
		dialect: "anthropic" as const,
		tool: (name: string) => ({ tool: `mcp__keel__${name}` }),
		isMainLoop: (b: Record<string, unknown>) =>
			((b.tools as Array<{ name?: string }>) ?? []).some((t) => t.name?.startsWith("mcp__keel__")),
		run: runClaude,
		returned: claudeReturned,
	},
	{
		name: "Codex",
		bin: CODEX,
		dialect: "openai-responses" as const,
		tool: (name: string) => ({ tool: name, namespace: "mcp__keel" }),
		isMainLoop: (b: Record<string, unknown>) =>
			((b.tools as Array<{ name?: string }>) ?? []).some((t) => t.name === "mcp__keel"),
		run: runCodex,
		returned: codexReturned,
	},
];

for (const c of clients) {
	describe.skipIf(missing(c.bin))(`${c.name} with keel serve (stdio)`, () => {
		it("read, a failing edit, an edit and an image reach the model as keel sent them", async () => {
			model = await startScriptedModel(c.dialect, PI_STEPS(c.tool), c.isMainLoop);
			const r = await c.run(dir, model.url, keelStdio(dir));
			expect(r.code, r.stderr.slice(-2000)).toBe(0);
			const back = c.returned(model);
			if (process.env.KEEL_DEBUG_CLIENTS) console.log("BACK", JSON.stringify(back).slice(0, 2500));
			expect(back.length, JSON.stringify(back)).toBeGreaterThanOrEqual(4);
			expect(back[0]).toMatchObject({ failed: false, images: 0 });
			expect(back[0].text).toContain("hello file");
			expect(back[1].failed).toBe(true);
			expect(back[1].text).toContain("NO_MATCH");
			expect(back[1].text).toContain("Could not find");
			expect(back[2].failed).toBe(false);
			expect(back[2].text).toContain("Successfully replaced 1 block(s) in a.txt");
			expect(back[3].images).toBe(1);
			expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("edited by the agent\nsecond line\n");
		}, 120_000);

		it("the unified profile's file tool edits, and an unread overwrite is refused", async () => {
			model = await startScriptedModel(c.dialect, UNIFIED_STEPS(c.tool), c.isMainLoop);
			const r = await c.run(dir, model.url, keelStdio(dir, ["--profile", "unified"]));
			expect(r.code, r.stderr.slice(-2000)).toBe(0);
			const back = c.returned(model);
			if (process.env.KEEL_DEBUG_CLIENTS) console.log("BACK", JSON.stringify(back).slice(0, 2500));
			expect(back[0].failed, back[0].text).toBe(false);
			expect(back[1].failed).toBe(true);
			expect(back[1].text).toMatch(/NOT_READ|STALE_READ/);
			expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("hello file\nvia file tool\n");
			expect(await readFile(join(dir, "b.txt"), "utf8")).toBe("never read\n");
		}, 120_000);

		it("the codex profile's exec_command then write_stdin run a command to completion", async () => {
			model = await startScriptedModel(c.dialect, EXEC_STEPS(c.tool), c.isMainLoop);
			const r = await c.run(dir, model.url, keelStdio(dir, ["--profile", "codex"]));
			expect(r.code, r.stderr.slice(-2000)).toBe(0);
			const back = c.returned(model);
			if (process.env.KEEL_DEBUG_CLIENTS) console.log("BACK", JSON.stringify(back).slice(0, 2500));
			expect(back[0].failed, back[0].text).toBe(false);
			expect(back[0].text).toContain("Process running with session ID 1");
			expect(back[1].failed, back[1].text).toBe(false);
			expect(back[1].text).toContain("got:hello from the model");
			expect(back[1].text).toContain("Process exited with code 0");
		}, 120_000);

		it("over Streamable HTTP with the bearer token: the same loop", async () => {
			model = await startScriptedModel(c.dialect, PI_STEPS(c.tool), c.isMainLoop);
			const served = await startKeelHttp(dir);
			try {
				const r = await c.run(dir, model.url, served);
				expect(r.code, r.stderr.slice(-2000)).toBe(0);
			} finally {
				served.close();
			}
			const back = c.returned(model);
			if (process.env.KEEL_DEBUG_CLIENTS) console.log("BACK", JSON.stringify(back).slice(0, 2500));
			expect(back[0].text).toContain("hello file");
			expect(back[1].failed).toBe(true);
			expect(back[1].text).toContain("NO_MATCH");
			expect(back[3].images).toBe(1);
			expect(await readFile(join(dir, "a.txt"), "utf8")).toBe("edited by the agent\nsecond line\n");
		}, 120_000);
	});
}
