/**
 * The CLI and `keel serve` fail closed on configuration, and read the same KEEL_* variables as the
 * pi extension: a variable is honoured (KEEL_BACKEND=bwrap sandboxes the command), a bad one is a
 * usage error naming the valid values, and a backend that was asked for but cannot start is an
 * error, never this machine.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ENV_NAMES } from "../../src/adapters/settings-env.js";
import { REPO, type Run, runKeel } from "../fixtures/keel-cli.js";

let base: string;
let root: string;

/** This process's environment without any KEEL_* setting, plus `extra`. */
function envWith(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	const env = { ...process.env };
	for (const name of ENV_NAMES) delete env[name];
	return { ...env, ...extra };
}

const keel = (args: string[], extra: Record<string, string> = {}, input?: string): Promise<Run> =>
	runKeel(base, args, { env: envWith(extra), input });

/** A usage error: exit 2, one short line on stderr naming `mentions`. */
function expectUsage(r: Run, mentions: RegExp): void {
	expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 2 });
	expect(r.stderr).toMatch(mentions);
	expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
}

beforeAll(() => {
	if (!existsSync(join(REPO, "dist", "adapters", "cli.js")))
		throw new Error("The CLI needs the build: run `npx tsc -p tsconfig.build.json` first.");
});

beforeEach(async () => {
	base = await mkdtemp(join(tmpdir(), "keel-cli-config-"));
	root = base;
	await writeFile(join(root, "a.txt"), "alpha\n");
});

afterEach(async () => {
	await rm(base, { recursive: true, force: true });
});

describe("unknown names are usage errors naming the valid ones", () => {
	const cases: [string, string[], Record<string, string>, RegExp][] = [
		[
			"--profile in the wrong case",
			["--profile", "Unified"],
			{},
			/unknown --profile "Unified": use one of pi, unified, codex/,
		],
		[
			"KEEL_PROFILE",
			[],
			{ KEEL_PROFILE: "bogus" },
			/unknown KEEL_PROFILE "bogus": use one of pi, unified, codex/,
		],
		[
			"--disable in the wrong case",
			["--disable", "Bash"],
			{},
			/--disable names an unknown tool "Bash" \(names are case-sensitive\): the pi profile's tools are read, write, edit, bash/,
		],
		["KEEL_DISABLE", [], { KEEL_DISABLE: "ls,Bash" }, /KEEL_DISABLE names an unknown tool "Bash"/],
		[
			"a switch that is not one",
			[],
			{ KEEL_BACKEND: "bwrap", KEEL_NETWORK: "please" },
			/KEEL_NETWORK is "please", not a switch/,
		],
		[
			"KEEL_BACKEND that does not parse",
			[],
			{ KEEL_BACKEND: "bwarp" },
			/unknown backend "bwarp" \(use local, bwrap or ssh:/,
		],
	];
	it.each(cases)("%s (call)", async (_name, flags, env, message) => {
		const r = await keel(["call", "bash", '{"command":"echo ran > ran.txt"}', "--root", root, ...flags], env);
		expectUsage(r, message);
		expect(existsSync(join(root, "ran.txt"))).toBe(false);
	});

	it.each(cases)("%s (serve exits before serving)", async (_name, flags, env, message) => {
		const r = await keel(["serve", "--root", root, ...flags], env);
		expect(r.code).toBe(2);
		expect(r.stderr).toMatch(message);
		expect(r.stderr).not.toMatch(/MCP server on stdio/);
	});
});

describe("the KEEL_* variables are honoured as the pi extension honours them", () => {
	it("KEEL_DISABLE takes a tool away; the flag wins over the variable", async () => {
		const off = await keel(["call", "bash", '{"command":"echo ran > ran.txt"}', "--root", root], {
			KEEL_DISABLE: "bash",
		});
		expect(off.code).toBe(2);
		expect(JSON.parse(off.stdout).error.code).toBe("UNKNOWN_TOOL");
		expect(existsSync(join(root, "ran.txt"))).toBe(false);
		const flag = await keel(["call", "ls", "{}", "--root", root, "--disable", "grep"], {
			KEEL_DISABLE: "ls",
		});
		expect(flag.code).toBe(0);
	});

	it("KEEL_PROFILE and KEEL_ROOT choose the palette and the workspace", async () => {
		// `list_dir` is the codex profile's; pi's `ls` is not in it.
		const codex = await keel(["call", "list_dir", JSON.stringify({ dir_path: root })], {
			KEEL_PROFILE: "codex",
		});
		expect(JSON.parse(codex.stdout)).toMatchObject({ ok: true, content: expect.stringContaining("a.txt") });
		const piName = await keel(["call", "ls", "{}", "--root", root], { KEEL_PROFILE: "codex" });
		expect(JSON.parse(piName.stdout)).toMatchObject({ ok: false, error: { code: "UNKNOWN_TOOL" } });
		const ls = await runKeel(tmpdir(), ["call", "ls", "{}"], { env: envWith({ KEEL_ROOT: root }) });
		expect(JSON.parse(ls.stdout)).toMatchObject({ ok: true, content: expect.stringContaining("a.txt") });
	});

	it.skipIf(!existsSync("/usr/bin/bwrap"))(
		"KEEL_BACKEND=bwrap runs the command in the sandbox: its /tmp is not the host's",
		async () => {
			const marker = `keel-env-probe-${process.pid}-${Date.now()}`;
			const r = await keel(
				["call", "bash", JSON.stringify({ command: `echo x > /tmp/${marker} && echo wrote` })],
				{
					KEEL_BACKEND: "bwrap",
					KEEL_ROOT: root,
				},
			);
			if (r.code === 1 && /BACKEND_UNAVAILABLE/.test(r.stdout)) {
				console.warn(`bwrap cannot start here, skipping: ${r.stdout}`);
				return;
			}
			expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, content: "wrote" });
			expect(existsSync(join("/tmp", marker))).toBe(false);
		},
	);

	it("a backend asked for that cannot start is an error, never this machine", async () => {
		// Port 1 on loopback: nothing listens, the connection is refused at once.
		const r = await keel(["call", "bash", '{"command":"echo ran > ran.txt"}'], {
			KEEL_BACKEND: `ssh://nobody@127.0.0.1:1${root}`,
			KEEL_INSECURE_HOST_KEY: "1",
		});
		expect(r.code).toBe(1);
		expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: "BACKEND_UNAVAILABLE" } });
		expect(existsSync(join(root, "ran.txt"))).toBe(false);
	});
});
