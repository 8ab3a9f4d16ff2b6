/**
 * What checkpoints cost per call, through Session.call on local (pi profile): a bash `true`,
 * and an edit of one file (the `file` tool), each in a session without checkpoints and in one with
 * them, on the same tree, interleaved round by round so machine load hits both alike. The floor is
 * one walk of the tree with lstat of every entry (what any stat scan must do). Also: the first
 * scan (checkpoint 0) and the store's size after it, for a generated tree of N files and for a real
 * repository (this one, `.git` and node_modules left out by rule).
 *
 * Run: npm run build && node bench/checkpoints.mjs [--files=20000] [--iterations=30] [--repo=PATH]
 */
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { markdownTable, nowMs, summarize } from "./lib.mjs";

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt;
const files = Number(arg("files", 20000));
const iterations = Number(arg("iterations", 30));
const repo = resolve(arg("repo", "."));

const { createSession } = await import("../dist/index.js");
const must = (r, what) => {
	if (!r.ok) throw new Error(`${what} failed: ${JSON.stringify(r.error)}`);
	return r;
};

function makeTree(root, n) {
	// 20 files per directory, 3 levels: a source tree's shape; each file a few hundred bytes.
	for (let i = 0; i < n; i++) {
		const d = join(root, `d${Math.floor(i / 400)}`, `e${Math.floor(i / 20) % 20}`);
		if (i % 20 === 0) mkdirSync(d, { recursive: true });
		writeFileSync(join(d, `f${i}.ts`), `export const v${i} = ${i};\n// ${"x".repeat(200)}\n`);
	}
}

function walkFloor(dir) {
	for (const e of readdirSync(dir, { withFileTypes: true })) {
		if (e.name === ".git" || e.name === "node_modules") continue;
		const p = join(dir, e.name);
		lstatSync(p, { bigint: true });
		if (e.isDirectory()) walkFloor(p);
	}
}

function duOf(dir) {
	let total = 0;
	for (const e of readdirSync(dir, { withFileTypes: true })) {
		const p = join(dir, e.name);
		total += e.isDirectory() ? duOf(p) : lstatSync(p).size;
	}
	return total;
}

async function measureTree(label, root, stateBase) {
	const plain = await createSession({ root, profile: "pi", stateDir: join(stateBase, "plain") });
	const t0 = nowMs();
	const kept = await createSession({
		root,
		profile: "pi",
		stateDir: join(stateBase, "kept"),
		checkpoints: true,
	});
	await kept.checkpoints.list(); // the first scan: checkpoint 0
	const firstScanMs = nowMs() - t0;
	const storeBytes = duOf(join(stateBase, "kept", "checkpoints"));
	// Each session edits its own file, in a directory of its own: the other's edits are changes
	// made outside its calls, which it records (and pays for) as such.
	const targets = new Map();
	for (const [name, s] of [
		["plain", plain],
		["kept", kept],
	]) {
		const d = join(root, `bench-${name}`);
		mkdirSync(d, { recursive: true });
		writeFileSync(join(d, "t.txt"), "line 0\n");
		must(await s.call("read", { path: join(d, "t.txt") }), "read");
		targets.set(s, join(d, "t.txt"));
	}
	const samples = {
		floor: [],
		"true: plain": [],
		"true: checkpoints": [],
		"edit: plain": [],
		"edit: checkpoints": [],
	};
	let n = 0;
	for (let i = 0; i < iterations + 3; i++) {
		const keep = i >= 3;
		const time = async (name, fn) => {
			const s = nowMs();
			await fn();
			if (keep) samples[name].push(nowMs() - s);
		};
		await time("floor", () => walkFloor(root));
		await time("true: plain", async () => must(await plain.call("bash", { command: "true" }), "bash"));
		await time("true: checkpoints", async () => must(await kept.call("bash", { command: "true" }), "bash"));
		for (const [name, s] of [
			["edit: plain", plain],
			["edit: checkpoints", kept],
		]) {
			await time(name, async () =>
				must(
					await s.call("edit", {
						path: targets.get(s),
						edits: [{ oldText: `line ${n}`, newText: `line ${n + 1}` }],
					}),
					"edit",
				),
			);
		}
		n++;
	}
	await plain.close();
	await kept.close();
	const rows = Object.entries(samples).map(([name, xs]) => {
		const s = summarize(xs);
		return [name, s.median.toFixed(1), s.p95.toFixed(1)];
	});
	console.log(`\n### ${label}\n`);
	console.log(
		`first scan (checkpoint 0): ${firstScanMs.toFixed(0)} ms; store after it: ${(storeBytes / 1e6).toFixed(1)} MB\n`,
	);
	console.log(markdownTable(["per call", "p50 ms", "p95 ms"], rows));
}

const base = mkdtempSync(join(tmpdir(), "keel-bench-cp-"));
try {
	const gen = join(base, "gen");
	mkdirSync(gen);
	makeTree(gen, files);
	await measureTree(`generated tree, ${files} files`, gen, join(base, "s1"));
	const copy = join(base, "repo");
	cpSync(repo, copy, { recursive: true, filter: (src) => !/\/(node_modules|\.git|dist)(\/|$)/.test(src) });
	await measureTree(
		`a real repository (${repo}, .git, node_modules and dist left out)`,
		copy,
		join(base, "s2"),
	);
} finally {
	rmSync(base, { recursive: true, force: true });
}
