/**
 * The persistent Python coordinator: warm no-op dispatch through the
 * whole tool boundary (Session.call("python", ...): schema check, cwd preflight through the path
 * guard, interpreter check, framed request, end markers on stdout/stderr, result formatting),
 * against spawning a new interpreter per call (`python3 -c pass` via child_process), in one run.
 * Cold start (a new session to its first result) is reported separately. Target: warm p95 <= 2 ms.
 *
 * As an area of bench/run.mjs (add "./cases-python.mjs" to AREAS), or on its own, which also
 * prints p99:   node --expose-gc bench/cases-python.mjs [--iterations=N]
 * Needs `npm run build` first (it imports ../dist).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createSession } from "../dist/index.js";
import { PythonCoordinator } from "../dist/python/coordinator.js";
import { pythonJobsTool, pythonTool } from "../dist/tools/python.js";
import { assert, compare, fmtMs, markdownTable, percentile, textOf } from "./lib.mjs";

export const area = "python";
export const title = "Python: persistent worker (keel) vs a new interpreter per call";
export const candidate = "keel";
export const baseline = "spawn";

const run = promisify(execFile);

function interpreter() {
	if (process.env.KEEL_PYTHON) return process.env.KEEL_PYTHON;
	return existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

/**
 * A session whose `python` tool works: Session's own coordinator once it has one, else one
 * attached here (what the wiring will do), with the python tools added to its palette.
 */
async function pythonSession(root) {
	const session = await createSession({ root, profile: "unified" });
	if (!session.python) {
		const python = new PythonCoordinator({ spill: session.spill });
		Object.defineProperty(session, "python", { value: python, configurable: true });
	}
	if (!session.tools.some((t) => t.name === "python")) {
		for (const tool of [pythonTool, pythonJobsTool]) session.palette.byName.set(tool.name, tool);
	}
	return session;
}

async function closeSession(session) {
	await session.python.close();
	await session.close();
}

async function keelCall(session, code) {
	const r = await session.call("python", { code });
	if (!r.ok) throw new Error(`python failed: ${r.error.code} ${r.error.message}`);
	return r;
}

/** @returns {Promise<{cases: object[], teardown: () => Promise<void>}>} */
export async function setup({ dir, iterations = 300 }) {
	const python = interpreter();
	const warm = await pythonSession(dir);
	const spawnNoop = () => run(python, ["-c", "pass"], { cwd: dir });
	const cold = async () => {
		const s = await pythonSession(dir);
		try {
			await keelCall(s, "pass");
		} finally {
			await closeSession(s);
		}
	};
	const cases = [
		{
			name: "warm no-op `pass`",
			iterations,
			warmup: 20,
			async check() {
				const r = await keelCall(warm, "pass");
				assert(textOf(r) === "(no output)", "pass gives no output");
			},
			contenders: [
				{ label: "keel", run: () => keelCall(warm, "pass") },
				{ label: "spawn", run: spawnNoop },
			],
		},
		{
			name: "warm `1` (repr round trip)",
			iterations,
			warmup: 20,
			async check() {
				assert(textOf(await keelCall(warm, "1")) === "1", "1 gives its repr");
			},
			contenders: [
				{ label: "keel", run: () => keelCall(warm, "1") },
				{ label: "spawn", run: () => run(python, ["-c", "print(repr(1))"], { cwd: dir }) },
			],
		},
		{
			// The same dispatch with no process spawned between calls: what a session sees when
			// it calls python repeatedly (spawns interleaved above disturb the next call's timing).
			name: "warm no-op `pass`, keel alone",
			iterations: iterations * 5,
			warmup: 50,
			contenders: [{ label: "keel", run: () => keelCall(warm, "pass") }],
		},
		{
			// keel: a new session, its first python call (worker start included), then close;
			// spawn: `python3 -c pass`, interpreter start and exit included.
			name: "cold start to first result",
			iterations: Math.max(10, Math.round(iterations / 10)),
			warmup: 2,
			contenders: [
				{ label: "keel", run: cold },
				{ label: "spawn", run: spawnNoop },
			],
		},
	];
	return {
		cases,
		async teardown() {
			await closeSession(warm);
		},
	};
}

/**
 * Run every case once, in one process, and return p50/p95/p99 per case and contender (ms).
 * @returns {Promise<{name: string, contender: string, n: number, p50: number, p95: number, p99: number}[]>}
 */
export async function runPythonBench({ iterations = 300 } = {}) {
	const dir = mkdtempSync(join(tmpdir(), "keel-bench-python-"));
	const { cases, teardown } = await setup({ dir, iterations });
	const rows = [];
	try {
		for (const c of cases) {
			await c.check?.();
			const samples = Object.fromEntries(c.contenders.map((x) => [x.label, []]));
			// Collect raw samples (compare() keeps only summaries; p99 needs them all).
			const timed = c.contenders.map((x) => ({
				label: x.label,
				run: async () => {
					const t0 = process.hrtime.bigint();
					await x.run();
					samples[x.label].push(Number(process.hrtime.bigint() - t0) / 1e6);
				},
			}));
			await compare({ name: c.name, iterations: c.iterations + c.warmup, warmup: 0, contenders: timed });
			for (const [label, all] of Object.entries(samples)) {
				const s = all.slice(c.warmup).sort((a, b) => a - b);
				rows.push({
					name: c.name,
					contender: label,
					n: s.length,
					p50: percentile(s, 50),
					p95: percentile(s, 95),
					p99: percentile(s, 99),
				});
			}
		}
	} finally {
		await teardown();
		rmSync(dir, { recursive: true, force: true });
	}
	return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const arg = process.argv.find((a) => a.startsWith("--iterations="));
	const rows = await runPythonBench({ iterations: arg ? Number(arg.split("=")[1]) : 300 });
	const table = markdownTable(
		["case", "contender", "N", "p50 (ms)", "p95 (ms)", "p99 (ms)"],
		rows.map((r) => [r.name, r.contender, String(r.n), fmtMs(r.p50), fmtMs(r.p95), fmtMs(r.p99)]),
	);
	process.stdout.write(`### ${title}\n\n${table}\n`);
}
