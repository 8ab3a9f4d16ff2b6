/**
 * What one child process costs the Node process that starts it: the time the start
 * blocks the event loop, and the time to the child's exit, for `rg --version`, as the parent's
 * resident memory grows. Node's `child_process.spawn` (libuv: fork() on Linux) copies the parent's
 * page tables and tears the copy down at the child's exec, so its cost grows with the parent's
 * memory; keel's Spawner (src/backend/spawn/: glibc's posix_spawn through koffi) shares the memory
 * until the exec. The two are interleaved, one start each per iteration.
 *
 * Run: node bench/spawn-cost.mjs [N=30]   (needs rg on PATH; after `npm run build`)
 */
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { Spawner } from "../dist/backend/spawn/spawner.js";
import { markdownTable, percentile } from "./lib.mjs";

const N = Number(process.argv[2] ?? 30);
const held = [];
const rows = [];
const load = () =>
	loadavg()
		.map((l) => l.toFixed(2))
		.join(" ");
const startLoad = load();
const spawner = new Spawner({ engine: "posix_spawn" });
if (!spawner.usesPosixSpawn) throw new Error("koffi cannot load: no posix_spawn to compare");
const starts = {
	"Node's spawn": () => spawn("rg", ["--version"], { stdio: ["ignore", "pipe", "ignore"] }),
	"keel's Spawner": () => spawner.start("rg", ["--version"], { stdio: ["ignore", "pipe", "ignore"] }),
};

async function once(start) {
	const t0 = performance.now();
	const child = start();
	const t1 = performance.now();
	child.stdout.resume();
	await new Promise((resolve, reject) => {
		child.on("error", reject);
		child.on("close", resolve);
	});
	return { blocked: t1 - t0, toExit: performance.now() - t0 };
}

for (const mb of [0, 100, 200, 400]) {
	// Touched memory (written), as a long-running agent's heap and buffers are.
	while (held.length < mb) held.push(Buffer.alloc(1 << 20, 1));
	const times = Object.fromEntries(Object.keys(starts).map((k) => [k, { blocked: [], toExit: [] }]));
	for (let i = 0; i < N + 3; i++) {
		const order = i % 2 ? Object.keys(starts) : Object.keys(starts).reverse();
		for (const name of order) {
			const t = await once(starts[name]);
			if (i < 3) continue;
			times[name].blocked.push(t.blocked);
			times[name].toExit.push(t.toExit);
		}
	}
	for (const [name, t] of Object.entries(times)) {
		t.blocked.sort((a, b) => a - b);
		t.toExit.sort((a, b) => a - b);
		rows.push([
			`+${mb} MB`,
			(process.memoryUsage().rss / 1e6).toFixed(0),
			name,
			percentile(t.blocked, 50).toFixed(2),
			percentile(t.blocked, 95).toFixed(2),
			percentile(t.toExit, 50).toFixed(2),
		]);
	}
}
console.log(`- command: \`node bench/spawn-cost.mjs ${N}\`; date: ${new Date().toISOString()}`);
console.log(`- load average (1, 5, 15 min) at start: ${startLoad}; at end: ${load()}\n`);
console.log(
	markdownTable(
		[
			"memory held",
			"parent RSS (MB)",
			"start",
			"start blocks, median (ms)",
			"start blocks, p95 (ms)",
			"start to exit, median (ms)",
		],
		rows,
	),
);
