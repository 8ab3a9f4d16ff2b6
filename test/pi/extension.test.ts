/**
 * The extension against a stand-in ExtensionAPI (no pi process): what it registers, the tool policy
 * on every session start and agent run, keel's errors and details through pi's execute/tool_result
 * contract, and the lifetime of the keel Session.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ENV_NAMES } from "../../src/adapters/pi/config.js";
import keel from "../../src/adapters/pi/extension.js";
import { fileToolWithoutHashline } from "../../src/tools/file.js";
import { toolsForProfile } from "../../src/tools/registry.js";

type Handler = (event: any, ctx: any) => unknown;

/** Every stand-in made in a test, shut down afterwards so no keel Session outlives its test. */
const made: { emit: (e: string, p: any, c: any) => Promise<unknown> }[] = [];

function fakePi(flags: Record<string, string> = {}) {
	const tools = new Map<string, any>();
	const handlers = new Map<string, Handler[]>();
	const registeredFlags: string[] = [];
	const flagTypes: Record<string, string> = {};
	const state = { active: [] as string[] };
	const api = {
		registerFlag: (name: string, opts: { type: string }) => {
			registeredFlags.push(name);
			flagTypes[name] = opts.type;
		},
		getFlag: (name: string) => flags[name],
		registerTool: (t: any) => tools.set(t.name, t),
		on: (event: string, h: Handler) => handlers.set(event, [...(handlers.get(event) ?? []), h]),
		getActiveTools: () => [...state.active],
		setActiveTools: (names: string[]) => {
			state.active = [...names];
		},
	};
	keel(api as any);
	const emit = async (event: string, payload: any, ctx: any) => {
		let out: unknown;
		for (const h of handlers.get(event) ?? []) out = await h(payload, ctx);
		return out;
	};
	const pi = { tools, emit, state, registeredFlags, flagTypes };
	made.push(pi);
	return pi;
}

const BUILTINS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

let dir: string;
let ws: string;
const ctx = (cwd = ws) => ({ cwd, hasUI: false, ui: { notify: vi.fn() } });

beforeEach(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-pi-ext-")));
	ws = join(dir, "ws");
	await mkdir(join(dir, "agent"), { recursive: true });
	await mkdir(ws);
	await writeFile(join(ws, "notes.txt"), "alpha\nbeta\n");
	// Nothing from the real environment or ~/.pi may leak into these tests.
	vi.stubEnv("PI_CODING_AGENT_DIR", join(dir, "agent"));
	for (const k of ENV_NAMES) vi.stubEnv(k, undefined);
});

afterEach(async () => {
	for (const pi of made.splice(0)) await pi.emit("session_shutdown", { reason: "quit" }, ctx());
	vi.unstubAllEnvs();
	await rm(dir, { recursive: true, force: true });
});

describe("registration", () => {
	it("registers keel's flags and every keel tool with keel's schema and renderers", () => {
		const { tools, registeredFlags, flagTypes } = fakePi();
		expect(registeredFlags).toEqual([
			"keel-profile",
			"keel-root",
			"keel-allow",
			"keel-allow-read",
			"keel-disable",
			"keel-backend",
			"keel-network",
			"keel-env",
			"keel-identity",
			"keel-insecure-host-key",
			"keel-checkpoints",
			"keel-diagnostics",
		]);
		// Switches are booleans (`--keel-network` alone); everything else takes a value.
		expect(flagTypes).toMatchObject({
			"keel-backend": "string",
			"keel-identity": "string",
			"keel-network": "boolean",
			"keel-insecure-host-key": "boolean",
			"keel-checkpoints": "boolean",
			"keel-diagnostics": "string",
		});
		// A name in both profiles is registered once, with the pi profile's definition (pi's schema:
		// pi registers tools at load, before the profile is known).
		// pi's read has no hashline, so neither has the file tool pi is offered.
		const keelTools = new Map(
			[
				...toolsForProfile("codex"),
				...toolsForProfile("unified"),
				...toolsForProfile("pi"),
				fileToolWithoutHashline,
			].map((t) => [t.name, t]),
		);
		expect([...tools.keys()].sort()).toEqual([...keelTools.keys()].sort());
		for (const name of [...BUILTINS, "file"]) expect(tools.has(name), name).toBe(true);
		for (const [name, t] of tools) {
			expect(t.parameters, name).toBe(keelTools.get(name)!.parameters);
			expect(t.description).toBe(keelTools.get(name)!.description);
			expect(typeof t.renderCall).toBe("function");
			expect(typeof t.renderResult).toBe("function");
			expect(t.promptSnippet, name).toEqual(expect.any(String));
		}
		expect(tools.get("file").promptGuidelines.join(" ")).toMatch(/file/);
		expect(tools.get("read").annotations).toEqual({
			readOnlyHint: true,
			destructiveHint: false,
			idempotentHint: true,
		});
	});
});

describe("tool policy", () => {
	const names = (profile: "pi" | "unified") => toolsForProfile(profile).map((t) => t.name);
	const everything = () => [...new Set([...names("pi"), ...names("unified")]), "custom_tool"];

	it("profile pi offers pi's names and hides file", async () => {
		const pi = fakePi();
		pi.state.active = everything();
		await pi.emit("session_start", { reason: "startup" }, ctx());
		expect(pi.state.active).toEqual([...names("pi"), "custom_tool"]);
		expect(pi.state.active).not.toContain("file");
	});

	it("profile unified suppresses write and edit, and disabled names go too", async () => {
		const pi = fakePi({ "keel-profile": "unified", "keel-disable": "bash, custom_tool" });
		pi.state.active = everything();
		await pi.emit("session_start", { reason: "startup" }, ctx());
		const expected = names("unified").filter((n) => n !== "bash");
		expect([...pi.state.active].sort()).toEqual(expected.sort());
		expect(pi.state.active).not.toContain("write");
	});

	it("is applied again on every session start and before every agent run", async () => {
		const pi = fakePi({ "keel-profile": "unified" });
		for (const reason of ["startup", "new", "resume", "fork", "reload"]) {
			pi.state.active = everything();
			await pi.emit("session_start", { reason }, ctx());
			expect(pi.state.active, reason).not.toContain("write");
			expect(pi.state.active, reason).not.toContain("edit");
		}
		pi.state.active = ["read", "write", "edit", "file"];
		await pi.emit("before_agent_start", { prompt: "x" }, ctx());
		expect(pi.state.active).toEqual(["read", "file"]);
	});

	it("never turns on a tool the user left off", async () => {
		const pi = fakePi();
		pi.state.active = ["read", "bash"];
		await pi.emit("session_start", { reason: "startup" }, ctx());
		expect(pi.state.active).toEqual(["read", "bash"]);
	});

	it("a bad profile is a warning, then every keel tool call is refused: no palette is guessed", async () => {
		const error = vi.spyOn(console, "error").mockImplementation(() => {});
		try {
			const pi = fakePi({ "keel-profile": "Unified" });
			pi.state.active = everything();
			await pi.emit("session_start", { reason: "startup" }, ctx());
			expect(error).toHaveBeenCalledWith(expect.stringMatching(/unknown --keel-profile "Unified"/));
			expect(pi.state.active).not.toContain("file");
			expect(pi.state.active).not.toContain("python");
			const notify = vi.fn();
			await pi.emit("session_start", { reason: "new" }, { cwd: ws, hasUI: true, ui: { notify } });
			expect(notify).toHaveBeenCalledWith(expect.stringMatching(/Unified.*refuse to run/), "warning");
			const run = pi.tools
				.get("bash")
				.execute("c1", { command: "echo ran > ran.txt" }, undefined, undefined, ctx());
			await expect(run).rejects.toThrow(
				/^\[INVALID_ARGS\] keel's settings are invalid: unknown --keel-profile/,
			);
			expect(existsSync(join(ws, "ran.txt"))).toBe(false);
		} finally {
			error.mockRestore();
		}
	});

	it("a mistyped --keel-disable name refuses every call instead of leaving the tool on", async () => {
		const pi = fakePi({ "keel-disable": "Bash" });
		const run = pi.tools
			.get("bash")
			.execute("c1", { command: "echo ran > ran.txt" }, undefined, undefined, ctx());
		await expect(run).rejects.toThrow(/--keel-disable names an unknown tool "Bash"/);
		expect(existsSync(join(ws, "ran.txt"))).toBe(false);
	});
});

describe("execution", () => {
	const call = (pi: ReturnType<typeof fakePi>, name: string, id: string, args: unknown, c = ctx()) => {
		const updates: unknown[] = [];
		const promise = pi.tools.get(name).execute(id, args, undefined, (u: unknown) => updates.push(u), c);
		return { promise, updates };
	};

	it("a keel failure throws [CODE] message and tool_result attaches keel's error and timing", async () => {
		await writeFile(join(ws, "existing.txt"), "keep me\n");
		const pi = fakePi();
		await pi.emit("session_start", { reason: "startup" }, ctx());
		const { promise } = call(pi, "write", "c1", { path: "existing.txt", content: "x" });
		await expect(promise).rejects.toThrow(/^\[NOT_READ\] existing\.txt/);
		const patch: any = await pi.emit(
			"tool_result",
			{ toolCallId: "c1", toolName: "write", isError: true, content: [], details: {} },
			ctx(),
		);
		expect(patch.details.error).toMatchObject({ code: "NOT_READ", retry: "retry", path: "existing.txt" });
		expect(patch.details.elapsedMs).toEqual(expect.any(Number));
		// Taken once; other tools' results are left alone.
		expect(await pi.emit("tool_result", { toolCallId: "c1", isError: true }, ctx())).toBeUndefined();
		expect(await readFile(join(ws, "existing.txt"), "utf8")).toBe("keep me\n");
	});

	it("a success returns keel's content and details with elapsedMs, after an empty first update", async () => {
		const pi = fakePi();
		const read = call(pi, "read", "c1", { path: "notes.txt" });
		const r = await read.promise;
		expect(r.content).toEqual([{ type: "text", text: "alpha\nbeta" }]);
		expect(r.details.elapsedMs).toEqual(expect.any(Number));
		expect(read.updates[0]).toEqual({ content: [], details: undefined });
		const edit = await call(pi, "edit", "c2", {
			path: "notes.txt",
			edits: [{ oldText: "beta", newText: "gamma" }],
		}).promise;
		expect(edit.details.diff).toContain("+2 gamma");
		expect(await readFile(join(ws, "notes.txt"), "utf8")).toBe("alpha\ngamma\n");
	});

	it("one keel session per pi session: read state lasts until shutdown, a new cwd gets a new session", async () => {
		const pi = fakePi();
		await call(pi, "read", "c1", { path: "notes.txt" }).promise;
		await call(pi, "write", "c2", { path: "notes.txt", content: "one\n" }).promise;
		await pi.emit("session_shutdown", { reason: "quit" }, ctx());
		// A fresh session has no read state: the same overwrite is refused.
		await expect(call(pi, "write", "c3", { path: "notes.txt", content: "two\n" }).promise).rejects.toThrow(
			/^\[NOT_READ\]/,
		);
		const other = join(dir, "other");
		await mkdir(other);
		await call(pi, "write", "c4", { path: "made.txt", content: "hi\n" }, ctx(other)).promise;
		expect(await readFile(join(other, "made.txt"), "utf8")).toBe("hi\n");
		await pi.emit("session_shutdown", { reason: "quit" }, ctx());
	});

	it("keel's roots apply: a path outside the workspace is refused", async () => {
		const pi = fakePi();
		await expect(call(pi, "read", "c1", { path: join(dir, "agent", "x") }).promise).rejects.toThrow(
			/^\[PATH_OUTSIDE_ROOTS\]/,
		);
		const allowed = fakePi({ "keel-allow-read": join(dir, "agent") });
		await writeFile(join(dir, "agent", "x"), "ok");
		const r = await call(allowed, "read", "c2", { path: join(dir, "agent", "x") }).promise;
		expect(r.content[0].text).toBe("ok");
	});

	it("a session that cannot open is reported as a keel error and retried on the next call", async () => {
		const pi = fakePi({ "keel-root": join(dir, "missing") });
		await expect(call(pi, "ls", "c1", {}).promise).rejects.toThrow(/^\[[A-Z_]+\] /);
		const patch: any = await pi.emit("tool_result", { toolCallId: "c1", isError: true }, ctx());
		expect(patch.details.error.code).toEqual(expect.any(String));
		await mkdir(join(dir, "missing"));
		await expect(call(pi, "ls", "c2", {}).promise).resolves.toBeDefined();
	});
});

describe("backend", () => {
	const call = (pi: ReturnType<typeof fakePi>, name: string, id: string, args: unknown) =>
		pi.tools.get(name).execute(id, args, undefined, undefined, ctx());

	it("a bad --keel-backend is a warning, then every tool call is refused: nothing runs on this machine", async () => {
		const error = vi.spyOn(console, "error").mockImplementation(() => {});
		try {
			const pi = fakePi({ "keel-backend": "bwarp" });
			await pi.emit("session_start", { reason: "startup" }, ctx());
			expect(error).toHaveBeenCalledWith(
				expect.stringMatching(/^keel: keel backend: unknown backend "bwarp".*refuse to run/),
			);
			const refused = /^\[BACKEND_UNAVAILABLE\] keel's backend setting is invalid: unknown backend "bwarp"/;
			await expect(call(pi, "bash", "c1", { command: "echo ran > ran.txt" })).rejects.toThrow(refused);
			const patch: any = await pi.emit("tool_result", { toolCallId: "c1", isError: true }, ctx());
			expect(patch.details.error.code).toBe("BACKEND_UNAVAILABLE");
			await expect(call(pi, "write", "c2", { path: "new.txt", content: "x" })).rejects.toThrow(refused);
			await expect(call(pi, "read", "c3", { path: "notes.txt" })).rejects.toThrow(refused);
			expect(existsSync(join(ws, "ran.txt"))).toBe(false);
			expect(existsSync(join(ws, "new.txt"))).toBe(false);
		} finally {
			error.mockRestore();
		}
	});

	it("a project's .pi/settings.json cannot choose the backend", async () => {
		await mkdir(join(ws, ".pi"));
		// Were this obeyed, every call would be refused; ignored, the session runs locally.
		await writeFile(join(ws, ".pi", "settings.json"), JSON.stringify({ keel: { backend: "bogus" } }));
		const pi = fakePi();
		const r = await call(pi, "read", "c1", { path: "notes.txt" });
		expect(r.content[0].text).toBe("alpha\nbeta");
	});
});
