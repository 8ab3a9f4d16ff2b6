/**
 * keel/langchain in LangChain's own agent loop (createAgent) and in a deepagents agent on
 * KeelSandbox, both driven by @langchain/core's fakeModel: the messages the model is handed show
 * what each keel result became.
 */
import { existsSync } from "node:fs";
import { readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { createDeepAgent } from "deepagents";
import { createAgent } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
	KEEL_TOOL_OUTPUT,
	KeelSandbox,
	type KeelToolOutputEvent,
	keelTools,
} from "../../src/adapters/langchain/index.js";
import { createSession } from "../../src/index.js";
import { processesWith, waitFor } from "../fixtures/processes.js";
import {
	EXPECTED_TEXT,
	FINAL_TEXT,
	gatedCommand,
	SCRIPT,
	type ScriptedCall,
	sleeper,
	type Workspace,
	workspace,
} from "./helpers.js";
import { strictToolsJudge } from "./strict-judge.js";

function scripted(calls: ScriptedCall[]) {
	const model = fakeModel();
	for (const c of calls) model.respondWithTools([{ name: c.name, args: c.args, id: c.id }]);
	model.respond(new AIMessage(FINAL_TEXT));
	return model;
}

/** ToolMessages in the last prompt the model saw, by tool_call_id. */
function toolMessages(model: ReturnType<typeof fakeModel>): Map<string, ToolMessage> {
	const last = model.calls.at(-1)!.messages as BaseMessage[];
	return new Map(
		last.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => [m.tool_call_id, m]),
	);
}

describe("keel/langchain tools", () => {
	let ws: Workspace;
	beforeEach(async () => {
		ws = await workspace();
	});
	afterEach(async () => {
		await ws.close();
	});

	it("providers are offered keel's JSON Schemas unchanged", () => {
		const tools = keelTools(ws.session);
		expect(tools.map((t) => t.name)).toEqual(ws.session.tools.map((t) => t.name));
		for (const [i, t] of ws.session.tools.entries()) {
			expect(convertToOpenAITool(tools[i]).function.parameters).toEqual(t.parameters);
		}
	});

	it("createAgent: read, a failing edit, an edit, bash and an image read", async () => {
		const model = scripted(SCRIPT);
		const agent = createAgent({ model, tools: keelTools(ws.session) });
		const result = await agent.invoke({ messages: [{ role: "user", content: "work" }] });
		expect(result.messages.at(-1)!.content).toBe(FINAL_TEXT);
		expect(await ws.notes()).toBe("ALPHA\nbeta\n");
		const seen = toolMessages(model);
		for (const [id, pattern] of Object.entries(EXPECTED_TEXT)) expect(seen.get(id)!.content).toMatch(pattern);
		expect(seen.get("c2")!.status).toBe("error");
		expect(seen.get("c3")!.status).toBe("success");
		expect((seen.get("c2")!.artifact as { error: { code: string } }).error.code).toBe("NO_MATCH");
		const image = seen.get("c5")!.content as Array<Record<string, unknown>>;
		expect(image[1]).toMatchObject({ type: "image", mimeType: "image/png" });
		expect(image[1].data).toMatch(/^iVBORw0KGgo/);
	});

	it("LangChain does not pre-validate: keel repairs a stringified edits array and refuses extra fields", async () => {
		const model = scripted([
			{
				id: "j1",
				name: "edit",
				args: { path: "notes.txt", edits: JSON.stringify([{ oldText: "beta", newText: "BETA" }]) },
			},
			{ id: "j2", name: "write", args: { path: "notes.txt", content: "x", mode: "force" } },
		]);
		await createAgent({ model, tools: keelTools(ws.session) }).invoke({
			messages: [{ role: "user", content: "p" }],
		});
		const seen = toolMessages(model);
		expect(seen.get("j1")!.content).toMatch(/Successfully replaced/);
		expect(seen.get("j2")!.content).toMatch(/^\[INVALID_ARGS\] .*mode/);
		expect(await ws.notes()).toBe("alpha\nBETA\n");
	});

	it("an abort kills the running command and rejects the run", async () => {
		const marker = `keel-lc-abort-${process.pid}`;
		const { command, started } = sleeper(ws.dir, marker);
		const model = scripted([{ id: "s1", name: "bash", args: { command } }]);
		const controller = new AbortController();
		const running = createAgent({ model, tools: keelTools(ws.session) }).invoke(
			{ messages: [{ role: "user", content: "p" }] },
			{ signal: controller.signal },
		);
		expect(await waitFor(() => existsSync(started), 10_000)).toBe(true);
		controller.abort();
		await expect(running).rejects.toThrow(/abort/i);
		expect(await waitFor(() => processesWith(marker).length === 0, 10_000)).toBe(true);
	});
});

describe("keel/langchain streaming and strict mode", () => {
	let ws: Workspace;
	beforeEach(async () => {
		ws = await workspace();
	});
	afterEach(async () => {
		await ws.close();
	});

	const gated = () => scripted([{ id: "g1", name: "bash", args: { command: gatedCommand("go") } }]);

	it('stream(streamMode "custom"): bash output reaches the graph\'s writer while the command runs', async () => {
		const model = gated();
		const agent = createAgent({ model, tools: keelTools(ws.session) });
		const seen: KeelToolOutputEvent[] = [];
		const stream = await agent.stream(
			{ messages: [{ role: "user", content: "p" }] },
			{ streamMode: "custom" },
		);
		for await (const chunk of stream) {
			const event = chunk as KeelToolOutputEvent;
			seen.push(event);
			if (event.output.text.includes("first-chunk")) await writeFile(join(ws.dir, "go"), "");
		}
		expect(seen.some((e) => e.event === KEEL_TOOL_OUTPUT && e.name === "bash" && e.toolCallId === "g1")).toBe(
			true,
		);
		expect(toolMessages(model).get("g1")!.content).toMatch(/first-chunk\ngate-opened/);
	});

	it("streamEvents: bash output arrives as on_custom_event while the command runs", async () => {
		const model = gated();
		const agent = createAgent({ model, tools: keelTools(ws.session) });
		const custom: KeelToolOutputEvent[] = [];
		for await (const e of agent.streamEvents(
			{ messages: [{ role: "user", content: "p" }] },
			{ version: "v2" },
		)) {
			if (e.event !== "on_custom_event" || e.name !== KEEL_TOOL_OUTPUT) continue;
			const event = e.data as KeelToolOutputEvent;
			custom.push(event);
			if (event.output.text.includes("first-chunk")) await writeFile(join(ws.dir, "go"), "");
		}
		expect(custom.length).toBeGreaterThan(0);
		expect(toolMessages(model).get("g1")!.content).toMatch(/first-chunk\ngate-opened/);
	});

	it("strict: bindTools' strict mode gets schemas it accepts; null in an optional field means absent", async () => {
		const session = await createSession({ root: ws.dir, profile: "unified" });
		try {
			const tools = keelTools(session, { strict: true });
			const offered = tools.map(
				(t) =>
					convertToOpenAITool(t, { strict: true }).function as {
						name: string;
						parameters: unknown;
						strict?: boolean;
					},
			);
			expect(offered.every((f) => f.strict === true)).toBe(true);
			strictToolsJudge(offered.map((f) => ({ name: f.name, schema: f.parameters })));
			const model = scripted([
				{ id: "n1", name: "read", args: { path: "notes.txt", offset: null, limit: null } },
				{ id: "n2", name: "grep", args: { pattern: "beta", path: null, glob: null, literal: null } },
			]);
			await createAgent({ model, tools }).invoke({ messages: [{ role: "user", content: "p" }] });
			const seen = toolMessages(model);
			expect(seen.get("n1")!.status).toBe("success");
			expect(seen.get("n1")!.content).toMatch(/alpha\nbeta/);
			expect(seen.get("n2")!.content).toMatch(/notes\.txt:2: beta/);
		} finally {
			await session.close();
		}
	});
});

describe("deepagents on KeelSandbox", () => {
	let ws: Workspace;
	beforeEach(async () => {
		ws = await workspace();
	});
	afterEach(async () => {
		await ws.close();
	});

	it("a deep agent's read_file, failing edit_file, edit_file and execute run on keel", async () => {
		const session = await createSession({ root: ws.dir, profile: "unified" });
		const notes = join(ws.dir, "notes.txt");
		const model = scripted([
			{ id: "d1", name: "read_file", args: { file_path: notes } },
			{ id: "d2", name: "edit_file", args: { file_path: notes, old_string: "gamma", new_string: "GAMMA" } },
			{ id: "d3", name: "edit_file", args: { file_path: notes, old_string: "alpha", new_string: "ALPHA" } },
			{ id: "d4", name: "execute", args: { command: "cat notes.txt; rm -rf /" } },
			{ id: "d5", name: "execute", args: { command: "cat notes.txt" } },
			{ id: "d6", name: "read_file", args: { file_path: "/etc/passwd" } },
		]);
		const agent = createDeepAgent({ model, backend: new KeelSandbox(session) });
		await agent.invoke({ messages: [{ role: "user", content: "work" }] });
		const seen = toolMessages(model);
		const text = (id: string) => {
			const c = seen.get(id)!.content;
			return typeof c === "string" ? c : c.map((b) => ("text" in b ? b.text : "")).join("\n");
		};
		expect(text("d1")).toMatch(/alpha/);
		expect(text("d2")).toMatch(/NO_MATCH/);
		expect(text("d4")).toMatch(/COMMAND_REFUSED/);
		expect(text("d5")).toMatch(/ALPHA\nbeta/);
		expect(text("d6")).toMatch(/PATH_OUTSIDE_ROOTS/);
		expect(await ws.notes()).toBe("ALPHA\nbeta\n");
		await session.close();
	});

	it("KeelSandbox keeps keel's promises: no blind overwrite, no way out through a planted link", async () => {
		const session = await createSession({ root: ws.dir, profile: "unified" });
		const sandbox = new KeelSandbox(session);
		const notes = join(ws.dir, "notes.txt");
		const overwrite = await sandbox.write(notes, "clobbered\n");
		expect(overwrite.error).toMatch(/NOT_READ/);
		expect(await ws.notes()).toBe("alpha\nbeta\n");
		await symlink("/etc", join(ws.dir, "etc-link"));
		expect((await sandbox.read(join(ws.dir, "etc-link", "passwd"))).error).toMatch(/PATH_OUTSIDE_ROOTS/);
		expect((await sandbox.ls(join(ws.dir, "etc-link"))).error).toMatch(/PATH_OUTSIDE_ROOTS/);
		expect((await sandbox.grep("root", join(ws.dir, "etc-link"))).error).toMatch(/PATH_OUTSIDE_ROOTS/);
		const [download] = await sandbox.downloadFiles([join(ws.dir, "etc-link", "passwd")]);
		expect(download.content).toBeNull();
		await session.close();
	});

	it("edit_file follows deepagents' contract: replace_all counts, an unchanged edit succeeds, no keel names", async () => {
		const session = await createSession({ root: ws.dir, profile: "unified" });
		const fruit = join(ws.dir, "fruit.txt");
		await writeFile(fruit, "apple\nbanana\napple\norange\napple\n");
		const model = scripted([
			{ id: "e1", name: "read_file", args: { file_path: fruit } },
			{ id: "e2", name: "edit_file", args: { file_path: fruit, old_string: "banana", new_string: "banana" } },
			{ id: "e3", name: "edit_file", args: { file_path: fruit, old_string: "apple", new_string: "pear" } },
			{
				id: "e4",
				name: "edit_file",
				args: { file_path: fruit, old_string: "apple", new_string: "pear", replace_all: true },
			},
			{
				id: "e5",
				name: "edit_file",
				args: { file_path: join(ws.dir, "nope.txt"), old_string: "a", new_string: "b" },
			},
			{ id: "e6", name: "edit_file", args: { file_path: fruit, old_string: "kiwi", new_string: "KIWI" } },
		]);
		await createDeepAgent({ model, backend: new KeelSandbox(session) }).invoke({
			messages: [{ role: "user", content: "work" }],
		});
		const seen = toolMessages(model);
		const text = (id: string) => String(seen.get(id)!.content);
		expect(text("e2")).toMatch(/^Successfully replaced 1 occurrence\(s\)/);
		expect(text("e3")).toMatch(/multiple/i);
		expect(text("e4")).toMatch(/^Successfully replaced 3 occurrence\(s\)/);
		expect(text("e5")).toMatch(/not found/i);
		expect(text("e6")).toMatch(/not found/i);
		// A deepagents model has edit_file(old_string, new_string, replace_all): nothing names keel's
		// tools, their arguments or payloadRef.
		for (const id of ["e3", "e5", "e6"]) {
			expect(text(id)).not.toMatch(
				/\bfile failed|\bedit failed|payloadRef|\boldText\b|\bnewText\b|\breplaceAll\b|\bor find\b/,
			);
		}
		expect(text("e3")).toMatch(/edit_file failed with AMBIGUOUS_MATCH/);
		expect(await readFile(fruit, "utf8")).toBe("pear\nbanana\npear\norange\npear\n");
		await session.close();
	});

	it("a pi-profile backend refuses replace_all and delete without naming tools the model lacks", async () => {
		const session = await createSession({ root: ws.dir, profile: "pi" });
		const sandbox = new KeelSandbox(session);
		const notes = join(ws.dir, "notes.txt");
		const all = await sandbox.edit(notes, "a", "b", true);
		const gone = await sandbox.delete(notes);
		for (const r of [all, gone]) {
			expect(r.error).toBeDefined();
			expect(r.error).not.toMatch(/\bfile tool\b|profile|unified|replaceAll/);
		}
		expect(all.error).toMatch(/replace_all/);
		expect(await ws.notes()).toBe("alpha\nbeta\n");
		await session.close();
	});
});

/**
 * The behaviours deepagents' sandbox standard tests check for edit(), as keel's own table: each
 * file is created through the sandbox, edited, and read back through it.
 */
describe("KeelSandbox edit: deepagents' standard behaviours", () => {
	interface EditCase {
		name: string;
		initial: string;
		args: [string, string, boolean?];
		/** The expected occurrences, or the text the error must contain. */
		expect: number | RegExp;
		/** The whole file afterwards (default: unchanged on an error). */
		after?: string;
	}
	const long = { x: "x".repeat(1000), y: "y".repeat(1000) };
	const CASES: EditCase[] = [
		{
			name: "one occurrence",
			initial: "Hello world\nGoodbye world\n",
			args: ["Goodbye", "Farewell"],
			expect: 1,
			after: "Hello world\nFarewell world\n",
		},
		{
			name: "several, no replaceAll",
			initial: "apple\nbanana\napple\n",
			args: ["apple", "pear", false],
			expect: /multiple/i,
		},
		{
			name: "several, replaceAll",
			initial: "apple\nbanana\napple\norange\napple",
			args: ["apple", "pear", true],
			expect: 3,
			after: "pear\nbanana\npear\norange\npear",
		},
		{
			name: "replaceAll, same length",
			initial: "ab ab ab",
			args: ["ab", "cd", true],
			expect: 3,
			after: "cd cd cd",
		},
		{ name: "text not there", initial: "Hello world", args: ["nonexistent", "x"], expect: /not found/i },
		{
			name: "regex metacharacters",
			initial: "Price: $100.00\nPattern: [a-z]*\n",
			args: ["[a-z]*", "[0-9]+"],
			expect: 1,
			after: "Price: $100.00\nPattern: [0-9]+\n",
		},
		{
			name: "multiline",
			initial: "Line 1\nLine 2\nLine 3",
			args: ["Line 1\nLine 2", "Combined"],
			expect: 1,
			after: "Combined\nLine 3",
		},
		{
			name: "deleting text",
			initial: "Keep\nDelete this\nKeep too",
			args: ["Delete this\n", ""],
			expect: 1,
			after: "Keep\nKeep too",
		},
		{
			name: "identical old and new",
			initial: "Same text",
			args: ["Same text", "Same text"],
			expect: 1,
			after: "Same text",
		},
		{
			name: "identical, text not there",
			initial: "Same text",
			args: ["Other", "Other"],
			expect: /not found/i,
		},
		{
			name: "unicode",
			initial: "Hello \u{1F44B} world\n\u4E16\u754C",
			args: ["\u{1F44B}", "\u{1F30D}"],
			expect: 1,
			after: "Hello \u{1F30D} world\n\u4E16\u754C",
		},
		{
			name: "whitespace only",
			initial: "Line1    Line2",
			args: ["    ", " "],
			expect: 1,
			after: "Line1 Line2",
		},
		{
			name: "long strings",
			initial: `Start\n${long.x}\nEnd`,
			args: [long.x, long.y],
			expect: 1,
			after: `Start\n${long.y}\nEnd`,
		},
		{
			name: "part of a line",
			initial: "The quick brown fox jumps",
			args: ["brown fox", "red cat"],
			expect: 1,
			after: "The quick red cat jumps",
		},
	];

	let ws: Workspace;
	let session: Awaited<ReturnType<typeof createSession>>;
	beforeEach(async () => {
		ws = await workspace();
		session = await createSession({ root: ws.dir, profile: "unified" });
	});
	afterEach(async () => {
		await session.close();
		await ws.close();
	});

	it("every case, through the sandbox alone", async () => {
		const sandbox = new KeelSandbox(session);
		for (const [i, c] of CASES.entries()) {
			const path = join(ws.dir, `case-${i}.txt`);
			expect((await sandbox.write(path, c.initial)).error, c.name).toBeUndefined();
			const r = await sandbox.edit(path, ...c.args);
			if (typeof c.expect === "number") {
				expect(r, c.name).toMatchObject({ occurrences: c.expect });
				expect(r.error, c.name).toBeUndefined();
			} else expect(r.error, c.name).toMatch(c.expect);
			expect(await readFile(path, "utf8"), c.name).toBe(c.after ?? c.initial);
		}
		expect((await sandbox.edit(join(ws.dir, "missing.txt"), "old", "new")).error).toMatch(/not found/i);
	});
});
