/**
 * keel/openai-agents in the Agents SDK's own Runner with its ScriptedModel: the recorded requests
 * show the tools the model was offered and the outputs the SDK handed back.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Agent, type ApplyPatchOperation, applyPatchTool, run, shellTool } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keelEditor, keelShell, keelTools } from "../../src/adapters/openai-agents/index.js";
import { createSession, type Session } from "../../src/index.js";
import { processesWith, waitFor } from "../fixtures/processes.js";
import { EXPECTED_TEXT, FINAL_TEXT, SCRIPT, sleeper, type Workspace, workspace } from "./helpers.js";
import { strictToolsJudge } from "./strict-judge.js";

type Item = Record<string, unknown>;

/** The outputs of tool calls in the last request the model saw, by callId. */
function outputs(model: ScriptedModel): Map<string, Item> {
	const input = model.lastCall!.request.input as Item[];
	const out = new Map<string, Item>();
	for (const item of input) {
		if (typeof item.type === "string" && item.type.endsWith("_result")) out.set(item.callId as string, item);
		if (typeof item.type === "string" && item.type.endsWith("_output")) out.set(item.callId as string, item);
	}
	return out;
}

const outputText = (item: Item) => {
	const o = item.output as unknown;
	if (typeof o === "string") return o;
	const obj = o as { type?: string; text?: string };
	return obj?.type === "text" ? (obj.text as string) : JSON.stringify(o);
};

describe("keel/openai-agents function tools", () => {
	let ws: Workspace;
	beforeEach(async () => {
		ws = await workspace();
	});
	afterEach(async () => {
		await ws.close();
	});

	it("the SDK accepts every keel schema of both profiles, sent as keel wrote it, non-strict", async () => {
		for (const profile of ["pi", "unified"] as const) {
			const session = await createSession({ root: ws.dir, profile });
			const model = new ScriptedModel([[assistantMessage(FINAL_TEXT)]]);
			await run(new Agent({ name: "a", model, tools: keelTools(session) }), "hi");
			const offered = model.firstCall!.request.tools as Array<{
				name: string;
				parameters: unknown;
				strict: boolean;
			}>;
			expect(offered.map((t) => t.name)).toEqual(session.tools.map((t) => t.name));
			for (const t of session.tools) {
				const o = offered.find((x) => x.name === t.name)!;
				expect(o.parameters).toEqual(t.parameters);
				expect(o.strict).toBe(false);
			}
			await session.close();
		}
	});

	it("Runner: read, a failing edit, an edit, bash and an image read", async () => {
		const model = new ScriptedModel([
			...SCRIPT.map((c) => [functionCall(c.name, c.args, { callId: c.id })]),
			[assistantMessage(FINAL_TEXT)],
		]);
		const result = await run(new Agent({ name: "a", model, tools: keelTools(ws.session) }), "work", {
			maxTurns: 10,
		});
		expect(result.finalOutput).toBe(FINAL_TEXT);
		expect(await ws.notes()).toBe("ALPHA\nbeta\n");
		const seen = outputs(model);
		for (const [id, pattern] of Object.entries(EXPECTED_TEXT))
			expect(outputText(seen.get(id)!)).toMatch(pattern);
		// The image goes back as an image item.
		const image = seen.get("c5")!.output as Item[];
		expect(image.map((p) => p.type)).toEqual(["input_text", "input_image"]);
		expect(image[1].image).toMatch(/^data:image\/png;base64,iVBORw0KGgo/);
	});

	it("arguments keel's schema refuses get keel's INVALID_ARGS and change nothing", async () => {
		const model = new ScriptedModel([
			[functionCall("write", { path: "notes.txt", content: "x", mode: "force" }, { callId: "w1" })],
			[assistantMessage(FINAL_TEXT)],
		]);
		await run(new Agent({ name: "a", model, tools: keelTools(ws.session) }), "p");
		expect(outputText(outputs(model).get("w1")!)).toMatch(/^\[INVALID_ARGS\] .*mode/);
		expect(await ws.notes()).toBe("alpha\nbeta\n");
	});

	it("an abort kills the running command", async () => {
		const marker = `keel-oai-abort-${process.pid}`;
		const { command, started } = sleeper(ws.dir, marker);
		const model = new ScriptedModel([
			[functionCall("bash", { command }, { callId: "s1" })],
			[assistantMessage(FINAL_TEXT)],
		]);
		const controller = new AbortController();
		const running = run(new Agent({ name: "a", model, tools: keelTools(ws.session) }), "p", {
			signal: controller.signal,
		});
		expect(await waitFor(() => existsSync(started), 10_000)).toBe(true);
		controller.abort();
		// The Runner rejects the run with the abort; keel has killed the command by then.
		await expect(running).rejects.toMatchObject({ name: "AbortError" });
		expect(await waitFor(() => processesWith(marker).length === 0, 10_000)).toBe(true);
	});
});

describe("keel/openai-agents Editor and Shell", () => {
	let ws: Workspace;
	let session: Session;
	beforeEach(async () => {
		ws = await workspace();
		session = await createSession({ root: ws.dir, profile: "unified" });
	});
	afterEach(async () => {
		await session.close();
		await ws.close();
	});

	const patchCall = (callId: string, operation: ApplyPatchOperation) => ({
		type: "apply_patch_call" as const,
		callId,
		status: "completed" as const,
		operation,
	});

	it("applyPatchTool: create, a stale update, an update with a move, a delete", async () => {
		const model = new ScriptedModel([
			[
				patchCall("p1", {
					type: "create_file",
					path: "src/new.ts",
					diff: "+export const a = 1;\n+export const b = 2;\n",
				}),
			],
			[patchCall("p2", { type: "update_file", path: "notes.txt", diff: "@@\n alpha\n-gamma\n+GAMMA\n" })],
			[
				patchCall("p3", {
					type: "update_file",
					path: "notes.txt",
					diff: "@@\n-alpha\n+ALPHA\n beta\n",
					moveTo: "moved.txt",
				}),
			],
			[patchCall("p4", { type: "delete_file", path: "src/new.ts" })],
			[patchCall("p5", { type: "delete_file", path: "../outside.txt" })],
			[assistantMessage(FINAL_TEXT)],
		]);
		const created: string[] = [];
		const editor = keelEditor(session);
		const spy = {
			...editor,
			createFile: async (op: never) => {
				const r = await editor.createFile(op);
				created.push(await readFile(join(ws.dir, "src/new.ts"), "utf8"));
				return r;
			},
		};
		const agent = new Agent({ name: "a", model, tools: [applyPatchTool({ editor: spy })] });
		const result = await run(agent, "patch", { maxTurns: 10 });
		expect(result.finalOutput).toBe(FINAL_TEXT);
		expect(created).toEqual(["export const a = 1;\nexport const b = 2;"]);
		const seen = outputs(model);
		expect(seen.get("p1")).toMatchObject({ status: "completed" });
		expect(seen.get("p2")).toMatchObject({ status: "failed" });
		expect(String(seen.get("p2")!.output)).toMatch(/^\[NO_MATCH\]/);
		expect(seen.get("p3")).toMatchObject({ status: "completed" });
		expect(seen.get("p5")).toMatchObject({ status: "failed" });
		expect(String(seen.get("p5")!.output)).toMatch(/^\[PATH_OUTSIDE_ROOTS\]/);
		expect(existsSync(join(ws.dir, "notes.txt"))).toBe(false);
		expect(await readFile(join(ws.dir, "moved.txt"), "utf8")).toBe("ALPHA\nbeta\n");
		expect(existsSync(join(ws.dir, "src/new.ts"))).toBe(false);
	});

	it("an update whose context another writer changed away is refused, the other writer's bytes kept", async () => {
		const editor = keelEditor(session);
		await writeFile(join(ws.dir, "notes.txt"), "omega\nbeta\n");
		const r = await editor.updateFile({
			type: "update_file",
			path: "notes.txt",
			diff: "@@\n-alpha\n+ALPHA\n",
		});
		expect(r).toMatchObject({ status: "failed" });
		expect(await ws.notes()).toBe("omega\nbeta\n");
	});

	it("a diff that is not V4A is refused before anything runs", async () => {
		const r = await keelEditor(session).updateFile({
			type: "update_file",
			path: "notes.txt",
			diff: "*** Begin Patch\nalpha",
		});
		expect(r).toMatchObject({ status: "failed" });
		expect((r as { output: string }).output).toMatch(/^\[INVALID_ARGS\]/);
		expect(await ws.notes()).toBe("alpha\nbeta\n");
	});

	it("shellTool: keel's bash runs the commands, refuses catastrophic ones, reports exit codes", async () => {
		const model = new ScriptedModel([
			[
				{
					type: "shell_call" as const,
					callId: "sh1",
					status: "completed" as const,
					action: { commands: ["cat notes.txt", "exit 3", "rm -rf /"] },
				},
			],
			[assistantMessage(FINAL_TEXT)],
		]);
		const agent = new Agent({ name: "a", model, tools: [shellTool({ shell: keelShell(session) })] });
		await run(agent, "sh", { maxTurns: 5 });
		const out = outputs(model).get("sh1")!.output as Array<{ stdout: string; stderr: string; outcome: Item }>;
		expect(out[0]).toMatchObject({ outcome: { type: "exit", exitCode: 0 } });
		expect(out[0].stdout).toContain("alpha\nbeta");
		expect(out[1]).toMatchObject({ outcome: { type: "exit", exitCode: 3 } });
		expect(out[2].stderr).toMatch(/^\[COMMAND_REFUSED\]/);
		expect(await ws.notes()).toBe("alpha\nbeta\n");
	});

	it("one unified session serves the tools and the Editor: the model sees one apply_patch", async () => {
		const model = new ScriptedModel([
			[functionCall("read", { path: "notes.txt" }, { callId: "r1" })],
			[patchCall("p1", { type: "update_file", path: "notes.txt", diff: "@@\n-alpha\n+ALPHA\n beta\n" })],
			[assistantMessage(FINAL_TEXT)],
		]);
		const tools = keelTools(session, { editor: true });
		await run(new Agent({ name: "a", model, tools }), "work", { maxTurns: 5 });
		const offered = model.firstCall!.request.tools as Array<{ type: string; name: string }>;
		const names = offered.map((t) => t.name);
		expect(new Set(names).size).toBe(names.length);
		expect(offered.filter((t) => t.name === "apply_patch")).toEqual([
			expect.objectContaining({ type: "apply_patch" }),
		]);
		// Every other tool of the palette is still offered as a function tool.
		const others = session.tools.map((t) => t.name).filter((n) => n !== "apply_patch");
		expect(offered.filter((t) => t.type === "function").map((t) => t.name)).toEqual(others);
		const seen = outputs(model);
		expect(outputText(seen.get("r1")!)).toMatch(/alpha\nbeta/);
		expect(seen.get("p1")).toMatchObject({ status: "completed" });
		expect(await ws.notes()).toBe("ALPHA\nbeta\n");
	});

	it("strict: schemas strict mode accepts, and null in an optional field means absent", async () => {
		const model = new ScriptedModel([
			[functionCall("read", { path: "notes.txt", offset: null, limit: null }, { callId: "n1" })],
			[
				functionCall(
					"file",
					{
						queries: [
							{
								type: "edit",
								path: "notes.txt",
								content: null,
								contentRef: null,
								payloadRef: null,
								edits: [
									{
										oldText: "beta",
										newText: "BETA",
										matchMode: null,
										replaceAll: null,
										startLine: null,
										endLine: null,
										start: null,
										end: null,
									},
								],
							},
						],
					},
					{ callId: "n2" },
				),
			],
			[assistantMessage(FINAL_TEXT)],
		]);
		await run(new Agent({ name: "a", model, tools: keelTools(session, { strict: true }) }), "p", {
			maxTurns: 5,
		});
		const offered = model.firstCall!.request.tools as Array<{
			name: string;
			parameters: unknown;
			strict: boolean;
		}>;
		expect(offered.map((t) => t.name)).toEqual(session.tools.map((t) => t.name));
		expect(offered.every((t) => t.strict)).toBe(true);
		strictToolsJudge(offered.map((t) => ({ name: t.name, schema: t.parameters })));
		const seen = outputs(model);
		expect(outputText(seen.get("n1")!)).toMatch(/alpha\nbeta/);
		// No error code: the nested nulls were read as absent and the edit went through.
		expect(outputText(seen.get("n2")!)).not.toMatch(/^\[[A-Z_]+\]/);
		expect(await ws.notes()).toBe("alpha\nBETA\n");
	});
});
