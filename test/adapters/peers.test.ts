/**
 * The frameworks are optional peers: `npm install keel` pulls none of them, and an adapter whose
 * framework is absent fails its import with a message naming the package to install.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
/** The tests' own packages (the frameworks suite's), outside a clone's `npm install`. */
const testPkg = JSON.parse(readFileSync(join(REPO, "test", "package.json"), "utf8"));

/** Subpath → the framework package it needs at run time (claude-agent-sdk needs none: types only). */
const ADAPTERS: Record<string, string | undefined> = {
	"ai-sdk": "ai",
	"openai-agents": "@openai/agents",
	langchain: "@langchain/core",
	mastra: "@mastra/core",
	"claude-agent-sdk": undefined,
};
const FRAMEWORKS = [
	"ai",
	"@openai/agents",
	"@langchain/core",
	"deepagents",
	"@mastra/core",
	"@anthropic-ai/claude-agent-sdk",
];

describe("frameworks as optional peer dependencies", () => {
	it("every framework is an optional peer, pinned exactly for the tests only, and no dependency", () => {
		for (const name of FRAMEWORKS) {
			expect(pkg.peerDependencies[name], name).toBeDefined();
			expect(pkg.peerDependenciesMeta[name], name).toEqual({ optional: true });
			expect(testPkg.dependencies[name], name).toMatch(/^\d+\.\d+\.\d+$/);
			expect(pkg.devDependencies[name], name).toBeUndefined();
			expect(pkg.dependencies[name], name).toBeUndefined();
		}
		for (const sub of Object.keys(ADAPTERS)) expect(pkg.exports[`./${sub}`], sub).toBeDefined();
	});

	it("the production dependency tree holds no framework", () => {
		const tree = execFileSync("npm", ["ls", "--omit=dev", "--all", "--parseable"], {
			cwd: REPO,
			encoding: "utf8",
		});
		const names = new Set(tree.split("\n").map((p) => p.split("/node_modules/").at(-1)));
		for (const name of [...FRAMEWORKS, "langchain", "@openai/agents-core"])
			expect(names.has(name), name).toBe(false);
	});
});

// An install of keel without the frameworks: dist and package.json copied, keel's own
// dependencies linked from this checkout, nothing else.
const BUILT = existsSync(join(REPO, "dist", "adapters", "binding.js"));
if (!BUILT) console.warn("skipping the missing-framework import tests: run npm run build first");

describe.skipIf(!BUILT)("an adapter without its framework", () => {
	let app: string;
	beforeAll(() => {
		app = mkdtempSync(join(tmpdir(), "keel-peers-"));
		const keel = join(app, "node_modules", "keel");
		mkdirSync(keel, { recursive: true });
		cpSync(join(REPO, "dist"), join(keel, "dist"), { recursive: true });
		cpSync(join(REPO, "package.json"), join(keel, "package.json"));
		for (const dep of Object.keys(pkg.dependencies)) {
			const to = join(app, "node_modules", dep);
			mkdirSync(join(to, ".."), { recursive: true });
			symlinkSync(join(REPO, "node_modules", dep), to);
		}
	});
	afterAll(() => rmSync(app, { recursive: true, force: true }));

	for (const [sub, needs] of Object.entries(ADAPTERS)) {
		it(`keel/${sub} ${needs ? `names ${needs}` : "loads"}`, () => {
			const r = spawnSync(process.execPath, ["--input-type=module", "-e", `await import("keel/${sub}")`], {
				cwd: app,
				encoding: "utf8",
			});
			if (!needs) {
				expect(r.stderr).toBe("");
				expect(r.status).toBe(0);
				return;
			}
			expect(r.status).not.toBe(0);
			expect(r.stderr).toContain(`keel/${sub} needs the optional peer dependency "${needs}"`);
			expect(r.stderr).toContain(`npm install ${needs}`);
		});
	}
});
