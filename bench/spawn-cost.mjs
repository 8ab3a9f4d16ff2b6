/**
 * What one child process costs the Node process that starts it (issue 15, grep's plans): the
 * time `child_process.spawn` blocks the event loop, and the time to the child's exit, for
 * `rg --version`, as the parent's resident memory grows. libuv starts a child with fork() on
 * Linux, so the parent's page tables are copied and the copy torn down at the child's exec: the
 * cost grows with the parent's memory, and every rg run a grep plan adds pays it.
 *
 * Run: node bench/spawn-cost.mjs [N=30]   (needs rg on PATH)
 */
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { markdownTable, percentile } from "./lib.mjs";

const N = Number(process.argv[2] ?? 30);
const held = [];
const rows = [];
const load = () =>
	loadavg()
		.map((l) => l.toFixed(2))
		.join(" ");
const startLoad = load();
for (const mb of [0, 100, 200, 400]) {
	// Touched memory (written), as a long-running agent's heap and buffers are.
	while (held.length < mb) held.push(Buffer.alloc(1 << 20, 1));
	const blocked = [];
	const toExit = [];
	for (let i = 0; i < N + 3; i++) {
		const t0 = performance.now();
		const child = spawn("rg", ["--version"], { stdio: ["ignore", "pipe", "ignore"] });
		const t1 = performance.now();
		child.stdout.resume();
		await new Promise((resolve, reject) => {
			child.on("error", reject);
			child.on("close", resolve);
		});
		if (i < 3) continue;
		blocked.push(t1 - t0);
		toExit.push(performance.now() - t0);
	}
	blocked.sort((a, b) => a - b);
	toExit.sort((a, b) => a - b);
	rows.push([
		`+${mb} MB`,
		(process.memoryUsage().rss / 1e6).toFixed(0),
		percentile(blocked, 50).toFixed(2),
		percentile(blocked, 95).toFixed(2),
		percentile(toExit, 50).toFixed(2),
	]);
}
console.log(`- command: \`node bench/spawn-cost.mjs ${N}\`; date: ${new Date().toISOString()}`);
console.log(`- load average (1, 5, 15 min) at start: ${startLoad}; at end: ${load()}\n`);
console.log(
	markdownTable(
		[
			"memory held",
			"parent RSS (MB)",
			"spawn() blocks, median (ms)",
			"spawn() blocks, p95 (ms)",
			"spawn to exit, median (ms)",
		],
		rows,
	),
);
