/**
 * What `import("keel")` and a local session load before they are used, in a fresh Node process
 * running the build (dist/): the code of the other backends, the search engines, jsdiff, the
 * encodings and tree-sitter load when a session first needs them, and each does load then (so the
 * check below can see a load). Modules are seen through a loader hook (ES modules) and Node's
 * require cache (CommonJS packages).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../fixtures/keel-cli.js";

const run = promisify(execFile);

/** Modules not needed to import keel, open a local session and read a file: [what, pattern]. */
const NOT_BEFORE_USE: [string, RegExp][] = [
	["ssh's files, commands and connection", /dist\/backend\/ssh\/(fs|exec|search|live|handshake)\.js$/],
	["the exec backend", /dist\/backend\/exec\/(index|fs|run|search|scripts)\.js$/],
	["the container backends", /dist\/backend\/container\/(index|ai-sdk|shell-transport)\.js$/],
	["bwrap's sandbox runner", /dist\/backend\/bwrap\/(runner|server|protect)\.js$/],
	["the search engines", /dist\/backend\/search\/(index|rg|js|walk)\.js$/],
	["the extension smoke test", /dist\/extensions\/smoke\.js$/],
	["jsdiff", /node_modules\/diff\//],
	["tree-sitter", /node_modules\/web-tree-sitter\//],
	["chardet", /node_modules\/chardet\//],
	["iconv-lite", /node_modules\/iconv-lite\//],
	["picomatch", /node_modules\/picomatch\//],
];

/** A call, then a module it must have loaded (the check above can see a load). */
const LOADED_BY: [string, string, RegExp][] = [
	["grep", '{"pattern":"alpha","path":"."}', /dist\/backend\/search\/index\.js$/],
	// Lines that move: the one shape of edit whose diff is jsdiff's search (edit/line-changes.ts).
	[
		"edit",
		'{"path":"a.txt","edits":[{"oldText":"alpha\\nbeta","newText":"beta\\nalpha"}]}',
		/node_modules\/diff\//,
	],
	["write", '{"path":"b.ts","content":"const x = ;\\n"}', /node_modules\/web-tree-sitter\//],
];

let dir: string;

beforeAll(async () => {
	if (!existsSync(join(REPO, "dist", "index.js")))
		throw new Error("This test runs the build: run `npx tsc -p tsconfig.build.json` first.");
	dir = await mkdtemp(join(tmpdir(), "keel-loads-"));
	await writeFile(
		join(dir, "hook.mjs"),
		"let port;\nexport function initialize(d) { port = d.port; }\n" +
			"export async function load(url, context, next) { const r = await next(url, context); port.postMessage(url); return r; }\n",
	);
	await writeFile(
		join(dir, "register.mjs"),
		`import { register } from "node:module";
const { port1, port2 } = new MessageChannel();
globalThis.loadedUrls = [];
port1.on("message", (u) => globalThis.loadedUrls.push(u));
port1.unref();
register(${JSON.stringify(pathToFileURL(join(dir, "hook.mjs")).href)}, { data: { port: port2 }, transferList: [port2] });
`,
	);
	await writeFile(join(dir, "a.txt"), "alpha\nbeta\n");
}, 60_000);

afterAll(async () => {
	if (dir) await rm(dir, { recursive: true, force: true });
});

/** The modules loaded by importing keel, opening a local session, a read, then `calls`. */
async function loadedAfter(calls: [string, string][]): Promise<{ before: string[]; after: string[] }> {
	const code = `
import { createRequire } from "node:module";
const settle = () => new Promise((r) => setTimeout(r, 100));
const loaded = () => [...globalThis.loadedUrls, ...Object.keys(createRequire(import.meta.url).cache)];
const keel = await import(${JSON.stringify(pathToFileURL(join(REPO, "dist", "index.js")).href)});
const session = await keel.createSession({ root: process.cwd() });
const read = await session.call("read", { path: "a.txt" });
if (!read.ok) throw new Error(JSON.stringify(read));
await settle();
const before = loaded();
for (const [tool, args] of ${JSON.stringify(calls)}) {
	const r = await session.call(tool, JSON.parse(args));
	if (!r.ok) throw new Error(JSON.stringify(r));
}
await settle();
await session.close();
console.log(JSON.stringify({ before, after: loaded() }));
`;
	const { stdout } = await run(
		process.execPath,
		["--import", pathToFileURL(join(dir, "register.mjs")).href, "--input-type=module", "-e", code],
		{ cwd: dir, env: { ...process.env, XDG_STATE_HOME: join(dir, "state") }, maxBuffer: 1 << 24 },
	);
	return JSON.parse(stdout);
}

describe("import, a local session and a read load only what they use", () => {
	it("none of the code they do not use, each of which a later call loads", async () => {
		const { before, after } = await loadedAfter(LOADED_BY.map(([tool, args]) => [tool, args]));
		expect(before.length).toBeGreaterThan(20); // the hook saw keel's own modules
		for (const [what, pattern] of NOT_BEFORE_USE)
			expect(
				before.filter((u) => pattern.test(u)),
				`${what} loaded before use`,
			).toEqual([]);
		for (const [tool, , pattern] of LOADED_BY)
			expect(
				after.some((u) => pattern.test(u)),
				`${tool} loads ${pattern}`,
			).toBe(true);
	}, 120_000);
});
