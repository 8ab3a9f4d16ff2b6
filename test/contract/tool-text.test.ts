/**
 * The tool text a model reads every turn: a budget per profile that fails when the text grows
 * (the pi profile no larger than pi's own seven tools), and text that tells the truth in its
 * profile and host: the pi profile's write says keel refuses to overwrite a file it has not read,
 * and does so; the file tool pi is offered says nothing of a hashline read pi's read cannot do.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as pi from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { toolsJson } from "../../src/adapters/cli-help.js";
import { allKeelTools } from "../../src/adapters/pi/policy.js";
import { createSession } from "../../src/index.js";
import { type Profile, toolsForProfile } from "../../src/tools/registry.js";

const piOwnTools = [
	pi.createReadToolDefinition,
	pi.createWriteToolDefinition,
	pi.createEditToolDefinition,
	pi.createBashToolDefinition,
	pi.createGrepToolDefinition,
	pi.createFindToolDefinition,
	pi.createLsToolDefinition,
].map((make) => {
	const t = make("/tmp");
	return { name: t.name, label: t.name, description: t.description, parameters: t.parameters };
});

/** Characters of a palette as listed to a model (name, description, JSON Schema per tool). */
const size = (tools: Parameters<typeof toolsJson>[0]) => toolsJson(tools).length;

/**
 * Each profile's ceiling; a tool that needs more words must make room for them. unified: 6,000
 * for its nine file, search, shell and Python tools, plus the `process` tool's 650 (the handles
 * of background commands, which no other tool carries). codex: its own five shapes, exec_command
 * and write_stdin with Codex's argument names, and keel's grep and find.
 */
const BUDGETS: Record<Profile, number> = {
	pi: size(piOwnTools as never),
	unified: 6000 + 650,
	codex: 5700,
};

describe("tool text budget", () => {
	it.each(Object.keys(BUDGETS) as Profile[])("the %s profile stays within its budget", (profile) => {
		const chars = size(toolsForProfile(profile));
		expect(chars, `${profile}: ${chars} characters, budget ${BUDGETS[profile]}`).toBeLessThanOrEqual(
			BUDGETS[profile],
		);
	});

	it("pi's budget is pi's own seven tools, measured from the installed pi", () => {
		expect(piOwnTools.map((t) => t.name).sort()).toEqual([
			"bash",
			"edit",
			"find",
			"grep",
			"ls",
			"read",
			"write",
		]);
		expect(BUDGETS.pi).toBeGreaterThan(4000);
	});
});

describe("tool text tells the truth", () => {
	it("the pi profile's write says an unread file is refused, and an unread file is refused", async () => {
		const write = toolsForProfile("pi").find((t) => t.name === "write")!;
		expect(write.description).not.toMatch(/overwrites if it does/);
		expect(write.description).toMatch(/refused \(read it first\)/);
		const root = await mkdtemp(join(tmpdir(), "keel-tool-text-"));
		const s = await createSession({ root });
		try {
			await writeFile(join(root, "a.txt"), "theirs\n");
			const r = await s.call("write", { path: "a.txt", content: "mine\n" });
			expect(r).toMatchObject({ ok: false, error: { code: "NOT_READ" } });
			expect(await readFile(join(root, "a.txt"), "utf8")).toBe("theirs\n");
			expect((await s.call("read", { path: "a.txt" })).ok).toBe(true);
			expect((await s.call("write", { path: "a.txt", content: "mine\n" })).ok).toBe(true);
		} finally {
			await s.close();
			await rm(root, { recursive: true, force: true });
		}
	});

	it("the file tool offered inside pi (whose read has no hashline) never mentions hashline", () => {
		const tools = allKeelTools();
		const read = tools.find((t) => t.name === "read")!;
		expect(JSON.stringify(read.parameters)).not.toMatch(/hashline/);
		const file = tools.find((t) => t.name === "file")!;
		expect(JSON.stringify({ d: file.description, p: file.parameters })).not.toMatch(/hashline/i);
	});

	it("the unified profile, whose read has hashline, offers file's hashline mode", () => {
		const tools = toolsForProfile("unified");
		expect(JSON.stringify(tools.find((t) => t.name === "read")!.parameters)).toMatch(/"hashline"/);
		expect(JSON.stringify(tools.find((t) => t.name === "file")!.parameters)).toMatch(
			/hashline: start\.\.end refs/,
		);
	});

	it("shorter text keeps validation: the unified profile still refuses what pi's schema refuses", async () => {
		const root = await mkdtemp(join(tmpdir(), "keel-tool-text-"));
		const s = await createSession({ root, profile: "unified" });
		try {
			const r = await s.callDynamic("grep", { pattern: "x", limit: "ten" });
			expect(r).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
			const lines = await s.call("file", {
				queries: [
					{
						type: "edit",
						path: "a.txt",
						edits: [{ newText: "x", matchMode: "lineRange", startLine: 0, endLine: 1 }],
					},
				],
			});
			expect(lines).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
		} finally {
			await s.close();
			await rm(root, { recursive: true, force: true });
		}
	});
});
