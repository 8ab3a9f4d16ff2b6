/**
 * keel/ai-sdk in the AI SDK's own loops (generateText, streamText, ToolLoopAgent) with its mock
 * language model: the model's prompts show what the SDK handed back for each keel result.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generateText, stepCountIs, streamText, ToolLoopAgent } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keelTools } from "../../src/adapters/ai-sdk.js";
import { createSession } from "../../src/index.js";
import { processesWith, waitFor } from "../fixtures/processes.js";
import { type CallOptions, scriptedModel, toolOutputs } from "./ai-mock.js";
import {
	EXPECTED_TEXT,
	FINAL_TEXT,
	gatedCommand,
	SCRIPT,
	sleeper,
	type Workspace,
	workspace,
} from "./helpers.js";
import { strictToolsJudge } from "./strict-judge.js";

function checkScriptOutputs(prompts: CallOptions[]) {
	const outputs = toolOutputs(prompts);
	expect([...outputs.keys()]).toEqual(SCRIPT.map((c) => c.id));
	for (const [id, pattern] of Object.entries(EXPECTED_TEXT)) {
		const o = outputs.get(id)!;
		expect(o.type).toBe(id === "c2" ? "error-text" : "text");
		expect(o.value).toMatch(pattern);
	}
	// The image reaches the model as an image part, not as text.
	const image = outputs.get("c5") as { type: string; value: Array<Record<string, unknown>> };
	expect(image.type).toBe("content");
	const file = image.value.find((p) => p.type === "file")!;
	expect(file.mediaType).toBe("image/png");
	expect((file.data as { type: string; data: string }).data).toMatch(/^iVBORw0KGgo/);
}

describe("keel/ai-sdk", () => {
	let ws: Workspace;
	beforeEach(async () => {
		ws = await workspace();
	});
	afterEach(async () => {
		await ws.close();
	});

	it("offers keel's palette with keel's JSON Schemas", async () => {
		const { model, prompts } = scriptedModel([]);
		await generateText({ model, tools: keelTools(ws.session), prompt: "hi" });
		const offered = prompts[0].tools!.map((t) => t as { name: string; inputSchema: unknown });
		expect(offered.map((t) => t.name)).toEqual(ws.session.tools.map((t) => t.name));
		for (const t of ws.session.tools) {
			expect(offered.find((o) => o.name === t.name)!.inputSchema).toEqual(t.parameters);
		}
	});

	it("generateText: read, a failing edit, an edit, bash and an image read", async () => {
		const { model, prompts } = scriptedModel(SCRIPT);
		const result = await generateText({
			model,
			tools: keelTools(ws.session),
			prompt: "work",
			stopWhen: stepCountIs(10),
		});
		expect(result.text).toBe(FINAL_TEXT);
		expect(await ws.notes()).toBe("ALPHA\nbeta\n");
		checkScriptOutputs(prompts);
		// The host keeps keel's structured error.
		const failed = result.steps[1].toolResults[0].output as { isError: boolean; error: { code: string } };
		expect(failed.isError).toBe(true);
		expect(failed.error.code).toBe("NO_MATCH");
	});

	it("streamText runs the same loop", async () => {
		const { model, prompts } = scriptedModel(SCRIPT);
		const result = streamText({
			model,
			tools: keelTools(ws.session),
			prompt: "work",
			stopWhen: stepCountIs(10),
		});
		expect(await result.text).toBe(FINAL_TEXT);
		expect(await ws.notes()).toBe("ALPHA\nbeta\n");
		checkScriptOutputs(prompts);
	});

	it("ToolLoopAgent runs the same loop", async () => {
		const { model, prompts } = scriptedModel(SCRIPT);
		const agent = new ToolLoopAgent({ model, tools: keelTools(ws.session), stopWhen: stepCountIs(10) });
		const result = await agent.generate({ prompt: "work" });
		expect(result.text).toBe(FINAL_TEXT);
		expect(await ws.notes()).toBe("ALPHA\nbeta\n");
		checkScriptOutputs(prompts);
	});

	it("arguments the schema refuses reach keel's validator, not the SDK's, and change nothing", async () => {
		const { model, prompts } = scriptedModel([
			{ id: "w1", name: "write", args: { path: "notes.txt", content: "x", mode: "force" } },
			{ id: "w2", name: "edit", args: { path: "notes.txt", edits: "not-a-list" } },
		]);
		await generateText({ model, tools: keelTools(ws.session), prompt: "p", stopWhen: stepCountIs(5) });
		const outputs = toolOutputs(prompts);
		expect(outputs.get("w1")).toMatchObject({ type: "error-text" });
		expect(outputs.get("w1")!.value).toMatch(/^\[INVALID_ARGS\] .*mode/);
		expect(outputs.get("w2")!.value).toMatch(/^\[INVALID_ARGS\] /);
		expect(await ws.notes()).toBe("alpha\nbeta\n");
	});

	it("an abort kills the running command and rejects the run", async () => {
		const marker = `keel-aisdk-abort-${process.pid}`;
		const { command, started } = sleeper(ws.dir, marker);
		const { model } = scriptedModel([{ id: "s1", name: "bash", args: { command } }]);
		const controller = new AbortController();
		const run = generateText({
			model,
			tools: keelTools(ws.session),
			prompt: "p",
			abortSignal: controller.signal,
			stopWhen: stepCountIs(5),
		});
		expect(await waitFor(() => existsSync(started), 10_000)).toBe(true);
		controller.abort();
		// The SDK rejects the whole run with the abort; keel has killed the command by then.
		await expect(run).rejects.toMatchObject({ name: "AbortError" });
		expect(await waitFor(() => processesWith(marker).length === 0, 10_000)).toBe(true);
	});

	it("streamText: bash output arrives as preliminary tool results while the command runs", async () => {
		const { model, prompts } = scriptedModel([
			{ id: "g1", name: "bash", args: { command: gatedCommand("go") } },
		]);
		const result = streamText({ model, tools: keelTools(ws.session), prompt: "p", stopWhen: stepCountIs(5) });
		const preliminary: string[] = [];
		for await (const part of result.fullStream) {
			if (part.type !== "tool-result" || !part.preliminary) continue;
			const text = (part.output as { text: string }).text;
			preliminary.push(text);
			if (text.includes("first-chunk")) await writeFile(join(ws.dir, "go"), "");
		}
		expect(preliminary.some((t) => t.includes("first-chunk"))).toBe(true);
		// The model sees only the final result, which shows the gate was opened from a preliminary one.
		const final = toolOutputs(prompts).get("g1")!;
		expect(final.type).toBe("text");
		expect(final.value).toMatch(/first-chunk\ngate-opened/);
	});

	it("strict: schemas strict mode accepts, and null in an optional field means absent", async () => {
		const session = await createSession({ root: ws.dir, profile: "unified" });
		try {
			const { model, prompts } = scriptedModel([
				{ id: "n1", name: "read", args: { path: "notes.txt", offset: null, limit: null } },
				{ id: "n2", name: "grep", args: { pattern: "beta", path: null, glob: null, literal: null } },
			]);
			await generateText({
				model,
				tools: keelTools(session, { strict: true }),
				prompt: "p",
				stopWhen: stepCountIs(5),
			});
			const offered = prompts[0].tools!.map(
				(t) => t as { name: string; inputSchema: unknown; strict?: boolean },
			);
			expect(offered.map((t) => t.name)).toEqual(session.tools.map((t) => t.name));
			for (const t of offered) expect(t.strict).toBe(true);
			strictToolsJudge(offered.map((t) => ({ name: t.name, schema: t.inputSchema })));
			const outputs = toolOutputs(prompts);
			expect(outputs.get("n1")).toMatchObject({ type: "text" });
			expect(outputs.get("n1")!.value).toMatch(/alpha\nbeta/);
			expect(outputs.get("n2")).toMatchObject({ type: "text" });
			expect(outputs.get("n2")!.value).toMatch(/notes\.txt:2: beta/);
		} finally {
			await session.close();
		}
	});
});
