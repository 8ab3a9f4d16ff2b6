import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runKeel } from "../fixtures/keel-cli.js";

let ws: string;

const keel = (args: string[]) => runKeel(ws, args);

function oneJson(stdout: string): Record<string, any> {
	const lines = stdout.split("\n").filter(Boolean);
	expect(lines).toHaveLength(1);
	return JSON.parse(lines[0]);
}

beforeAll(async () => {
	ws = await realpath(await mkdtemp(join(tmpdir(), "keel-smoke-cli-")));
	await writeFile(
		join(ws, "good.mjs"),
		`export default function (pi) {
  pi.registerTool({ name: "hello", label: "Hello", description: "hi", parameters: { type: "object" }, execute: async () => ({}) });
  pi.registerFlag("loud", { type: "boolean", default: false });
}
`,
	);
	await writeFile(join(ws, "throws.mjs"), "export default function () { throw new Error('nope'); }\n");
	await writeFile(join(ws, "loop.mjs"), "export default function () { for (;;) {} }\n");
});

afterAll(async () => {
	await rm(ws, { recursive: true, force: true });
});

describe("keel smoke-extension", () => {
	it("prints the registrations and exits 0", async () => {
		const r = await keel(["smoke-extension", "good.mjs", "--root", ws]);
		expect(r.code).toBe(0);
		const out = oneJson(r.stdout);
		expect(out.ok).toBe(true);
		expect(out.content).toMatch(/1 tool \(hello\)/);
		expect(out.details.kind).toBe("ok");
		expect(out.details.extension.tools[0].name).toBe("hello");
		expect(out.details.extension.flags).toEqual([{ name: "loud", type: "boolean", default: false }]);
		expect(typeof out.elapsedMs).toBe("number");
	});

	it("a draft that throws is a tool error (exit 1) with its kind", async () => {
		const r = await keel(["smoke-extension", "throws.mjs"]);
		expect(r.code).toBe(1);
		const out = oneJson(r.stdout);
		expect(out.ok).toBe(false);
		expect(out.error.code).toBe("COMMAND_FAILED");
		expect(out.error.details.kind).toBe("error");
		expect(out.error.message).toMatch(/nope/);
	});

	it("--timeout ends a spinning draft (exit 1, TIMEOUT)", async () => {
		const r = await keel(["smoke-extension", "loop.mjs", "--timeout", "0.5"]);
		expect(r.code).toBe(1);
		const out = oneJson(r.stdout);
		expect(out.error.code).toBe("TIMEOUT");
		expect(out.error.details.kind).toBe("timeout");
	});

	it("a path outside the root is refused (exit 1, PATH_OUTSIDE_ROOTS)", async () => {
		const r = await keel(["smoke-extension", "../elsewhere.mjs"]);
		expect(r.code).toBe(1);
		const out = oneJson(r.stdout);
		expect(out.error.code).toBe("PATH_OUTSIDE_ROOTS");
		expect(out.error.details.kind).toBe("refused");
	});

	it("usage errors exit 2: no path, a bad --timeout, --timeout on another command", async () => {
		for (const args of [
			["smoke-extension"],
			["smoke-extension", "good.mjs", "--timeout", "soon"],
			["smoke-extension", "good.mjs", "extra"],
			["call", "read", '{"path":"good.mjs"}', "--timeout", "3"],
		]) {
			const r = await keel(args);
			expect(r.code, args.join(" ")).toBe(2);
			expect(oneJson(r.stdout).error.code).toBe("INVALID_ARGS");
		}
	});
});
