/**
 * What the kept protected-set scan's inotify watches cost (bwrap/dir-watches.ts): adding one per
 * directory of a 20,000-directory tree (time, the kernel's unreclaimable slab, the JS heap), one
 * check of the quiet queue, and a full scan plus 50 checks with and without the watches.
 *
 *   npm run build && node --expose-gc bench/protect-watch-cost.mjs [--rounds=3]
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirWatches } from "../dist/backend/bwrap/dir-watches.js";
import { lazyInotify } from "../dist/backend/bwrap/inotify.js";
import { ProtectedScanCache } from "../dist/backend/bwrap/protect-cache.js";

const arg = process.argv.find((a) => a.startsWith("--rounds="));
const rounds = arg ? Number(arg.split("=")[1]) : 3;
const libc = lazyInotify()();
if (!libc) {
	process.stderr.write("koffi cannot load here: nothing to measure\n");
	process.exit(0);
}
const dir = realpathSync(mkdtempSync(join(tmpdir(), "keel-bench-watch-")));
const root = join(dir, "ws");
const paths = [];
for (let a = 0; a < 100; a++)
	for (let b = 0; b < 198; b++) {
		const p = join(root, `d${a}`, `e${b}`);
		mkdirSync(p, { recursive: true });
		paths.push(p);
	}
mkdirSync(join(dir, "home"));
const slabKb = () => Number(/SUnreclaim:\s+(\d+)/.exec(readFileSync("/proc/meminfo", "utf8"))[1]);
const opts = { roots: [root], home: join(dir, "home") };
process.stdout.write(`load ${readFileSync("/proc/loadavg", "utf8")}`);
await new Promise((r) => setTimeout(r, 2500)); // older than the stat check's racy window
try {
	for (let round = 0; round < rounds; round++) {
		globalThis.gc?.();
		const slab0 = slabKb();
		const heap0 = process.memoryUsage().heapUsed;
		const w = DirWatches.open(libc);
		let t = performance.now();
		for (const p of paths) w.watch(p);
		const add = performance.now() - t;
		const slab = slabKb() - slab0;
		const heap = (process.memoryUsage().heapUsed - heap0) / 1e6;
		t = performance.now();
		const quiet = w.settle();
		const settle = performance.now() - t;
		w.close();
		process.stdout.write(
			`${w.count} watches: ${add.toFixed(0)} ms (${((add * 1000) / w.count).toFixed(1)} µs each), slab +${slab} kB, heap +${heap.toFixed(1)} MB; settle ${quiet} ${settle.toFixed(3)} ms\n`,
		);
		for (const [label, o] of [
			["stat", { inotify: () => null }],
			["inotify", {}],
		]) {
			const cache = new ProtectedScanCache(o);
			t = performance.now();
			await cache.scan(opts);
			const full = performance.now() - t;
			t = performance.now();
			for (let i = 0; i < 50; i++) await cache.scan(opts);
			const check = (performance.now() - t) / 50;
			process.stdout.write(
				`  ${label}: full scan ${full.toFixed(0)} ms, check ${check.toFixed(3)} ms (mode ${cache.mode}, ${JSON.stringify(cache.counts)})\n`,
			);
			cache.close();
		}
		await new Promise((r) => setTimeout(r, 300));
	}
} finally {
	rmSync(dir, { recursive: true, force: true });
	process.stdout.write(`load ${readFileSync("/proc/loadavg", "utf8")}`);
}
