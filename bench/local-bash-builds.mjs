/**
 * The bash tool on `local` through Session.call, `true` 100 times after 10 warm-ups, in a fresh
 * process per build: run it once per build, alternating, to compare two builds of keel.
 *
 * Run: node bench/local-bash-builds.mjs DIST   (DIST: a build's dist directory, e.g. ./dist)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const dist = resolve(process.argv[2] ?? "dist");
const { createSession } = await import(join(dist, "index.js"));
const root = mkdtempSync(join(tmpdir(), "keel-local-bash-"));
const session = await createSession({ root });
for (let i = 0; i < 10; i++) await session.call("bash", { command: "true" });
const times = [];
for (let i = 0; i < 100; i++) {
	const start = performance.now();
	const r = await session.call("bash", { command: "true" });
	if (!r.ok) throw new Error(`bash failed: ${r.error.code}`);
	times.push(performance.now() - start);
}
times.sort((a, b) => a - b);
console.log(`${dist} median ${times[50].toFixed(2)} p90 ${times[90].toFixed(2)}`);
await session.close();
rmSync(root, { recursive: true, force: true });
