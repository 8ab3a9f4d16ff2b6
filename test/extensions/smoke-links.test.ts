/**
 * A draft cannot read outside its root through a link: with bwrap the link
 * points at nothing inside the sandbox; without it (forced by `sandbox: "none"`) the run is
 * refused before any child starts. Real links, real child processes, real bwrap.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { smokeTestExtension } from "../../src/index.js";
import { bwrapAvailable } from "../contract/backends.js";

const available = await bwrapAvailable();
const SECRET = "OUTSIDE_SECRET_91c2";
let base: string;
let ws: string;
let outside: string;

beforeEach(async () => {
	base = await realpath(await mkdtemp(join(tmpdir(), "keel-smoke-links-")));
	ws = join(base, "ws");
	outside = join(base, "outside");
	await mkdir(join(ws, "ext"), { recursive: true });
	await mkdir(outside);
	await writeFile(join(outside, "secret.txt"), SECRET);
	await writeFile(join(ws, "ext", "inside.txt"), "inside-data");
});
afterEach(async () => {
	await rm(base, { recursive: true, force: true });
});

/** A draft that reads through `names` (relative to itself) and reports what it saw in a tool description. */
async function reader(names: string[]): Promise<string> {
	const path = join(ws, "ext", "ext.mjs");
	await writeFile(
		path,
		`import { readFileSync } from "node:fs";
const attempt = (f) => { try { return "read: " + String(f()); } catch (e) { return "denied " + e.code; } };
export default function (pi) {
  const seen = {};
  for (const n of ${JSON.stringify(names)}) seen[n] = attempt(() => readFileSync(new URL("./" + n, import.meta.url), "utf8"));
  pi.registerTool({ name: "r", label: "r", description: JSON.stringify(seen), parameters: { type: "object" }, execute: async () => ({}) });
}
`,
	);
	return path;
}

async function plantLinks(): Promise<void> {
	await symlink(join(outside, "secret.txt"), join(ws, "ext", "leak.txt"));
	await symlink(outside, join(ws, "ext", "leakdir"));
}

describe("without bwrap (sandbox: none): links leaving the root refuse the run", () => {
	it("a file link and a directory link to an outside secret: refused, no child, no bytes", async () => {
		await plantLinks();
		const path = await reader(["leak.txt", "leakdir/secret.txt"]);
		let spawned = false;
		const r = await smokeTestExtension(path, {
			roots: [ws],
			sandbox: "none",
			onSpawn: () => (spawned = true),
		});
		expect(r.kind).toBe("refused");
		if (!r.ok) expect(r.error.code).toBe("PATH_OUTSIDE_ROOTS");
		expect(spawned).toBe(false);
		expect(JSON.stringify(r)).not.toContain(SECRET);
	});

	it("a dangling link or one deep in node_modules is refused too; links inside the root are fine", async () => {
		await mkdir(join(ws, "node_modules", "pkg"), { recursive: true });
		await symlink(join(outside, "secret.txt"), join(ws, "node_modules", "pkg", "index.js"));
		const path = await reader(["inside.txt"]);
		expect((await smokeTestExtension(path, { roots: [ws], sandbox: "none" })).kind).toBe("refused");
		await rm(join(ws, "node_modules"), { recursive: true });
		await symlink(join(base, "nowhere"), join(ws, "dangling"));
		expect((await smokeTestExtension(path, { roots: [ws], sandbox: "none" })).kind).toBe("refused");
		await rm(join(ws, "dangling"));
		await symlink(join(ws, "ext", "inside.txt"), join(ws, "ext", "alias.txt"));
		const ok = await smokeTestExtension(await reader(["alias.txt"]), { roots: [ws], sandbox: "none" });
		if (!ok.ok) throw new Error(JSON.stringify(ok));
		expect(JSON.parse(ok.extension.tools[0].description!)).toEqual({ "alias.txt": "read: inside-data" });
	});
});

describe.skipIf(available !== true)(
	`with bwrap${available === true ? "" : ` (skipped: ${available})`}`,
	() => {
		it("the same links point at nothing: the draft runs, the secret is not read", async () => {
			await plantLinks();
			const path = await reader(["leak.txt", "leakdir/secret.txt", "inside.txt"]);
			for (const sandbox of ["auto", "bwrap"] as const) {
				const r = await smokeTestExtension(path, { roots: [ws], sandbox });
				if (!r.ok) throw new Error(JSON.stringify(r));
				expect(JSON.stringify(r)).not.toContain(SECRET);
				const seen = JSON.parse(r.extension.tools[0].description!);
				expect(seen["inside.txt"]).toBe("read: inside-data");
				expect(seen["leak.txt"]).toMatch(/^denied /);
				expect(seen["leakdir/secret.txt"]).toMatch(/^denied /);
			}
		});
	},
);
