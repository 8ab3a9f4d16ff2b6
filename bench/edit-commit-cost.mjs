/**
 * The small edit's cost, one build against another: pi's `edit` of one line in a ~1.8 KB file
 * through Session.call, timed in child processes that alternate between the builds (so a change in
 * the machine's load falls on both alike). Each child warms up, then times EDITS edits one by one;
 * the report is, per build, the median wall time over all children and the median of the
 * children's CPU time per edit (user + system, all threads: less sensitive to a busy machine),
 * and the ratios.
 *
 * Run after `npm run build`:
 *   node bench/edit-commit-cost.mjs [OTHER_DIST] [ROUNDS=6] [EDITS=300] [BASE_DIR=os.tmpdir()]
 * OTHER_DIST is another build's dist/ directory (e.g. a copy built from main); without it the
 * current build alone is timed. On a disk the two fsyncs dominate; BASE_DIR=/dev/shm (tmpfs,
 * where fsync is nearly free) shows the commit's own work.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL("../dist", import.meta.url));
const other = process.argv[2] && process.argv[2] !== "-" ? resolve(process.argv[2]) : undefined;
const ROUNDS = Number(process.argv[3] ?? 6);
const EDITS = Number(process.argv[4] ?? 300);
const dir = mkdtempSync(join(process.argv[5] ?? tmpdir(), "keel-edit-cost-"));

const child = join(dir, "child.mjs");
writeFileSync(
	child,
	`import { mkdirSync, writeFileSync } from "node:fs";
const [dist, root, edits] = process.argv.slice(2);
const { Session } = await import(dist + "/index.js");
mkdirSync(root, { recursive: true });
const lines = [];
for (let i = 0; i < 40; i++) lines.push(i === 20 ? "export const value = 41;" : "// " + i + " lorem ipsum dolor sit amet consectetur");
writeFileSync(root + "/f.txt", lines.join("\\n") + "\\n");
const s = await Session.create({ root });
let cur = "41";
const edit = async () => {
	const next = cur === "41" ? "42" : "41";
	const r = await s.call("edit", { path: "f.txt", edits: [{ oldText: "value = " + cur, newText: "value = " + next }] });
	if (!r.ok) throw new Error(r.error.message);
	cur = next;
};
for (let i = 0; i < 50; i++) await edit();
const times = [];
const cpu0 = process.cpuUsage();
for (let i = 0; i < Number(edits); i++) {
	const t = process.hrtime.bigint();
	await edit();
	times.push(Number(process.hrtime.bigint() - t) / 1000);
}
const cpu = process.cpuUsage(cpu0);
await s.close();
process.stdout.write(JSON.stringify({ times, cpu: (cpu.user + cpu.system) / Number(edits) }));
`,
);

const builds = other
	? [
			["this build", here],
			["other build", other],
		]
	: [["this build", here]];
const samples = new Map(builds.map(([label]) => [label, []]));
const cpus = new Map(builds.map(([label]) => [label, []]));
try {
	for (let round = 0; round < ROUNDS; round++) {
		for (const [label, dist] of round % 2 ? [...builds].reverse() : builds) {
			const out = execFileSync(
				process.execPath,
				[child, dist, join(dir, `root-${round}-${label}`), String(EDITS)],
				{
					encoding: "utf8",
				},
			);
			const { times, cpu } = JSON.parse(out);
			samples.get(label).push(...times);
			cpus.get(label).push(cpu);
		}
	}
} finally {
	rmSync(dir, { recursive: true, force: true });
}
const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)];
};
const medians = builds.map(([label, dist]) => [
	label,
	dist,
	median(samples.get(label)),
	median(cpus.get(label)),
]);
for (const [label, dist, m, c] of medians)
	console.log(
		`${label.padEnd(12)} wall median ${m.toFixed(1)} µs, CPU ${c.toFixed(1)} µs per edit (${samples.get(label).length} edits; ${dist})`,
	);
if (medians.length === 2) {
	const [a, b] = medians;
	console.log(`ratio this/other: wall ${(a[2] / b[2]).toFixed(3)}, CPU ${(a[3] / b[3]).toFixed(3)}`);
}
