/**
 * What a library user pays before the first tool call: `import("keel")` and opening a local
 * session, each run in a fresh Node process. Wall time and the process's CPU time (user + system;
 * steadier than wall time on a shared machine), median, p90 and min over N runs.
 *
 * Run: node bench/import-time.mjs [N=15] [ENTRY=dist/index.js]   (after `npm run build`)
 * Compare two builds by passing another checkout's dist/index.js as ENTRY.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { markdownTable, percentile } from "./lib.mjs";

const N = Number(process.argv[2] ?? 15);
const entry = pathToFileURL(
	resolve(process.argv[3] ?? new URL("../dist/index.js", import.meta.url).pathname),
).href;

// One child's measurement: times around the import and the session open, and the ES modules loaded.
const child = `
const c0 = process.cpuUsage(); const t0 = performance.now();
const keel = await import(${JSON.stringify(entry)});
const c1 = process.cpuUsage(c0); const t1 = performance.now();
const session = await keel.createSession({ root: process.cwd() });
const c2 = process.cpuUsage(c0); const t2 = performance.now();
await session.close();
const cpu = (c) => (c.user + c.system) / 1000;
console.log(JSON.stringify({ importWall: t1 - t0, importCpu: cpu(c1), totalWall: t2 - t0, totalCpu: cpu(c2) }));
`;

const root = mkdtempSync(join(tmpdir(), "keel-import-"));
const loadBefore = loadavg()[0].toFixed(2);
const runs = [];
try {
	for (let i = 0; i < N; i++) {
		const out = execFileSync(process.execPath, ["--input-type=module", "-e", child], {
			cwd: root,
			encoding: "utf8",
		});
		runs.push(JSON.parse(out));
	}
} finally {
	rmSync(root, { recursive: true, force: true });
}
const ms = (v) => `${v.toFixed(0)} ms`;
const rows = ["importWall", "importCpu", "totalWall", "totalCpu"].map((k) => {
	const values = runs.map((r) => r[k]).sort((a, b) => a - b);
	return [k, ms(percentile(values, 50)), ms(percentile(values, 90)), ms(Math.min(...values))];
});
console.log(`entry ${entry}, ${N} runs, load average ${loadBefore} -> ${loadavg()[0].toFixed(2)}`);
console.log(markdownTable(["measure", "median", "p90", "min"], rows));
