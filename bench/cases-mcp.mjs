/**
 * MCP round trips over stdio: `keel serve` against @modelcontextprotocol/server-filesystem on the same
 * tree, in one run, interleaved (bench/lib.mjs `compare`). Each timed call is one tools/call through
 * the official SDK client: JSON-RPC over the child's stdin/stdout, the server's work, and the reply.
 *
 * Peer tools used (checked in its dist/index.js): read_text_file {path, head?}, edit_file {path,
 * edits: [{oldText, newText}]}, search_files {path, pattern} (a glob over relative paths). The peer
 * has no content search, so "search" is a file-name glob: keel's find against its search_files.
 *
 * An area module for bench/run.mjs (add "./cases-mcp.mjs" to AREAS), and runnable alone:
 *   npm run build && node --expose-gc bench/cases-mcp.mjs [--quick]
 */
import {
	closeSync,
	existsSync,
	fsync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	renameSync,
	rmSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assert, compare, comparisonTable, textOf } from "./lib.mjs";

export const area = "mcp";
export const title = "MCP over stdio: keel serve vs @modelcontextprotocol/server-filesystem";
export const candidate = "keel";
export const baseline = "server-filesystem";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const LOREM = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut";
const SEARCH_DIRS = 40;
const SEARCH_FILES_PER_DIR = 50;
/** One file in this many is a .md: 2,000 files, 200 matches (under keel's find limit of 1000). */
const MD_EVERY = 10;

function smallText() {
	const lines = [];
	for (let i = 0; i < 40; i++) {
		lines.push(
			i === 20 ? "export const value = 41; // the line the edit changes" : `// ${i} ${LOREM.slice(0, 40)}`,
		);
	}
	return `${lines.join("\n")}\n`;
}

/** ~1 MB: 10,000 lines of ~100 bytes. */
function megabyteText() {
	const lines = new Array(10_000);
	for (let i = 0; i < lines.length; i++) lines[i] = `${String(i).padStart(6, "0")}: ${LOREM}`;
	return `${lines.join("\n")}\n`;
}

/** How keel serve is started: the CLI once it dispatches `serve`, runServe from the build until then. */
function keelCommand(root) {
	const cli = join(REPO, "dist", "adapters", "cli.js");
	if (existsSync(cli) && readFileSync(cli, "utf8").includes("runServe"))
		return { command: process.execPath, args: [join(REPO, "bin", "keel.js"), "serve", "--root", root] };
	const serve = join(REPO, "dist", "adapters", "mcp", "serve.js");
	assert(existsSync(serve), "dist/adapters/mcp/serve.js is missing: run npm run build first");
	const script = `const { runServe } = await import(${JSON.stringify(serve)}); process.exitCode = await runServe({ root: process.argv[1] });`;
	return { command: process.execPath, args: ["--input-type=module", "-e", script, root] };
}

function peerCommand(root) {
	const require = createRequire(import.meta.url);
	const pkg = require.resolve("@modelcontextprotocol/server-filesystem/package.json");
	return { command: process.execPath, args: [join(dirname(pkg), "dist", "index.js"), root] };
}

async function connect(name, { command, args }) {
	const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
	const client = new Client({ name: `keel-bench-${name}`, version: "0.0.0" });
	await client.connect(transport);
	return client;
}

/** One tools/call; throws on a tool error so a broken contender cannot post a fast time. */
function caller(client, label) {
	return async (name, args) => {
		const r = await client.callTool({ name, arguments: args });
		if (r.isError) throw new Error(`${label} ${name} failed: ${textOf(r).slice(0, 300)}`);
		return r;
	};
}

/** Both servers do the same edit: one shared toggle flips 41 ↔ 42, whoever calls next. */
function toggler() {
	const a = "export const value = 41;";
	const b = "export const value = 42;";
	let cur = a;
	return () => {
		const next = cur === a ? b : a;
		const edit = { oldText: cur, newText: next };
		cur = next;
		return edit;
	};
}

/**
 * The durable write the peer leaves out: the same bytes written to a file of its own in
 * the same directory, temp file created and written, fsync, rename over the file, fsync of the
 * directory (the cheap steps synchronous, the two fsyncs in the thread pool, as in cases-local.mjs).
 * The floor of a durable MCP edit is the peer's edit followed by this.
 */
function durableWrite(dir, original) {
	const bytes = {
		"export const value = 41;": Buffer.from(original),
		"export const value = 42;": Buffer.from(original.replace("value = 41", "value = 42")),
	};
	const target = join(dir, "floor-edit.txt");
	const temp = join(dir, ".floor-edit.tmp");
	writeFileSync(target, bytes["export const value = 41;"]);
	const fsyncFd = promisify(fsync);
	return async (newText) => {
		const fd = openSync(temp, "wx", 0o644);
		try {
			writeSync(fd, bytes[newText]);
			await fsyncFd(fd);
		} finally {
			closeSync(fd);
		}
		renameSync(temp, target);
		const d = openSync(dir, "r");
		try {
			await fsyncFd(d);
		} finally {
			closeSync(d);
		}
	};
}

/**
 * @param {{dir: string}} env  a fresh temp directory owned by this area
 * @returns {Promise<{cases: object[], teardown: () => Promise<void>}>}
 */
export async function setup({ dir }) {
	const small = smallText();
	const big = megabyteText();
	const paths = {
		small: join(dir, "small.txt"),
		big: join(dir, "one-mb.txt"),
		edit: join(dir, "edit.txt"),
		tree: join(dir, "tree"),
	};
	writeFileSync(paths.small, small);
	writeFileSync(paths.big, big);
	writeFileSync(paths.edit, small);
	for (let d = 0; d < SEARCH_DIRS; d++) {
		const sub = join(paths.tree, `d${String(d).padStart(2, "0")}`);
		mkdirSync(sub, { recursive: true });
		for (let f = 0; f < SEARCH_FILES_PER_DIR; f++) {
			const ext = (d * SEARCH_FILES_PER_DIR + f) % MD_EVERY === 0 ? "md" : "js";
			writeFileSync(join(sub, `f${String(f).padStart(2, "0")}.${ext}`), `// ${d}/${f}\n`);
		}
	}

	const keelClient = await connect("keel", keelCommand(dir));
	const peerClient = await connect("peer", peerCommand(dir));
	const keel = caller(keelClient, "keel");
	const peer = caller(peerClient, "server-filesystem");

	// The lines keel shows of the 1 MB file by default, so the peer can be asked for the same head.
	const keelBig = textOf(await keel("read", { path: paths.big }));
	const shownLines = keelBig.split("\n\n[")[0].split("\n").length;

	const readCase = (name, path, keelArgs, peerArgs, iterations, warmup, verify) => ({
		name,
		iterations,
		warmup,
		async check() {
			verify(
				textOf(await keel("read", { path, ...keelArgs })),
				textOf(await peer("read_text_file", { path, ...peerArgs })),
			);
		},
		contenders: [
			{ label: "keel", run: () => keel("read", { path, ...keelArgs }) },
			{ label: "server-filesystem", run: () => peer("read_text_file", { path, ...peerArgs }) },
		],
	});

	const next = toggler();
	const durable = durableWrite(dir, small);
	const editCase = {
		name: "edit, one change in a 2 KB file",
		iterations: 200,
		warmup: 20,
		async check() {
			await keel("edit", { path: paths.edit, edits: [next()] });
			assert(readFileSync(paths.edit, "utf8") === small.replace("value = 41", "value = 42"), "keel's edit");
			await peer("edit_file", { path: paths.edit, edits: [next()] });
			assert(readFileSync(paths.edit, "utf8") === small, "server-filesystem's edit did not restore the file");
		},
		contenders: [
			{ label: "keel", run: () => keel("edit", { path: paths.edit, edits: [next()] }) },
			{ label: "server-filesystem", run: () => peer("edit_file", { path: paths.edit, edits: [next()] }) },
			{
				label: "floor",
				run: async () => {
					const edit = next();
					await peer("edit_file", { path: paths.edit, edits: [edit] });
					await durable(edit.newText);
				},
			},
		],
		after() {
			assert(readFileSync(paths.edit, "utf8").length === small.length, "edit: file size drifted");
		},
	};

	const nFiles = SEARCH_DIRS * SEARCH_FILES_PER_DIR;
	const searchCase = {
		name: `search, glob **/*.md over ${nFiles.toLocaleString("en-US")} files (${nFiles / MD_EVERY} matches)`,
		iterations: 30,
		warmup: 3,
		async check() {
			const k = textOf(await keel("find", { pattern: "**/*.md", path: paths.tree })).split("\n");
			const p = textOf(await peer("search_files", { pattern: "**/*.md", path: paths.tree }))
				.split("\n")
				.map((abs) => relative(paths.tree, abs));
			assert(k.length === nFiles / MD_EVERY, `search: keel found ${k.length}`);
			assert(
				JSON.stringify(k.sort()) === JSON.stringify(p.sort()),
				"search: keel and the peer found different files",
			);
		},
		contenders: [
			{ label: "keel", run: () => keel("find", { pattern: "**/*.md", path: paths.tree }) },
			{
				label: "server-filesystem",
				run: () => peer("search_files", { pattern: "**/*.md", path: paths.tree }),
			},
		],
	};

	const cases = [
		readCase(
			`read, small file (${(small.length / 1024).toFixed(1)} KB)`,
			paths.small,
			{},
			{},
			200,
			20,
			(k, p) => assert(k === p.replace(/\n$/, ""), "small read: different text"),
		),
		readCase(
			`read, 1 MB file, the same first ${shownLines} lines (peer: head=${shownLines})`,
			paths.big,
			{},
			{ head: shownLines },
			100,
			10,
			(k, p) => assert(k.split("\n\n[")[0] === p.replace(/\n$/, ""), "1 MB head read: different lines"),
		),
		readCase(
			"read, 1 MB file, defaults (keel: first 50 KB + notice; peer: whole file)",
			paths.big,
			{},
			{},
			50,
			5,
			(k, p) =>
				assert(k.includes("offset=") && p.length === big.length, "1 MB default read: unexpected sizes"),
		),
		editCase,
		searchCase,
	];
	return {
		cases,
		async teardown() {
			await keelClient.close();
			await peerClient.close();
		},
	};
}

/** Run this area alone; resolves with the compare() results and prints the markdown table. */
export async function runMcpBench({ quick = false } = {}) {
	const root = mkdtempSync(join(tmpdir(), "keel-bench-mcp-"));
	try {
		const { cases, teardown } = await setup({ dir: root });
		const results = [];
		try {
			for (const c of cases) {
				await c.check?.();
				const iterations = quick ? Math.max(3, Math.round(c.iterations / 10)) : c.iterations;
				const warmup = quick ? Math.min(c.warmup, 2) : c.warmup;
				results.push(await compare({ name: c.name, iterations, warmup, contenders: c.contenders }));
				c.after?.();
			}
		} finally {
			await teardown();
		}
		return { results, table: comparisonTable(results, { candidate, baseline }) };
	} finally {
		rmSync(root, { recursive: true, force: true });
	}
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const { table } = await runMcpBench({ quick: process.argv.includes("--quick") });
	process.stdout.write(`### ${title}\n\n${table}\n`);
}
