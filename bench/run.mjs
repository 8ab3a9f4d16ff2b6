/**
 * keel's benchmarks: `npm run bench` (= node --expose-gc bench/run.mjs), after `npm run build`.
 *
 * Options:
 *   --area=NAME      run one area only (see AREAS; e.g. --area=local)
 *   --filter=TEXT    run only cases whose name contains TEXT
 *   --quick          a tenth of the iterations (at least 3): a smoke run, not numbers to publish
 *   --json=FILE      also write the raw statistics as JSON
 *   --only=LABEL     time one contender only (e.g. --only=keel), for profiling:
 *                    node --expose-gc --cpu-prof --cpu-prof-dir=/tmp/prof bench/run.mjs --filter=grep --only=keel
 *
 * Every area is a module exporting { area, title, candidate, baseline, setup({dir}) }; setup makes
 * its fixtures in a temp dir it is given and returns { cases, teardown }. A case is
 * { name, iterations, warmup, gcEach?, contenders: [{label, run}], check?(), after?() }. Add a module to
 * AREAS to add an area (SSH, MCP and Python benchmarks go in their own cases-*.mjs files).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { compare, comparisonTable, machineInfo } from "./lib.mjs";

const AREAS = [
	"./cases-local.mjs",
	"./cases-commit.mjs",
	"./cases-multi.mjs",
	"./cases-drift.mjs",
	"./cases-mcp.mjs",
	"./cases-python.mjs",
	"./cases-python-backends.mjs",
	"./cases-bwrap.mjs",
	"./cases-ssh.mjs",
];

function parseArgs(argv) {
	const opts = { quick: false, filter: undefined, area: undefined, json: undefined, only: undefined };
	for (const a of argv) {
		if (a === "--quick") opts.quick = true;
		else if (a.startsWith("--filter=")) opts.filter = a.slice("--filter=".length);
		else if (a.startsWith("--area=")) opts.area = a.slice("--area=".length);
		else if (a.startsWith("--json=")) opts.json = a.slice("--json=".length);
		else if (a.startsWith("--only=")) opts.only = a.slice("--only=".length);
		else {
			console.error(`unknown option ${a}`);
			process.exit(2);
		}
	}
	return opts;
}

const opts = parseArgs(process.argv.slice(2));
const root = mkdtempSync(join(tmpdir(), "keel-bench-"));
let cleaned = false;
const cleanup = () => {
	if (cleaned) return;
	cleaned = true;
	rmSync(root, { recursive: true, force: true });
};
for (const sig of ["SIGINT", "SIGTERM"]) {
	process.on(sig, () => {
		cleanup();
		process.exit(130);
	});
}

// pi must never try to download rg/fd, and must not use a binary from the user's ~/.pi: point its
// agent dir at an empty temp dir so it takes rg from PATH. Both are read when pi's modules load,
// so they are set before the area modules (which import pi) are imported.
process.env.PI_OFFLINE = "1";
process.env.PI_CODING_AGENT_DIR = join(root, "pi-agent");

const log = (msg) => process.stderr.write(`${msg}\n`);

async function main() {
	if (typeof globalThis.gc !== "function")
		log("note: run with node --expose-gc (npm run bench) to collect before each call");
	const info = machineInfo(root);
	if (loadavg()[0] > 1)
		log(`warning: load average ${info.loadAvg}: other work on this machine will skew the numbers`);
	const sections = [];
	const raw = { info, argv: process.argv.slice(2), areas: [] };
	const t0 = Date.now();
	for (const spec of AREAS) {
		if (!existsSync(new URL(spec, import.meta.url))) continue;
		const mod = await import(spec);
		if (opts.area && mod.area !== opts.area) continue;
		const dir = join(root, mod.area);
		mkdirSync(dir, { recursive: true });
		log(`[${mod.area}] setting up fixtures in ${dir}`);
		const { cases, teardown } = await mod.setup({ dir });
		const results = [];
		try {
			for (const c of cases) {
				if (opts.filter && !c.name.includes(opts.filter)) continue;
				const iterations = opts.quick ? Math.max(3, Math.round(c.iterations / 10)) : c.iterations;
				const warmup = opts.quick ? Math.min(c.warmup, 2) : c.warmup;
				await c.check?.();
				const started = Date.now();
				const contenders = opts.only ? c.contenders.filter((x) => x.label === opts.only) : c.contenders;
				const r = await compare({ name: c.name, iterations, warmup, gcEach: c.gcEach, contenders });
				c.after?.();
				log(`[${mod.area}] ${c.name}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
				results.push(r);
			}
		} finally {
			await teardown();
		}
		// An area may add a table of its own (scores, memory) that is not a timing comparison.
		const extra = mod.report && !opts.filter ? `\n\n${await mod.report()}` : "";
		if (results.length === 0 && !extra) continue;
		const table = results.length
			? comparisonTable(results, { candidate: mod.candidate, baseline: mod.baseline })
			: "";
		sections.push(`### ${mod.title}\n\n${table}${extra}`);
		raw.areas.push({ area: mod.area, candidate: mod.candidate, baseline: mod.baseline, results });
	}
	const header = [
		`- command: \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}\``,
		`- date: ${info.date}`,
		`- keel ${info.keel}; pi ${info.pi}; node ${info.node} (${info.platform}); ${info.rg}`,
		`- machine: ${info.nproc} cores (nproc), ${info.cpuModel}, ${info.memGiB} GiB RAM; temp dir on ${info.tmpFs}`,
		`- load average (1, 5, 15 min) at start: ${info.loadAvg}; at end: ${loadavg()
			.map((l) => l.toFixed(2))
			.join(" ")}`,
		`- total run time: ${((Date.now() - t0) / 1000).toFixed(0)} s${opts.quick ? " (--quick: smoke run, too few iterations to publish)" : ""}`,
	].join("\n");
	process.stdout.write(`${header}\n\n${sections.join("\n\n")}\n`);
	if (opts.json) writeFileSync(opts.json, `${JSON.stringify(raw, null, 2)}\n`);
}

try {
	await main();
} finally {
	cleanup();
}
