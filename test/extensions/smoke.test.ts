/**
 * An agent-written pi extension runs in a disposable child
 * process and only registration metadata comes back. Real child processes, real files; outcomes
 * are asserted, never durations.
 */
import { existsSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createSession, type SmokeOptions, type SmokeResult, smokeTestExtension } from "../../src/index.js";
import { useWorkspace } from "../fixtures/workspace.js";

// One workspace for the file: the drafts go in its root; one test opens a session there.
const ws = useWorkspace({ prefix: "keel-smoke-test-", shared: true, session: false });
/** A directory beside the root, for what the extensions must not reach. */
let outside: string;

/** A marker that appears only in the drafts' source: a result containing it would be leaking source. */
const SOURCE_MARK = "SOURCE_MARK_7f3a";

async function draft(name: string, code: string): Promise<string> {
	const path = join(ws().root, name);
	await mkdir(join(path, ".."), { recursive: true });
	await writeFile(path, `// ${SOURCE_MARK}\n${code}\n`);
	return path;
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (e) {
		return (e as NodeJS.ErrnoException).code === "EPERM";
	}
}

function groupAlive(pid: number): boolean {
	try {
		process.kill(-pid, 0);
		return true;
	} catch (e) {
		return (e as NodeJS.ErrnoException).code === "EPERM";
	}
}

interface Run {
	result: SmokeResult;
	spawned?: { pid: number; tempDir: string };
}

async function smoke(path: string, opts: SmokeOptions = {}): Promise<Run> {
	const run: Partial<Run> = {};
	run.result = await smokeTestExtension(path, {
		roots: [ws().root],
		...opts,
		onSpawn: (info) => {
			run.spawned = info;
			opts.onSpawn?.(info);
		},
	});
	return run as Run;
}

/** After any run: the child's group is gone and its temp dir removed. */
function expectCleanedUp(run: Run): void {
	expect(run.spawned).toBeDefined();
	const { pid, tempDir } = run.spawned!;
	expect(alive(pid)).toBe(false);
	expect(groupAlive(pid)).toBe(false);
	expect(existsSync(tempDir)).toBe(false);
	expect(run.result.cleanupError).toBeUndefined();
}

beforeAll(async () => {
	outside = ws().outside("outside");
	await mkdir(outside);
});

describe("smoke-testing an extension draft", () => {
	it("a good draft returns its registrations, bounded, and none of its source", async () => {
		const path = await draft(
			"good/ext.mjs",
			`import { helper } from "./helper.mjs";
export default function (pi) {
  pi.registerTool({
    name: "hello", label: "Hello", description: "Says hello. " + "x".repeat(5000),
    parameters: { type: "object", properties: { who: { type: "string", description: "name" } }, required: ["who"] },
    async execute() { throw new Error("a tool must never run in a smoke test"); },
    renderCall() {},
  });
  pi.registerTool({ name: "big", label: "Big", description: "huge schema",
    parameters: { type: "object", properties: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => ["p" + i, { type: "string" }])) },
    execute: async () => ({}) });
  pi.registerFlag("greeting", { description: "what to say", type: "string", default: "hi" });
  pi.registerCommand("greet", { description: "greet someone", handler: async () => { throw new Error("never"); } });
  pi.on("session_start", () => { throw new Error("handlers never run"); });
  pi.on("session_start", () => {});
  pi.on("turn_end", () => {});
  pi.on("no_such_event", () => {});
  pi.events.on("my-channel", () => {});
  pi.registerProvider("acme", { apiKey: "sk-provider-secret", models: [{ id: "m1" }, { id: "m2" }] });
  if (pi.getFlag("greeting") !== "hi") throw new Error("getFlag should return the default");
  console.log(helper());
}`,
		);
		await writeFile(join(ws().root, "good", "helper.mjs"), `export const helper = () => "helper says hi";\n`);
		const run = await smoke(path);
		const r = run.result;
		expect(r.kind).toBe("ok");
		if (!r.ok) throw new Error(JSON.stringify(r));
		const e = r.extension;
		expect(e.tools.map((t) => t.name)).toEqual(["hello", "big"]);
		const hello = e.tools[0];
		expect(hello.label).toBe("Hello");
		expect(hello.description!.length).toBeLessThanOrEqual(401);
		expect(hello.parameters).toEqual({
			type: "object",
			properties: { who: { type: "string", description: "name" } },
			required: ["who"],
		});
		expect(hello.functions.sort()).toEqual(["execute", "renderCall"]);
		expect(e.tools[1].parameters).toBeUndefined();
		expect(e.tools[1].parametersOmitted).toMatch(/larger than/);
		expect(e.flags).toEqual([
			{ name: "greeting", type: "string", description: "what to say", default: "hi" },
		]);
		expect(e.commands).toEqual([{ name: "greet", description: "greet someone" }]);
		expect(e.events).toEqual([
			{ name: "session_start", handlers: 2 },
			{ name: "turn_end", handlers: 1 },
			{ name: "no_such_event", handlers: 1 },
		]);
		expect(e.eventBus).toEqual(["my-channel"]);
		expect(e.providers).toEqual([{ name: "acme", models: 2 }]);
		expect(e.warnings.some((w) => w.includes("no_such_event"))).toBe(true);
		expect(r.summary).toMatch(/2 tools \(hello, big\)/);
		expect(r.stdout?.head).toBe("helper says hi\n");
		const json = JSON.stringify(r);
		expect(json).not.toContain(SOURCE_MARK);
		expect(json).not.toContain("sk-provider-secret");
		expect(json.length).toBeLessThan(32_000);
		expectCleanedUp(run);
	});

	it("an infinite loop ends as timeout, and the process group and temp dir are gone", async () => {
		const path = await draft("loop.mjs", "export default function () { for (;;) {} }");
		const run = await smoke(path, { timeoutMs: 1500 });
		expect(run.result.kind).toBe("timeout");
		expect(run.result.ok).toBe(false);
		if (!run.result.ok) expect(run.result.error.code).toBe("TIMEOUT");
		expectCleanedUp(run);
	});

	it("the parent stays responsive while a draft spins", async () => {
		const path = await draft("spin.mjs", "export default function () { for (;;) {} }");
		let ticks = 0;
		const timer = setInterval(() => ticks++, 20);
		try {
			const run = await smoke(path, { timeoutMs: 1500 });
			expect(run.result.kind).toBe("timeout");
		} finally {
			clearInterval(timer);
		}
		// A blocked parent would not tick at all while the child spins.
		expect(ticks).toBeGreaterThan(5);
	});

	it("a heap allocation bomb ends as memory", async () => {
		const path = await draft(
			"heap-bomb.mjs",
			"export default function () { const a = []; for (;;) a.push(new Array(1e5).fill({ x: 1 })); }",
		);
		const run = await smoke(path, { heapMb: 64, timeoutMs: 30_000 });
		expect(run.result.kind).toBe("memory");
		expectCleanedUp(run);
	});

	it("an off-heap (Buffer) allocation bomb ends as memory", async () => {
		const path = await draft(
			"buffer-bomb.mjs",
			"export default function () { const a = []; for (;;) a.push(Buffer.alloc(32 * 1024 * 1024, 1)); }",
		);
		const run = await smoke(path, { dataMb: 384, timeoutMs: 30_000 });
		expect(run.result.kind).toBe("memory");
		expectCleanedUp(run);
	});

	it("a secret planted in the parent's environment is invisible to the draft", async () => {
		const secret = `keel-secret-${process.pid}-${Date.now()}`;
		process.env.KEEL_SMOKE_PLANTED_SECRET = secret;
		try {
			const path = await draft(
				"env.mjs",
				`import { readFileSync } from "node:fs";
export default function (pi) {
  let parent = "unreadable";
  try { parent = readFileSync("/proc/" + process.ppid + "/environ", "latin1"); } catch (e) { parent = "denied " + e.code; }
  let own = "unreadable";
  try { own = readFileSync("/proc/self/environ", "latin1"); } catch (e) { own = "denied " + e.code; }
  pi.registerTool({ name: "probe", label: String(process.env.KEEL_SMOKE_PLANTED_SECRET),
    description: JSON.stringify({ keys: Object.keys(process.env).sort(), parent: parent.slice(0, 150), own: own.slice(0, 150) }),
    parameters: { type: "object" }, execute: async () => ({}) });
}`,
			);
			const run = await smoke(path);
			const r = run.result;
			if (!r.ok) throw new Error(JSON.stringify(r));
			const tool = r.extension.tools[0];
			expect(tool.label).toBe("undefined");
			const seen = JSON.parse(tool.description!);
			expect(seen.keys).toEqual(["HOME", "PATH", "TMPDIR"]);
			expect(JSON.stringify(r)).not.toContain(secret);
			expectCleanedUp(run);
		} finally {
			delete process.env.KEEL_SMOKE_PLANTED_SECRET;
		}
	});

	it("process.exit(3) ends as exited with code 3", async () => {
		const path = await draft(
			"exit.mjs",
			"export default function (pi) { pi.registerFlag('x', { type: 'string' }); process.exit(3); }",
		);
		const run = await smoke(path);
		expect(run.result.kind).toBe("exited");
		expect(run.result.exit).toEqual({ code: 3, signal: null });
		expectCleanedUp(run);

		// A factory whose promise never settles, with nothing else keeping the process alive.
		const stuck = await smoke(await draft("stuck.mjs", "export default () => new Promise(() => {});"));
		expect(stuck.result.kind).toBe("exited");
		if (!stuck.result.ok) expect(stuck.result.error.message).toMatch(/never settled/);
	});

	it("a draft that throws ends as error with a bounded message and no source", async () => {
		const path = await draft(
			"throws.mjs",
			`export default function (pi) { pi.registerTool({ name: "t" }); throw new Error("boom " + "y".repeat(20000)); }`,
		);
		const run = await smoke(path);
		const r = run.result;
		expect(r.kind).toBe("error");
		if (r.ok) throw new Error("expected an error");
		expect(r.phase).toBe("factory");
		expect(r.thrown?.message.startsWith("boom ")).toBe(true);
		expect(r.thrown!.message.length).toBeLessThanOrEqual(1001);
		expect(r.error.message.length).toBeLessThan(1200);
		expect(r.thrown?.stack).toMatch(/^\s+at /);
		expect(JSON.stringify(r)).not.toContain(SOURCE_MARK);
		expectCleanedUp(run);
	});

	it("a syntax error, a missing default export and a load-time action are errors", async () => {
		// The mark sits on the failing line: Node quotes that line in front of some stacks.
		const syntax = await smoke(
			await draft("syntax.mjs", `export default function (pi) { const x = ; } // ${SOURCE_MARK}`),
		);
		expect(syntax.result.kind).toBe("error");
		if (!syntax.result.ok) {
			expect(syntax.result.phase).toBe("import");
			expect(syntax.result.error.message).toMatch(/SyntaxError.*node --check/);
		}
		expect(JSON.stringify(syntax.result)).not.toContain(SOURCE_MARK);

		const cjsSyntax = await smoke(
			await draft("syntax.cjs", `module.exports = function (pi) { const x = ; }; // ${SOURCE_MARK}`),
		);
		expect(cjsSyntax.result.kind).toBe("error");
		if (!cjsSyntax.result.ok)
			expect(cjsSyntax.result.thrown?.location).toBe(`${join(ws().root, "syntax.cjs")}:2`);
		expect(JSON.stringify(cjsSyntax.result)).not.toContain(SOURCE_MARK);

		const noDefault = await smoke(await draft("named.mjs", "export function activate(pi) {}"));
		expect(noDefault.result.kind).toBe("error");
		if (!noDefault.result.ok) expect(noDefault.result.phase).toBe("export");

		const action = await smoke(
			await draft("action.mjs", "export default function (pi) { pi.getActiveTools(); }"),
		);
		expect(action.result.kind).toBe("error");
		if (!action.result.ok) expect(action.result.thrown?.message).toMatch(/not initialized/);

		const stray = await smoke(
			await draft(
				"stray.mjs",
				"export default async function (pi) { setTimeout(() => { throw new Error('later'); }, 1); await new Promise((r) => setTimeout(r, 200)); }",
			),
		);
		expect(stray.result.kind).toBe("error");
		if (!stray.result.ok) expect(stray.result.phase).toBe("async");
		expect(JSON.stringify(stray.result)).not.toContain(SOURCE_MARK);
	});

	it("malformed package.json is INVALID_ARGS before any child starts", async () => {
		const path = await draft("badpkg/ext.mjs", "export default function () {}");
		await writeFile(join(ws().root, "badpkg", "package.json"), '{"name": "x", "type": ');
		const run = await smoke(path);
		expect(run.result.kind).toBe("refused");
		if (!run.result.ok) {
			expect(run.result.error.code).toBe("INVALID_ARGS");
			expect(run.result.error.message).toMatch(/package\.json.*not valid JSON/);
		}
		expect(run.spawned).toBeUndefined();

		await writeFile(join(ws().root, "badpkg", "package.json"), '{"name": "x", "type": "esm"}');
		const wrongType = await smoke(path);
		if (!wrongType.result.ok)
			expect(wrongType.result.error.message).toMatch(/"type" must be "module" or "commonjs"/);
		expect(wrongType.spawned).toBeUndefined();

		await writeFile(
			join(ws().root, "badpkg", "package.json"),
			JSON.stringify({ name: "x", description: "z".repeat(70_000) }),
		);
		const huge = await smoke(path);
		expect(huge.result.kind).toBe("refused");
		if (!huge.result.ok) expect(huge.result.error.message).toMatch(/larger than/);

		await writeFile(
			join(ws().root, "badpkg", "package.json"),
			JSON.stringify({ name: "good-ext", type: "module" }),
		);
		const good = await smoke(path);
		expect(good.result.kind).toBe("ok");
		expect(good.result.package).toEqual({ name: "good-ext", type: "module" });
	});

	it("a path outside the roots is PATH_OUTSIDE_ROOTS before any child starts", async () => {
		await writeFile(join(outside, "evil.mjs"), "export default function () {}\n");
		await symlink(join(outside, "evil.mjs"), join(ws().root, "link.mjs"));
		for (const p of ["../outside/evil.mjs", join(outside, "evil.mjs"), "link.mjs"]) {
			const run = await smoke(p);
			expect(run.result.kind).toBe("refused");
			if (!run.result.ok) expect(run.result.error.code).toBe("PATH_OUTSIDE_ROOTS");
			expect(run.spawned).toBeUndefined();
		}
	});

	it("TypeScript, non-files and oversized drafts are refused before any child starts", async () => {
		const ts = await smoke(await draft("ext.ts", "export default function (pi: unknown) {}"));
		expect(ts.result.kind).toBe("refused");
		if (!ts.result.ok) {
			expect(ts.result.error.code).toBe("INVALID_ARGS");
			expect(ts.result.error.message).toMatch(/compile it first/);
		}
		const dir = await smoke("good");
		if (!dir.result.ok) expect(dir.result.error.code).toBe("INVALID_ARGS");
		const big = await smoke(
			await draft("big.mjs", `export default () => {}; // ${"z".repeat(2 * 1024 * 1024)}`),
		);
		if (!big.result.ok) expect(big.result.error.message).toMatch(/at most 1048576 bytes/);
		const missing = await smoke("nope.mjs");
		if (!missing.result.ok) expect(missing.result.error.code).toBe("NOT_FOUND");
		expect([ts, dir, big, missing].every((r) => r.spawned === undefined && r.result.kind === "refused")).toBe(
			true,
		);
	});

	it("a draft printing 50 MB to stdout stays bounded", async () => {
		const path = await draft(
			"flood.mjs",
			`export default function (pi) {
  const chunk = "x".repeat(1 << 20);
  for (let i = 0; i < 50; i++) process.stdout.write(chunk);
  process.stderr.write("e".repeat(1 << 20));
  pi.registerCommand("after-flood", { handler: async () => {} });
}`,
		);
		const run = await smoke(path, { timeoutMs: 30_000 });
		const r = run.result;
		expect(r.kind).toBe("ok");
		expect(r.stdout!.truncated).toBe(true);
		expect(r.stdout!.bytes).toBeGreaterThan(2048);
		expect(Buffer.byteLength(r.stdout!.head)).toBeLessThanOrEqual(2048);
		expect(Buffer.byteLength(r.stderr!.head)).toBeLessThanOrEqual(2048);
		expect(JSON.stringify(r).length).toBeLessThan(16_000);
		expectCleanedUp(run);
	});

	it("an abort mid-run kills the child", async () => {
		const path = await draft("abort.mjs", "export default function () { for (;;) {} }");
		const controller = new AbortController();
		const run = await smoke(path, {
			timeoutMs: 60_000,
			signal: controller.signal,
			onSpawn: () => setTimeout(() => controller.abort(), 200),
		});
		expect(run.result.kind).toBe("aborted");
		if (!run.result.ok) expect(run.result.error.code).toBe("ABORTED");
		expectCleanedUp(run);

		// Aborted before it starts: no child at all.
		const early = await smoke(path, { signal: AbortSignal.abort() });
		expect(early.result.kind).toBe("aborted");
		expect(early.spawned).toBeUndefined();
	});

	it("the draft can read only inside its root and start no processes", async () => {
		await writeFile(join(outside, "private.txt"), "outside-the-root");
		const path = await draft(
			"caps/ext.mjs",
			`import { readFileSync, writeFileSync } from "node:fs";
import { execSync } from "node:child_process";
const attempt = (f) => { try { return "allowed: " + String(f()).slice(0, 40); } catch (e) { return "denied " + e.code; } };
export default function (pi) {
  const seen = {
    outside: attempt(() => readFileSync(${JSON.stringify(join(outside, "private.txt"))}, "utf8")),
    passwd: attempt(() => readFileSync("/etc/passwd", "utf8")),
    inRoot: attempt(() => readFileSync(new URL("./data.txt", import.meta.url), "utf8")),
    writeRoot: attempt(() => writeFileSync(new URL("./written.txt", import.meta.url), "x")),
    writeTemp: attempt(() => writeFileSync(process.env.TMPDIR + "/t.txt", "x")),
    spawn: attempt(() => execSync("echo spawned")),
  };
  pi.registerTool({ name: "caps", label: "caps", description: JSON.stringify(seen), parameters: { type: "object" }, execute: async () => ({}) });
}`,
		);
		await writeFile(join(ws().root, "caps", "data.txt"), "inside");
		const run = await smoke(path);
		const r = run.result;
		if (!r.ok) throw new Error(JSON.stringify(r));
		const seen = JSON.parse(r.extension.tools[0].description!);
		expect(seen).toEqual({
			outside: "denied ERR_ACCESS_DENIED",
			passwd: "denied ERR_ACCESS_DENIED",
			inRoot: "allowed: inside",
			writeRoot: "denied ERR_ACCESS_DENIED",
			writeTemp: "allowed: undefined",
			spawn: "denied ERR_ACCESS_DENIED",
		});
		expect(existsSync(join(ws().root, "caps", "written.txt"))).toBe(false);
		expectCleanedUp(run);
	});

	it("a report forged by the draft on the report channel is not accepted", async () => {
		const path = await draft(
			"forge.mjs",
			`import { writeSync } from "node:fs";
export default function () {
  writeSync(3, JSON.stringify({ nonce: "0".repeat(32), kind: "ok", extension: { tools: [{ name: "forged", functions: [] }] } }) + "\\n");
}`,
		);
		const run = await smoke(path);
		expect(run.result.kind).toBe("error");
		if (!run.result.ok) expect(run.result.error.code).toBe("INTERNAL");
		expect(JSON.stringify(run.result)).not.toContain("forged");
		expectCleanedUp(run);
	});

	it("a draft that makes its temp dir hard to remove leaves nothing behind", async () => {
		const path = await draft(
			"sticky.mjs",
			`import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
export default function () {
  const d = process.env.TMPDIR + "/locked/deeper";
  mkdirSync(d, { recursive: true });
  writeFileSync(d + "/f", "x");
  chmodSync(d, 0o000);
  chmodSync(process.env.TMPDIR + "/locked", 0o000);
}`,
		);
		const run = await smoke(path);
		expect(run.result.kind).toBe("ok");
		expectCleanedUp(run);
	});

	it("resolves through a session's path guard", async () => {
		// The library's own session object, as an application passes it.
		const session = await createSession({ root: ws().root, stateDir: ws().stateDir });
		try {
			const inside = await smokeTestExtension("good/ext.mjs", { session });
			expect(inside.kind).toBe("ok");
			const out = await smokeTestExtension(join(outside, "evil.mjs"), { session });
			expect(out.kind).toBe("refused");
			if (!out.ok) expect(out.error.code).toBe("PATH_OUTSIDE_ROOTS");
		} finally {
			await session.close();
		}
	});
});
