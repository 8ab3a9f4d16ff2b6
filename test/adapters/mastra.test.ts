/**
 * keel/mastra in a Mastra Agent's own loop, on the AI SDK's mock language model: the prompts the
 * model receives show what Mastra handed back for each keel result.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Agent } from "@mastra/core/agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keelTools } from "../../src/adapters/mastra.js";
import { processesWith, waitFor } from "../fixtures/processes.js";
import { scriptedModel, toolOutputs } from "./ai-mock.js";
import {
	EXPECTED_TEXT,
	FINAL_TEXT,
	gatedCommand,
	SCRIPT,
	sleeper,
	type Workspace,
	workspace,
} from "./helpers.js";

describe("keel/mastra", () => {
	let ws: Workspace;
	beforeEach(async () => {
		ws = await workspace();
	});
	afterEach(async () => {
		await ws.close();
	});

	const agentWith = (model: unknown) =>
		new Agent({
			id: "keel",
			name: "keel",
			instructions: "work",
			model: model as never,
			tools: keelTools(ws.session),
		});

	it("Agent.generate: read, a failing edit, an edit, bash and an image read", async () => {
		const { model, prompts } = scriptedModel(SCRIPT);
		const result = await agentWith(model).generate("work", { maxSteps: 10 });
		expect(result.text).toBe(FINAL_TEXT);
		expect(await ws.notes()).toBe("ALPHA\nbeta\n");
		const offered = prompts[0].tools!.map((t) => t as { name: string; inputSchema: unknown });
		for (const t of ws.session.tools) {
			expect(offered.find((o) => o.name === t.name)!.inputSchema).toMatchObject(t.parameters as object);
		}
		const outputs = toolOutputs(prompts);
		for (const [id, pattern] of Object.entries(EXPECTED_TEXT)) {
			const o = outputs.get(id)!;
			expect(o.type).toBe(id === "c2" ? "error-text" : "text");
			expect(o.value).toMatch(pattern);
		}
		const image = outputs.get("c5") as { type: string; value: Array<Record<string, unknown>> };
		expect(image.type).toBe("content");
		expect(JSON.stringify(image.value)).toMatch(/image\/png.*iVBORw0KGgo|iVBORw0KGgo.*image\/png/);
	});

	it("Mastra does not pre-validate: keel's INVALID_ARGS reaches the model and nothing changes", async () => {
		const { model, prompts } = scriptedModel([
			{ id: "w1", name: "write", args: { path: "notes.txt", content: "x", mode: "force" } },
		]);
		await agentWith(model).generate("p", { maxSteps: 5 });
		const o = toolOutputs(prompts).get("w1")!;
		expect(o.type).toBe("error-text");
		expect(o.value).toMatch(/^\[INVALID_ARGS\] .*mode/);
		expect(await ws.notes()).toBe("alpha\nbeta\n");
	});

	it("an abort kills the running command and the run reports ABORTED", async () => {
		const marker = `keel-mastra-abort-${process.pid}`;
		const { command, started } = sleeper(ws.dir, marker);
		const { model } = scriptedModel([{ id: "s1", name: "bash", args: { command } }]);
		const controller = new AbortController();
		const running = agentWith(model).generate("p", { maxSteps: 5, abortSignal: controller.signal });
		expect(await waitFor(() => existsSync(started), 10_000)).toBe(true);
		controller.abort();
		// Mastra ends the run and hands back keel's ABORTED result for the call.
		const result = await running;
		const call = result.toolResults[0] as unknown as { payload: { result: { error: { code: string } } } };
		expect(call.payload.result.error.code).toBe("ABORTED");
		expect(await waitFor(() => processesWith(marker).length === 0, 10_000)).toBe(true);
	});

	it("Agent.stream: bash output arrives as tool-output chunks while the command runs", async () => {
		const { model, prompts } = scriptedModel([
			{ id: "g1", name: "bash", args: { command: gatedCommand("go") } },
		]);
		const stream = await agentWith(model).stream("p", { maxSteps: 5 });
		const partials: string[] = [];
		for await (const chunk of stream.fullStream) {
			if (chunk.type !== "tool-output") continue;
			const { output, toolCallId } = chunk.payload as { output: { text?: string }; toolCallId: string };
			expect(toolCallId).toBe("g1");
			if (typeof output?.text !== "string") continue;
			partials.push(output.text);
			if (output.text.includes("first-chunk")) await writeFile(join(ws.dir, "go"), "");
		}
		expect(partials.some((t) => t.includes("first-chunk"))).toBe(true);
		const final = toolOutputs(prompts).get("g1")!;
		expect(final.type).toBe("text");
		expect(final.value).toMatch(/first-chunk\ngate-opened/);
	});
});
