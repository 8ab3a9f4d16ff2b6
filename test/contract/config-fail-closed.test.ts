/**
 * Configuration fails closed, through the library and the MCP server as embedded: an unknown
 * profile, tool name or option is an INVALID_ARGS error naming the valid ones, and nothing opens.
 * A typo written by an attacker-minded user (wrong case, a near name, a spec string where a backend
 * belongs) must never leave a wider palette than asked for.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runServe } from "../../src/adapters/mcp/index.js";
import { createSession, KeelError, type SessionOptions, toolsForProfile } from "../../src/index.js";

let root: string;
let spill: string;

beforeEach(async () => {
	root = await mkdtemp(join(tmpdir(), "keel-config-"));
	spill = await mkdtemp(join(tmpdir(), "keel-config-spill-"));
});

afterEach(async () => {
	await rm(root, { recursive: true, force: true });
	await rm(spill, { recursive: true, force: true });
});

const REFUSED: [string, Record<string, unknown>, RegExp][] = [
	[
		"a profile in the wrong case",
		{ profile: "Unified" },
		/unknown profile "Unified": use one of pi, unified, codex/,
	],
	["a made-up profile", { profile: "bogus" }, /unknown profile "bogus": use one of pi, unified, codex/],
	["a profile that is not a string", { profile: 1 }, /unknown profile 1/],
	[
		"a disabled tool in the wrong case",
		{ disabledTools: ["Bash"] },
		/disabledTools names an unknown tool "Bash" \(names are case-sensitive\): the pi profile's tools are read, write, edit, bash, grep, find, ls/,
	],
	[
		"a disabled tool that does not exist",
		{ profile: "unified", disabledTools: ["pyhton"] },
		/unknown tool "pyhton".*the unified profile's tools are read, file, apply_patch, bash, process, grep, find, ls, python/,
	],
	["disabledTools as a string", { disabledTools: "bash" }, /disabledTools must be an array of strings/],
	[
		"an unknown option",
		{ profle: "unified" },
		/unknown session option "profle": the options are root, allow, allowRead,/,
	],
	["an option in the wrong case", { disabledtools: ["bash"] }, /unknown session option "disabledtools"/],
	["a backend spec string", { backend: "bwrap" }, /backend must be a backend object .*KEEL_BACKEND/],
];

describe("createSession fails closed", () => {
	it.each(REFUSED)("%s is INVALID_ARGS naming the valid names", async (_name, bad, message) => {
		const e = await createSession({ root, spillDir: spill, ...bad } as SessionOptions).catch(
			(x: unknown) => x,
		);
		expect(e).toBeInstanceOf(KeelError);
		expect((e as KeelError).code).toBe("INVALID_ARGS");
		expect((e as KeelError).message).toMatch(message);
		// Nothing opened: the spill directory given stays empty.
		expect(await readdir(spill)).toEqual([]);
	});

	it("toolsForProfile never hands an unknown profile a palette", () => {
		expect(() => toolsForProfile("Unified" as never)).toThrow(/unknown profile "Unified"/);
	});

	it("correct names still work, and a disabled tool is gone", async () => {
		const s = await createSession({
			root,
			spillDir: spill,
			profile: "unified",
			disabledTools: ["bash", "python"],
		});
		try {
			expect(s.tools.map((t) => t.name)).toEqual(expect.not.arrayContaining(["bash", "python"]));
			const r = await s.call("bash", { command: "echo ran > ran.txt" });
			expect(r).toMatchObject({ ok: false, error: { code: "UNKNOWN_TOOL" } });
			expect(existsSync(join(root, "ran.txt"))).toBe(false);
		} finally {
			await s.close();
		}
	});
});

describe("the MCP server fails closed", () => {
	it.each([
		[{ profile: "Unified" }, /unknown profile "Unified"/],
		[{ disabledTools: ["Bash"] }, /unknown tool "Bash"/],
		[{ roots: [root] }, /unknown session option "roots"/],
	])("runServe(%j) exits 2 before serving, naming the fault", async (bad, message) => {
		const lines: string[] = [];
		const code = await runServe({ root, ...bad } as SessionOptions, {}, { stderr: (l) => lines.push(l) });
		expect(code).toBe(2);
		expect(lines.join("\n")).toMatch(message);
		expect(lines.join("\n")).not.toMatch(/MCP server on stdio/);
	});
});

describe("a session disposes like a resource", () => {
	it("Symbol.asyncDispose closes it: a later call is refused", async () => {
		const s = await createSession({ root, spillDir: spill });
		await s[Symbol.asyncDispose]();
		const r = await s.call("ls", {});
		expect(r).toMatchObject({ ok: false, error: { code: "BACKEND_UNAVAILABLE" } });
		expect((r as { error: { message: string } }).error.message).toMatch(/session is closed/);
	});
});
