/**
 * The workspace checkers as hosts configure them: KEEL_DIAGNOSTICS, the CLI's and `keel serve`'s
 * --diagnostics, pi's --keel-diagnostics. Preset names only, read the same way everywhere; a name
 * that is no preset is an error naming the presets, in every host, before anything runs.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse } from "../../src/adapters/cli-args.js";
import { UsageError } from "../../src/adapters/cli-serve.js";
import { resolveConfig } from "../../src/adapters/pi/config.js";
import { ENV_NAMES, envSettings, SettingError } from "../../src/adapters/settings-env.js";
import { REPO, runKeel } from "../fixtures/keel-cli.js";

const PRESETS = /the presets are tsc, ruff, pyright, mypy, py_compile/;
const none = () => undefined;

describe("KEEL_DIAGNOSTICS in the shared settings", () => {
	it("reads a comma separated list of presets; a name given twice counts once", () => {
		expect(envSettings({ KEEL_DIAGNOSTICS: " tsc, ruff ,tsc" }).diagnostics).toEqual(["tsc", "ruff"]);
		expect(envSettings({ KEEL_DIAGNOSTICS: " " }).diagnostics).toBeUndefined();
		expect(ENV_NAMES).toContain("KEEL_DIAGNOSTICS");
	});

	it.each(["Ruff", "eslint", "tsc;rm -rf /"])("%s is an error naming the presets", (name) => {
		const read = () => envSettings({ KEEL_DIAGNOSTICS: `tsc,${name}` });
		expect(read).toThrow(SettingError);
		expect(read).toThrow(PRESETS);
		expect(read).toThrow(`KEEL_DIAGNOSTICS names an unknown checker ${JSON.stringify(name)}`);
	});
});

describe("the CLI's and serve's --diagnostics", () => {
	it("the flag (repeatable, comma separated) wins over KEEL_DIAGNOSTICS", () => {
		expect(
			parse(["batch", "--diagnostics", "tsc,ruff", "--diagnostics", "mypy"]).session.diagnostics,
		).toEqual(["tsc", "ruff", "mypy"]);
		expect(parse(["serve"], { KEEL_DIAGNOSTICS: "py_compile" }).session.diagnostics).toEqual(["py_compile"]);
		expect(
			parse(["serve", "--diagnostics", "ruff"], { KEEL_DIAGNOSTICS: "py_compile" }).session.diagnostics,
		).toEqual(["ruff"]);
		expect(parse(["batch"]).session.diagnostics).toBeUndefined();
	});

	it("a typo in the flag or the variable is a usage error naming the presets", () => {
		expect(() => parse(["batch", "--diagnostics", "tcs"])).toThrow(UsageError);
		expect(() => parse(["batch", "--diagnostics", "tcs"])).toThrow(
			/--diagnostics names an unknown checker "tcs"/,
		);
		expect(() => parse(["serve"], { KEEL_DIAGNOSTICS: "pyright,MyPy" })).toThrow(PRESETS);
		// A good flag does not hide a bad variable: the environment is read first, as for every setting.
		expect(() => parse(["serve", "--diagnostics", "ruff"], { KEEL_DIAGNOSTICS: "ruf" })).toThrow(
			/KEEL_DIAGNOSTICS names an unknown checker "ruf"/,
		);
	});
});

describe("pi's --keel-diagnostics", () => {
	it("flag over KEEL_DIAGNOSTICS over the global settings; none by default", () => {
		expect(resolveConfig({ cwd: "/w", flag: none, env: {} }).diagnostics).toEqual([]);
		const flag = (n: string) => (n === "keel-diagnostics" ? "tsc" : undefined);
		expect(resolveConfig({ cwd: "/w", flag, env: { KEEL_DIAGNOSTICS: "ruff" } }).diagnostics).toEqual([
			"tsc",
		]);
		expect(
			resolveConfig({ cwd: "/w", flag: none, env: { KEEL_DIAGNOSTICS: "ruff,mypy" } }).diagnostics,
		).toEqual(["ruff", "mypy"]);
		expect(
			resolveConfig({ cwd: "/w", flag: none, env: {}, globalSettings: { diagnostics: ["pyright"] } })
				.diagnostics,
		).toEqual(["pyright"]);
	});

	it("a checked-out repository does not choose commands to run: its settings are ignored", () => {
		const c = resolveConfig({ cwd: "/w", flag: none, env: {}, projectSettings: { diagnostics: ["tsc"] } });
		expect(c.diagnostics).toEqual([]);
		expect(c.warnings.join("\n")).toMatch(/diagnostics is ignored/);
	});

	it.each([
		["the flag", (n: string) => (n === "keel-diagnostics" ? "Tsc" : undefined), {}, /--keel-diagnostics/],
		["the variable", none, { KEEL_DIAGNOSTICS: "tsc,eslint" }, /KEEL_DIAGNOSTICS/],
	])("a typo in %s refuses every tool call, naming the presets", (_n, flag, env, where) => {
		const c = resolveConfig({ cwd: "/w", flag, env });
		expect(c.error).toMatch(where);
		expect(c.error).toMatch(PRESETS);
		expect(c.warnings.join("\n")).toMatch(/keel's tools will refuse to run/);
	});
});

describe("through the built CLI", () => {
	let root: string;
	const env = (extra: Record<string, string>): NodeJS.ProcessEnv => {
		const e = { ...process.env };
		for (const name of ENV_NAMES) delete e[name];
		return { ...e, ...extra };
	};

	beforeAll(() => {
		if (!existsSync(join(REPO, "dist", "adapters", "cli.js")))
			throw new Error("The CLI needs the build: run `npx tsc -p tsconfig.build.json` first.");
	});
	beforeEach(async () => {
		root = await mkdtemp(join(tmpdir(), "keel-cli-diag-"));
	});
	afterEach(async () => {
		await rm(root, { recursive: true, force: true });
	});

	it.each([
		[
			"KEEL_DIAGNOSTICS",
			[],
			{ KEEL_DIAGNOSTICS: "py_compile,Ruff" },
			/KEEL_DIAGNOSTICS names an unknown checker "Ruff"/,
		],
		[
			"--diagnostics",
			["--diagnostics", "pycompile"],
			{},
			/--diagnostics names an unknown checker "pycompile"/,
		],
	])("a typo in %s: exit 2 naming the presets, nothing written", async (_n, flags, extra, message) => {
		const r = await runKeel(
			root,
			["call", "write", '{"path":"a.py","content":"x = 1\\n"}', "--root", root, ...flags],
			{ env: env(extra) },
		);
		expect(r.code).toBe(2);
		expect(r.stderr).toMatch(message);
		expect(r.stderr).toMatch(PRESETS);
		expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
		expect(existsSync(join(root, "a.py"))).toBe(false);
		const serve = await runKeel(root, ["serve", "--root", root, ...flags], { env: env(extra) });
		expect(serve.code).toBe(2);
		expect(serve.stderr).toMatch(PRESETS);
	});

	it("KEEL_DIAGNOSTICS=py_compile gives the session the checker: a write reports it", async () => {
		const r = await runKeel(root, ["call", "write", '{"path":"a.py","content":"x = 1\\n"}', "--root", root], {
			env: env({ KEEL_DIAGNOSTICS: "py_compile" }),
		});
		const out = JSON.parse(r.stdout);
		expect(out).toMatchObject({ ok: true });
		// Its status (ran, or timed out on a busy machine) is the checker's business; that it ran is ours.
		expect(out.details.diagnostics.checkers.map((c: { checker: string }) => c.checker)).toEqual([
			"py_compile",
		]);
	});
});
