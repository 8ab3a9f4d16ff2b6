/**
 * A backend's first protected-set scan (bwrap/protect-cache.ts), now that inotify (koffi) loads
 * only once a scan reaches 64 directories:
 * - small workspace (21 directories), fresh processes: the first scan as it is, against the same
 *   after loading koffi's binding (what every first scan paid before), timed apart;
 * - large workspaces (111 and 1,111 directories), one process with koffi loaded: the first scan
 *   as it is (stops at 64 directories, begins again watched), against one watched from its start.
 * Pairs interleaved, medians reported.
 *
 *   npm run build && node bench/protect-first-scan.mjs [--rounds=15]
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { lazyInotify } from "../dist/backend/bwrap/inotify.js";
import { ProtectedScanCache } from "../dist/backend/bwrap/protect-cache.js";

const arg = process.argv.find((a) => a.startsWith("--rounds="));
const rounds = arg ? Number(arg.split("=")[1]) : 15;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dist = (f) => fileURLToPath(new URL(`../dist/backend/bwrap/${f}`, import.meta.url));

const dir = realpathSync(mkdtempSync(join(tmpdir(), "keel-bench-first-")));
function workspace(name, n, m) {
	const root = join(dir, name);
	for (let a = 0; a < n; a++)
		for (let b = 0; b < m; b++) mkdirSync(join(root, `d${a}`, `e${b}`), { recursive: true });
	execFileSync("git", ["init", "-q", root]);
	return { roots: [root], home: dir };
}
const small = workspace("small", 4, 4);
const large = workspace("large", 10, 10);
const larger = workspace("larger", 10, 110);

/** In a fresh node: ms to load koffi's inotify binding (when `preload`), then ms of the first scan. */
function freshFirstScan(preload) {
	const code = `const { ProtectedScanCache } = await import(${JSON.stringify(dist("protect-cache.js"))});
const { lazyInotify } = await import(${JSON.stringify(dist("inotify.js"))});
const t = performance.now();
${preload ? "lazyInotify()();" : ""}
const t1 = performance.now();
const c = new ProtectedScanCache();
await c.scan(${JSON.stringify(small)});
process.stdout.write(JSON.stringify([t1 - t, performance.now() - t1]));
c.close();`;
	return JSON.parse(
		execFileSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8" }),
	);
}

process.stdout.write(`load ${readFileSync("/proc/loadavg", "utf8")}`);
try {
	const lazy = [];
	const eager = [];
	for (let i = 0; i < rounds; i++) {
		lazy.push(freshFirstScan(false));
		eager.push(freshFirstScan(true));
	}
	const ms = (xs, k) => median(xs.map((x) => x[k])).toFixed(1);
	process.stdout.write(
		`small, fresh process: first scan ${ms(lazy, 1)} ms (koffi not loaded); loading koffi first ${ms(eager, 0)} ms, then the scan ${ms(eager, 1)} ms\n`,
	);
	lazyInotify()(); // koffi's own cost out of the large cases
	for (const [label, opts] of [
		["111 directories", large],
		["1,111 directories", larger],
	]) {
		const begunAgain = [];
		const watchedAtOnce = [];
		for (let i = 0; i < rounds; i++) {
			for (const [xs, o] of [
				[begunAgain, {}],
				[watchedAtOnce, { watchFrom: 0 }],
			]) {
				const c = new ProtectedScanCache(o);
				const t = performance.now();
				await c.scan(opts);
				xs.push(performance.now() - t);
				c.close();
			}
		}
		process.stdout.write(
			`${label}, first scan: begun again at 64 ${median(begunAgain).toFixed(2)} ms; watched from the start ${median(watchedAtOnce).toFixed(2)} ms\n`,
		);
	}
} finally {
	rmSync(dir, { recursive: true, force: true });
	process.stdout.write(`load ${readFileSync("/proc/loadavg", "utf8")}`);
}
