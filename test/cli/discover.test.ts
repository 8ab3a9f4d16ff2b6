/**
 * The CLI as a new user finds it: --version, help per command, `keel tools`, arguments from stdin,
 * usage errors as one line that says where to look (exit 2 for every command), and a `call` that
 * can never succeed on its own saying so and pointing at `batch`.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ENV_NAMES } from "../../src/adapters/settings-env.js";
import { toolsForProfile } from "../../src/tools/registry.js";
import { REPO, type Run, runKeel } from "../fixtures/keel-cli.js";

let base: string;

const cleanEnv = (): NodeJS.ProcessEnv => {
	const env = { ...process.env };
	for (const name of ENV_NAMES) delete env[name];
	return env;
};

const keel = (args: string[], input?: string): Promise<Run> =>
	runKeel(base, args, { env: cleanEnv(), input });

beforeAll(() => {
	if (!existsSync(join(REPO, "dist", "adapters", "cli.js")))
		throw new Error("The CLI needs the build: run `npx tsc -p tsconfig.build.json` first.");
});

beforeEach(async () => {
	base = await mkdtemp(join(tmpdir(), "keel-cli-discover-"));
	await writeFile(join(base, "a.txt"), "alpha\n");
});

afterEach(async () => {
	await rm(base, { recursive: true, force: true });
});

describe("version and help", () => {
	it("--version prints package.json's version", async () => {
		const { version } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
		for (const flag of ["--version", "-v"]) {
			const r = await keel([flag]);
			expect(r).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: "" });
		}
	});

	it("help lists every command; help COMMAND and COMMAND --help give that command's options", async () => {
		const overview = await keel(["help"]);
		expect(overview.code).toBe(0);
		for (const c of ["call", "batch", "tools", "serve", "agent", "smoke-extension", "help"])
			expect(overview.stdout).toMatch(new RegExp(`^  ${c}\\b`, "m"));
		const call = await keel(["help", "call"]);
		expect(call.code).toBe(0);
		expect(call.stdout).toContain("keel call TOOL -");
		expect(call.stdout).toContain("KEEL_BACKEND");
		expect((await keel(["call", "--help"])).stdout).toBe(call.stdout);
		const serve = await keel(["help", "serve"]);
		expect(serve.stdout).toContain("--token-file");
		expect(call.stdout).not.toContain("--token-file");
	});
});

describe("keel tools", () => {
	it("prints each tool of the profile with its arguments", async () => {
		const r = await keel(["tools"]);
		expect(r.code).toBe(0);
		for (const t of toolsForProfile("pi")) expect(r.stdout).toMatch(new RegExp(`^${t.name}$`, "m"));
		expect(r.stdout).toMatch(/^ {4}path: string {2}Path to the file to read/m);
		expect(r.stdout).toMatch(/^ {4}offset\?: number/m);
		expect(r.stdout).not.toMatch(/^file$/m);
	});

	it("--json gives names, descriptions and the argument schemas; --disable takes one out", async () => {
		const r = await keel(["tools", "--profile", "unified", "--disable", "python_jobs", "--json"]);
		expect(r.code).toBe(0);
		const listed = JSON.parse(r.stdout);
		const expected = toolsForProfile("unified")
			.filter((t) => t.name !== "python_jobs")
			.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters }));
		expect(listed).toEqual(JSON.parse(JSON.stringify(expected)));
	});

	it("an unknown profile is a usage error", async () => {
		const r = await keel(["tools", "--profile", "Unified"]);
		expect(r.code).toBe(2);
		expect(r.stderr).toMatch(/unknown --profile "Unified"/);
	});
});

describe("keel call TOOL -", () => {
	it("reads the arguments from stdin", async () => {
		const r = await keel(["call", "read", "-"], '{"path":"a.txt"}\n');
		expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, content: "alpha" });
	});

	it("stdin that is not JSON is a usage error naming stdin", async () => {
		const r = await keel(["call", "read", "-"], "{path:");
		expect(r.code).toBe(2);
		expect(r.stderr).toMatch(/^keel: stdin is not valid JSON/);
	});
});

describe("usage errors: one line naming where to look, exit 2 everywhere", () => {
	const cases: [string[], RegExp, string][] = [
		[[], /missing command/, "keel help"],
		[["frobnicate"], /unknown command "frobnicate"/, "keel help"],
		[["call"], /call needs a tool name/, "keel help call"],
		[["call", "read", "{nope"], /JSON_ARGS is not valid JSON/, "keel help call"],
		[
			["call", "Read", "{}"],
			/unknown tool "Read" in the pi profile; its tools: read, write/,
			"keel help tools",
		],
		[["call", "read", "{}", "--frob"], /Unknown option '--frob'/, "keel help call"],
		[["batch", "extra"], /unexpected argument "extra"/, "keel help batch"],
		[["tools", "extra"], /unexpected argument "extra"/, "keel help tools"],
		[["serve", "--http", "99999"], /--http needs a port number/, "keel help serve"],
		[["serve", "--profile", "bogus"], /unknown --profile "bogus"/, "keel help serve"],
		[["smoke-extension"], /smoke-extension needs the draft's path/, "keel help smoke-extension"],
		[["call", "ls", "{}", "--json"], /--json applies to tools only/, "keel help call"],
		[["help", "nope"], /no help for "nope"/, "keel help"],
	];
	it.each(cases)("keel %j", async (argv, message, where) => {
		const r = await keel(argv);
		expect(r.code).toBe(2);
		const lines = r.stderr.split("\n").filter(Boolean);
		expect(lines).toHaveLength(1);
		expect(lines[0]).toMatch(message);
		expect(lines[0]).toMatch(new RegExp(`Run "${where}" for usage\\.$`));
	});
});

describe("keel call cannot change a file it would have to read first", () => {
	it("write over an existing file says each call is a new session and points to batch; nothing changes", async () => {
		const r = await keel(["call", "write", '{"path":"a.txt","content":"replaced\\n"}']);
		expect(r.code).toBe(1);
		const out = JSON.parse(r.stdout);
		expect(out.error.code).toBe("NOT_READ");
		expect(out.error.retry).toBe("change-approach");
		expect(out.error.message).toMatch(/new session that has read nothing/);
		expect(out.error.message).toMatch(/keel batch/);
		expect(await readFile(join(base, "a.txt"), "utf8")).toBe("alpha\n");
	});

	it("the batch it points to does the job", async () => {
		const lines = [
			'{"tool":"read","args":{"path":"a.txt"}}',
			'{"tool":"write","args":{"path":"a.txt","content":"replaced\\n"}}',
		].join("\n");
		const r = await keel(["batch"], lines);
		expect(r.code).toBe(0);
		expect(await readFile(join(base, "a.txt"), "utf8")).toBe("replaced\n");
	});
});
