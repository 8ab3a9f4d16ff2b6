/**
 * grep's plans on `local`, side by side with pi's grep and rg alone: the default (the
 * parallel rg, then the path-ordered one when it passes the limit, with the lookahead that starts
 * the ordered run alone when the first files hold more than the limit: rg-parallel.ts) and the
 * same without the lookahead (the ordered probe, removed, is docs/decisions/grep-probe-default.md).
 * One process, the bench's 20,000-file tree, every contender once per iteration in alternating order; the ratios are medians of the
 * per-iteration ratios, so a load that moves all contenders together cancels out.
 *
 * Run: node bench/grep-plans.mjs [N=40]   (after `npm run build`; needs rg)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createGrepToolDefinition } from "@mariozechner/pi-coding-agent";
import { Spawner } from "../dist/backend/spawn/spawner.js";
import { createLocalBackend, createSession } from "../dist/index.js";
import { writeGrepTree } from "./cases-local.mjs";
import { markdownTable, percentile } from "./lib.mjs";

const N = Number(process.argv[2] ?? 40);
const load = () =>
	loadavg()
		.map((l) => l.toFixed(2))
		.join(" ");
const dir = mkdtempSync(join(tmpdir(), "keel-grep-plans-"));
writeGrepTree(dir);
const startLoad = load();
const byDefault = await createSession({ root: dir });
const twoRuns = await createSession({
	root: dir,
	backend: createLocalBackend({ searchLookahead: false }),
});
// The lookahead loads re2js a second after a session's first grep: warm every session past that.
for (const s of [byDefault, twoRuns]) await s.call("grep", { pattern: "warm", path: "tree" });
await new Promise((r) => setTimeout(r, 1500));
const piGrep = createGrepToolDefinition(dir);
const spawner = new Spawner({ engine: "posix_spawn" });
const rgAlone = (pattern) =>
	new Promise((resolve, reject) => {
		const args = ["--json", "--line-number", "--color=never", "--hidden", "--", pattern, join(dir, "tree")];
		const child = spawner.start("rg", args, { stdio: ["ignore", "pipe", "ignore"] });
		child.stdout.resume();
		child.on("error", reject);
		child.on("close", resolve);
	});
const keel = (session, pattern) => async () => {
	const r = await session.call("grep", { pattern, path: "tree" });
	if (!r.ok) throw new Error(`keel grep: ${r.error.code} ${r.error.message}`);
};
const cases = {
	"every file matches (stops at limit 100)": "common_marker",
	"50 matches (full scan)": "NEEDLE_RARE",
	"5 matches all first in path order (full scan)": "EARLY_FEW",
	// ids 0-59: the first 60 files in path order, past half the limit, then nothing (full scan)
	"60 matches all first in path order (full scan)": "function f[1-5]?[0-9]\\(",
};
const rows = [];
for (const [name, pattern] of Object.entries(cases)) {
	const contenders = {
		"keel (default)": keel(byDefault, pattern),
		"keel (no lookahead)": keel(twoRuns, pattern),
		pi: () => piGrep.execute("bench", { pattern, path: "tree" }),
		"rg alone": () => rgAlone(pattern),
	};
	const names = Object.keys(contenders);
	const t = Object.fromEntries(names.map((k) => [k, []]));
	for (let i = -3; i < N; i++) {
		for (const k of i % 2 ? names : [...names].reverse()) {
			const start = performance.now();
			await contenders[k]();
			if (i >= 0) t[k].push(performance.now() - start);
		}
	}
	const median = (a) =>
		percentile(
			[...a].sort((x, y) => x - y),
			50,
		);
	const ratio = (a, b) => median(t[a].map((x, i) => x / t[b][i]));
	rows.push([
		name,
		...names.map((k) => median(t[k]).toFixed(1)),
		...["keel (default)", "keel (no lookahead)"].flatMap((k) => [
			`${ratio(k, "pi").toFixed(2)}×`,
			`${ratio(k, "rg alone").toFixed(2)}×`,
		]),
	]);
}
console.log(`- command: \`node bench/grep-plans.mjs ${N}\`; date: ${new Date().toISOString()}`);
console.log(`- load average (1, 5, 15 min) at start: ${startLoad}; at end: ${load()}\n`);
console.log(
	markdownTable(
		[
			"case",
			"keel default (ms)",
			"no lookahead (ms)",
			"pi (ms)",
			"rg alone (ms)",
			"default/pi",
			"default/rg",
			"no lookahead/pi",
			"no lookahead/rg",
		],
		rows,
	),
);
await byDefault.close();
await twoRuns.close();
rmSync(dir, { recursive: true, force: true });
