/**
 * The small edit's cost, one build against another: pi's `edit` of one line in a ~1.8 KB file
 * through Session.call. Both builds are loaded into this one process, each with a session on its
 * own copy of the file, and timed in alternating blocks of 25 edits, so a change in the machine's
 * load falls on both alike. Reported per build: the median wall time of an edit and the CPU time
 * (user + system, all threads) per edit, and the ratios.
 *
 * Run after `npm run build`:
 *   node bench/edit-commit-cost.mjs OTHER_DIST [ROUNDS=40] [BASE_DIR=os.tmpdir()]
 * OTHER_DIST is another build's dist/ directory (e.g. a copy of dist/ built from main, beside a
 * node_modules link). On a disk the two fsyncs dominate; BASE_DIR=/dev/shm (tmpfs, where fsync is
 * nearly free) shows the commit's own work.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

if (!process.argv[2]) {
	console.error("usage: node bench/edit-commit-cost.mjs OTHER_DIST [ROUNDS] [BASE_DIR]");
	process.exit(2);
}
const builds = [
	["this build", fileURLToPath(new URL("../dist", import.meta.url))],
	["other build", resolve(process.argv[2])],
];
const ROUNDS = Number(process.argv[3] ?? 40);
const BLOCK = 25;
const dir = mkdtempSync(join(process.argv[4] ?? tmpdir(), "keel-edit-cost-"));

/** A session of `dist` on its own file; resolves with one edit that flips `41` and `42`. */
async function editor(dist, name) {
	const { createSession } = await import(join(dist, "index.js"));
	const root = join(dir, name);
	mkdirSync(root);
	const lines = Array.from({ length: 40 }, (_, i) =>
		i === 20 ? "export const value = 41;" : `// ${i} lorem ipsum dolor sit amet consectetur`,
	);
	writeFileSync(join(root, "f.txt"), `${lines.join("\n")}\n`);
	const session = await createSession({ root });
	let cur = "41";
	const edit = async () => {
		const next = cur === "41" ? "42" : "41";
		const r = await session.call("edit", {
			path: "f.txt",
			edits: [{ oldText: `value = ${cur}`, newText: `value = ${next}` }],
		});
		if (!r.ok) throw new Error(r.error.message);
		cur = next;
	};
	return { edit, close: () => session.close() };
}

const runs = [];
try {
	for (const [label, dist] of builds) {
		runs.push({ label, dist, wall: [], cpu: 0, ...(await editor(dist, `root-${runs.length}`)) });
	}
	for (let i = 0; i < 50; i++) for (const r of runs) await r.edit();
	for (let round = 0; round < ROUNDS; round++) {
		for (const r of round % 2 ? [...runs].reverse() : runs) {
			const cpu0 = process.cpuUsage();
			for (let i = 0; i < BLOCK; i++) {
				const t = process.hrtime.bigint();
				await r.edit();
				r.wall.push(Number(process.hrtime.bigint() - t) / 1000);
			}
			const cpu = process.cpuUsage(cpu0);
			r.cpu += cpu.user + cpu.system;
		}
	}
	await Promise.all(runs.map((r) => r.close()));
} finally {
	rmSync(dir, { recursive: true, force: true });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const edits = ROUNDS * BLOCK;
for (const r of runs)
	console.log(
		`${r.label.padEnd(12)} wall median ${median(r.wall).toFixed(1)} µs, CPU ${(r.cpu / edits).toFixed(1)} µs per edit (${edits} edits; ${r.dist})`,
	);
const [a, b] = runs;
console.log(
	`ratio this/other: wall ${(median(a.wall) / median(b.wall)).toFixed(3)}, CPU ${(a.cpu / b.cpu).toFixed(3)}`,
);
