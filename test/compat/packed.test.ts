/**
 * keel as a user installs it: `npm pack`, the tarball installed into a fresh project (dependencies
 * from the npm cache, else the registry), then what the README tells that user to run. The consumer
 * has none of keel's dev dependencies and none of the frameworks (optional peers), so a published
 * declaration that imports one (ssh2's types, pi's, a framework's) fails `tsc --strict` here,
 * without skipLibCheck.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../fixtures/keel-cli.js";

const run = promisify(execFile);
const TSC = join(REPO, "node_modules", ".bin", "tsc");

let dir: string;
let project: string;
/** Why the install could not be made here (no registry and no cache); the tests then skip. */
let unavailable: string | undefined;

async function sh(cmd: string, args: string[], cwd = project, input?: string) {
	const child = run(cmd, args, {
		cwd,
		maxBuffer: 64 * 1024 * 1024,
		env: { ...process.env, npm_config_yes: "true" },
	});
	if (input !== undefined) {
		child.child.stdin?.end(input);
	}
	return child;
}

beforeAll(async () => {
	if (!existsSync(join(REPO, "dist", "index.js")))
		throw new Error("The package needs the build: run `npx tsc -p tsconfig.build.json` first.");
	dir = await mkdtemp(join(tmpdir(), "keel-packed-"));
	project = join(dir, "project");
	await mkdir(project);
	// The build is already there (CI builds first): pack it as it stands.
	const packed = await run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], { cwd: REPO });
	const tarball = join(dir, packed.stdout.trim().split("\n").pop()!);
	await writeFile(
		join(project, "package.json"),
		JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }),
	);
	try {
		await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], {
			cwd: project,
			maxBuffer: 64 * 1024 * 1024,
		});
	} catch (e) {
		const text = String((e as { stderr?: string }).stderr ?? e);
		if (/ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|network/i.test(text)) {
			unavailable = `npm could not fetch keel's dependencies (no cache, no registry): ${text.slice(0, 300)}`;
			return;
		}
		throw e;
	}
	// Node's own types, as any TypeScript project on Node has them; nothing else of keel's dev set.
	await mkdir(join(project, "node_modules", "@types"), { recursive: true });
	await symlink(
		join(REPO, "node_modules", "@types", "node"),
		join(project, "node_modules", "@types", "node"),
	);
	await writeFile(join(project, "a.txt"), "alpha\n");
}, 600_000);

afterAll(async () => {
	if (dir) await rm(dir, { recursive: true, force: true });
});

const skip = () => {
	if (unavailable) console.warn(`skipped: ${unavailable}`);
	return unavailable !== undefined;
};

describe("the packed package in a fresh project", () => {
	it("has none of keel's dev-only packages, so the checks below mean something", () => {
		if (skip()) return;
		expect(existsSync(join(project, "node_modules", "keel", "dist", "index.js"))).toBe(true);
		expect(existsSync(join(project, "node_modules", "@types", "ssh2"))).toBe(false);
		expect(existsSync(join(project, "node_modules", "@mariozechner", "pi-coding-agent"))).toBe(false);
		for (const framework of ["ai", "@openai/agents", "@langchain/core", "@mastra/core", "deepagents"])
			expect(existsSync(join(project, "node_modules", framework)), framework).toBe(false);
	});

	it("the README's CLI commands work: --version, call, call -, batch, tools", async () => {
		if (skip()) return;
		const { version } = JSON.parse(await readFile(join(REPO, "package.json"), "utf8"));
		expect((await sh("npx", ["keel", "--version"])).stdout.trim()).toBe(version);
		const read = await sh("npx", ["keel", "call", "read", '{"path":"a.txt"}']);
		expect(JSON.parse(read.stdout)).toMatchObject({ ok: true, content: "alpha" });
		const fromStdin = await sh("npx", ["keel", "call", "ls", "-"], project, '{"path":"."}');
		expect(JSON.parse(fromStdin.stdout)).toMatchObject({
			ok: true,
			content: expect.stringContaining("a.txt"),
		});
		const batch = await sh(
			"npx",
			["keel", "batch"],
			project,
			'{"tool":"read","args":{"path":"a.txt"}}\n{"tool":"write","args":{"path":"a.txt","content":"beta\\n"}}\n',
		);
		expect(
			batch.stdout
				.trim()
				.split("\n")
				.map((l) => JSON.parse(l).ok),
		).toEqual([true, true]);
		expect(await readFile(join(project, "a.txt"), "utf8")).toBe("beta\n");
		await writeFile(join(project, "a.txt"), "alpha\n");
		const tools = JSON.parse((await sh("npx", ["keel", "tools", "--json"])).stdout);
		expect(tools.map((t: { name: string }) => t.name)).toContain("edit");
	}, 120_000);

	it("a consumer's TypeScript compiles with --strict and no skipLibCheck, and runs", async () => {
		if (skip()) return;
		await writeFile(
			join(project, "consumer.ts"),
			[
				'import { createSession, type CallResult, type SshBackendOptions } from "keel";',
				'import keelExtension, { type PiExtensionHost } from "keel/pi";',
				// The adapters' types load without their frameworks (a type-only import runs nothing).
				'import type { KeelToolSet } from "keel/ai-sdk";',
				'import type { KeelFunctionTool, Editor } from "keel/openai-agents";',
				'import type { KeelLangChainTool, KeelSandbox } from "keel/langchain";',
				'import type { KeelMastraTools } from "keel/mastra";',
				'import type { KeelMcpSdkServerConfig } from "keel/claude-agent-sdk";',
				"type Adapters = [KeelToolSet, KeelFunctionTool, Editor, KeelLangChainTool, KeelSandbox, KeelMastraTools, KeelMcpSdkServerConfig];",
				"const adapters: Adapters | undefined = undefined;",
				'const ssh: SshBackendOptions = { host: "example.invalid" };',
				"const host: PiExtensionHost | undefined = undefined;",
				'const session = await createSession({ root: "." });',
				'const r: CallResult = await session.call("read", { path: "a.txt" });',
				"await session.close();",
				"console.log(JSON.stringify({ ok: r.ok, pi: typeof keelExtension, ssh: ssh.host, host, adapters }));",
				"",
			].join("\n"),
		);
		await writeFile(
			join(project, "tsconfig.json"),
			JSON.stringify({
				compilerOptions: {
					strict: true,
					skipLibCheck: false,
					module: "nodenext",
					moduleResolution: "nodenext",
					target: "es2022",
					types: ["node"],
					outDir: "out",
				},
				files: ["consumer.ts"],
			}),
		);
		const compiled = await sh(TSC, ["-p", "."]).catch((e: { stdout?: string }) => e);
		expect((compiled as { stdout?: string }).stdout ?? "").toBe("");
		const out = await sh(process.execPath, [join("out", "consumer.js")]);
		expect(JSON.parse(out.stdout)).toEqual({ ok: true, pi: "function", ssh: "example.invalid" });
	}, 120_000);

	it("a consumer's calls are typed by tool: wrong names, arguments and details fail to compile", async () => {
		if (skip()) return;
		const typed = join(project, "typed");
		await mkdir(typed, { recursive: true });
		await writeFile(join(typed, "a.txt"), "alpha\n");
		// Each @ts-expect-error line must be an error: one that compiles fails the build ("unused").
		await writeFile(
			join(typed, "typed.ts"),
			[
				'import { applyPatch, createSession, type Session, type ToolArgs, type ToolName } from "keel";',
				'const pi = await createSession({ root: ".", profile: "pi" });',
				'const edit = await pi.call("edit", { path: "a.txt", edits: [{ oldText: "alpha", newText: "beta" }] });',
				"const diff: string | undefined = edit.ok ? edit.details?.diff : undefined;",
				'const read = await pi.call("read", { path: "a.txt", offset: 1 });',
				"const cut: boolean | undefined = read.ok ? read.details?.truncation?.truncated : undefined;",
				'const bash = await pi.call("bash", { command: "true", timeout: 5 });',
				"const full: string | undefined = bash.ok ? bash.details?.fullOutputPath : undefined;",
				'const names: ToolName<"pi">[] = ["read", "write", "edit", "bash", "grep", "find", "ls"];',
				'const args: ToolArgs<"grep", "pi"> = { pattern: "x", ignoreCase: true };',
				"// A host routing a model's call: any name, any arguments, checked at run time.",
				'const routed = await pi.callDynamic("raed", { path: 1 });',
				"// @ts-expect-error: not a tool of the pi profile",
				'await pi.call("apply_patch", { input: "" });',
				"// @ts-expect-error: no such tool",
				'await pi.call("raed", { path: "a.txt" });',
				"// @ts-expect-error: edit needs edits",
				'await pi.call("edit", { path: "a.txt" });',
				"// @ts-expect-error: path is a string",
				'await pi.call("read", { path: 1 });',
				"// @ts-expect-error: read has no such argument",
				'await pi.call("read", { path: "a.txt", lines: 3 });',
				"// @ts-expect-error: pi's bash has no background",
				'await pi.call("bash", { command: "true", background: true });',
				"// @ts-expect-error: read's details have no diff",
				"if (read.ok) void read.details?.diff;",
				"// @ts-expect-error: edit's details have no exit code",
				"if (edit.ok) void edit.details?.exitCode;",
				"// @ts-expect-error: the session's internals are not part of its type",
				"void [pi.guard, pi.journal];",
				"// @ts-expect-error: nor is its spill directory",
				"void pi.spill;",
				"const patched = await applyPatch(pi, '*** Begin Patch\\n*** Update File: a.txt\\n-zzz\\n+y\\n*** End Patch');",
				'const patchCode = patched.ok ? "ok" : patched.error.code;',
				"await pi.close();",
				"",
				"// await using closes the session at the end of the block: its background process is killed.",
				"async function background(): Promise<number | undefined> {",
				'\tawait using unified: Session<"unified"> = await createSession({ root: ".", profile: "unified" });',
				'\tconst r = await unified.call("bash", { command: "sleep 300", background: true });',
				"\treturn r.ok ? r.details?.process?.pid : undefined;",
				"}",
				"const pid = await background();",
				"let alive = pid !== undefined;",
				"for (let i = 0; alive && i < 200; i++) {",
				"\ttry {",
				"\t\tprocess.kill(pid!, 0);",
				"\t\tawait new Promise((r) => setTimeout(r, 25));",
				"\t} catch {",
				"\t\talive = false;",
				"\t}",
				"}",
				"// Typed, not run: the details of python, process and checkpoints, narrowed by what they hold.",
				'async function details(s: Session<"unified">): Promise<unknown[]> {',
				'\tconst py = await s.call("python", { code: "1 + 1" });',
				'\tconst exitState: string | undefined = py.ok && py.details && "exitState" in py.details ? py.details.exitState : undefined;',
				"\tconst jobId: string | undefined = py.ok ? py.details?.jobId : undefined;",
				"\t// @ts-expect-error: python's details have no diff",
				"\tif (py.ok) void py.details?.diff;",
				'\tconst ps = await s.call("process", { action: "list" });',
				'\tconst pids: (number | undefined)[] = ps.ok && ps.details && "processes" in ps.details ? ps.details.processes.map((p) => p.pid) : [];',
				"\t// @ts-expect-error: a list has no cursor: narrow to a read first",
				"\tif (ps.ok) void ps.details?.cursor;",
				'\tconst cps = await s.call("checkpoints", { action: "list" });',
				'\tconst kept: number | undefined = cps.ok && cps.details && "checkpoints" in cps.details ? cps.details.checkpoints.length : undefined;',
				"\treturn [exitState, jobId, pids, kept];",
				"}",
				"void details;",
				'console.log(JSON.stringify({ diff: diff?.includes("beta"), cut, full, names: names.length, args: args.pattern, routed: routed.ok ? "ok" : routed.error.code, patchCode, pid: typeof pid, alive }));',
				"",
			].join("\n"),
		);
		await writeFile(
			join(typed, "tsconfig.json"),
			JSON.stringify({
				compilerOptions: {
					strict: true,
					skipLibCheck: false,
					module: "nodenext",
					moduleResolution: "nodenext",
					target: "es2022",
					types: ["node"],
					outDir: "out",
				},
				files: ["typed.ts"],
			}),
		);
		await writeFile(join(typed, "package.json"), JSON.stringify({ type: "module", private: true }));
		const compiled = await sh(TSC, ["-p", "."], typed).catch((e: { stdout?: string }) => e);
		expect((compiled as { stdout?: string }).stdout ?? "").toBe("");
		const out = await sh(process.execPath, [join("out", "typed.js")], typed);
		expect(JSON.parse(out.stdout)).toEqual({
			diff: true,
			cut: undefined,
			full: undefined,
			names: 7,
			args: "x",
			routed: "UNKNOWN_TOOL",
			patchCode: "NO_MATCH",
			pid: "number",
			alive: false,
		});
	}, 120_000);

	it('require("keel") works from CommonJS, or names import() when this Node cannot', async () => {
		if (skip()) return;
		const script =
			'try { console.log(typeof require("keel").createSession) } catch (e) { console.log(e.message) }';
		expect((await sh(process.execPath, ["-e", script])).stdout.trim()).toBe("function");
		const old = await sh(process.execPath, ["--no-experimental-require-module", "-e", script]);
		expect(old.stdout).toMatch(/keel is an ES module, which this Node .* cannot require\(\)\. Use `import/);
	});

	it("pi's entry loads keel's extension, and a copy without dist/ fails loudly", async () => {
		if (skip()) return;
		const installed = join(project, "node_modules", "keel");
		const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8"));
		const entry = join(installed, manifest.pi.extensions[0]);
		const registered: string[] = [];
		const fakePi = {
			registerFlag: () => {},
			getFlag: () => undefined,
			registerTool: (t: { name: string }) => registered.push(t.name),
			on: () => {},
			getActiveTools: () => [],
			setActiveTools: () => {},
			getAllTools: () => [],
		};
		await (await import(entry)).default(fakePi);
		expect(registered).toEqual(expect.arrayContaining(["read", "write", "edit", "bash"]));
		// A fresh clone: the same package without its build.
		const clone = join(dir, "clone");
		await cp(installed, clone, { recursive: true, filter: (p) => !p.includes(`${clone}/dist`) });
		await rm(join(clone, "dist"), { recursive: true, force: true });
		const unbuilt = (await import(join(clone, manifest.pi.extensions[0]))).default(fakePi);
		await expect(unbuilt).rejects.toThrow(
			/keel is not built: .*dist\/adapters\/pi\/extension\.js is missing.*npm install/,
		);
	});
});
