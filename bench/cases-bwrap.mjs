/**
 * bwrap's per-command overhead against local: the same `bash` tool
 * call through Session.call on a local and a bwrap session, interleaved. bwrap's file tools are
 * local's, so commands are the only thing that differs. A third contender, the exec backend over
 * a bwrap transport, shows what a command costs when everything goes through exec (a sandbox per
 * call, plus the wrapper that tracks the process group).
 *
 * As an area of bench/run.mjs (add "./cases-bwrap.mjs" to AREAS), or on its own:
 *   node --expose-gc bench/cases-bwrap.mjs [--iterations=N]
 * Needs `npm run build` first (it imports ../dist). Skips itself when bwrap cannot run here.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createBwrapBackend, createBwrapTransport } from "../dist/backend/bwrap.js";
import { createExecBackend } from "../dist/backend/exec/index.js";
import { createSession } from "../dist/index.js";
import { assert, compare, comparisonTable, textOf } from "./lib.mjs";

export const area = "bwrap";
export const title = "bwrap: per-command overhead against local (bash tool through Session.call)";
export const candidate = "bwrap";
export const baseline = "local";

/** Lines for the report (the first scans' cost), filled by setup. */
const notes = [];
export async function report() {
	return notes.map((n) => `- ${n}`).join("\n");
}

async function bash(session, command, expected) {
	const r = await session.call("bash", { command });
	if (!r.ok) throw new Error(`bash failed: ${r.error.code} ${r.error.message}`);
	if (expected !== undefined && textOf(r) !== expected) throw new Error(`unexpected output: ${textOf(r)}`);
	return r;
}

/**
 * @param {{dir: string, iterations?: number}} env
 * @returns {Promise<{cases: object[], teardown: () => Promise<void>}>}
 */
export async function setup({ dir, iterations = 200 }) {
	const root = join(dir, "ws");
	mkdirSync(root, { recursive: true });
	// grep's tree: 2,000 small files, 10 hold the rare needle (rg runs inside the sandbox on bwrap).
	for (let d = 0; d < 20; d++) {
		const sub = join(root, "tree", `d${String(d).padStart(2, "0")}`);
		mkdirSync(sub, { recursive: true });
		for (let f = 0; f < 100; f++) {
			const id = d * 100 + f;
			const rare = id % 200 === 0 ? `\n// NEEDLE_RARE ${id}` : "";
			writeFileSync(join(sub, `f${f}.js`), `export const v${id} = ${id}; // common_marker${rare}\n`);
		}
	}
	const bwrapBackend = createBwrapBackend({ roots: [root] });
	try {
		await bwrapBackend.ready();
	} catch (e) {
		process.stderr.write(`[bwrap] skipped: ${e.message}\n`);
		return { cases: [], teardown: async () => {} };
	}
	const spillDir = join(dir, "spill");
	const local = await createSession({ root, spillDir });
	const bwrap = await createSession({ root, spillDir, backend: bwrapBackend });
	const exec = await createSession({
		root,
		spillDir,
		backend: createExecBackend({ transport: createBwrapTransport({ roots: [dir] }) }),
	});
	// A workspace of 2,000 directories: bwrap checks the kept protected-set scan before and after
	// each command (a read of the inotify queue, and a stat of the few git files it parsed); local
	// has no such check.
	const bigRoot = join(dir, "big");
	for (let a = 0; a < 40; a++)
		for (let b = 0; b < 50; b++) mkdirSync(join(bigRoot, `d${a}`, `e${b}`), { recursive: true });
	const bigBackend = createBwrapBackend({ roots: [bigRoot] });
	const big = {
		bwrap: await createSession({ root: bigRoot, spillDir, backend: bigBackend }),
		local: await createSession({ root: bigRoot, spillDir }),
	};
	// 19,901 directories (the scan reads at most 20,000): inotify answers the kept scan's check
	// (dir-watches.ts); "bwrap, stat check" is the same workspace checked by stat'ing every directory.
	const hugeRoot = join(dir, "huge");
	for (let a = 0; a < 100; a++)
		for (let b = 0; b < 198; b++) mkdirSync(join(hugeRoot, `d${a}`, `e${b}`), { recursive: true });
	const hugeWatched = createBwrapBackend({ roots: [hugeRoot] });
	const hugeStat = createBwrapBackend({ roots: [hugeRoot], scanCache: { inotify: () => null } });
	// The first scan of each (sandbox start and probe included): what adding the watches costs.
	for (const [label, backend] of [
		["inotify", hugeWatched],
		["stat", hugeStat],
	]) {
		const t = performance.now();
		await backend.ready();
		notes.push(
			`first scan of the 19,901-directory workspace (${label}), sandbox probe included: ${(performance.now() - t).toFixed(0)} ms`,
		);
	}
	const huge = {
		bwrap: await createSession({ root: hugeRoot, spillDir, backend: hugeWatched }),
		local: await createSession({ root: hugeRoot, spillDir }),
		"bwrap, stat check": await createSession({ root: hugeRoot, spillDir, backend: hugeStat }),
	};
	const sessions = { bwrap, local, "exec (bwrap transport)": exec };
	const contenders = (command, expected, among = sessions) =>
		Object.entries(among).map(([label, s]) => ({ label, run: () => bash(s, command, expected) }));
	const grepContenders = (pattern, rows) =>
		Object.entries({ bwrap, local }).map(([label, s]) => ({
			label,
			run: async () => {
				const r = await s.call("grep", { pattern, path: "tree" });
				assert(
					r.ok &&
						textOf(r)
							.split("\n")
							.filter((l) => l.includes(pattern)).length === rows,
					`grep on ${label}`,
				);
				return r;
			},
		}));
	const cases = [
		{ name: "bash `true`", iterations, warmup: 10, contenders: contenders("true", "(no output)") },
		{ name: "bash `echo hi`", iterations, warmup: 10, contenders: contenders("echo hi", "hi") },
		{
			name: "grep, 2,000 files, 10 matches (full scan)",
			iterations: Math.ceil(iterations / 4),
			warmup: 5,
			contenders: grepContenders("NEEDLE_RARE", 10),
		},
		{
			name: "grep, 2,000 files, every file matches (stops at limit 100)",
			iterations: Math.ceil(iterations / 4),
			warmup: 5,
			contenders: grepContenders("common_marker", 100),
		},
		{
			name: "bash `true`, 2,000-directory workspace",
			iterations,
			warmup: 10,
			contenders: contenders("true", "(no output)", big),
		},
		{
			name: "bash `true`, 20,000-directory workspace",
			iterations,
			warmup: 10,
			contenders: contenders("true", "(no output)", huge),
		},
	];
	// Older than the protected-set cache's racy window, as a workspace between commands is.
	await new Promise((r) => setTimeout(r, 2500));
	for (const c of cases) {
		c.check = async () => {
			for (const x of c.contenders) assert((await x.run()).ok, `${c.name} on ${x.label}`);
		};
	}
	return {
		cases,
		async teardown() {
			for (const s of [...Object.values(sessions), ...Object.values(big), ...Object.values(huge)])
				await s.close();
		},
	};
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
	const arg = process.argv.find((a) => a.startsWith("--iterations="));
	const dir = mkdtempSync(join(tmpdir(), "keel-bench-bwrap-"));
	try {
		const { cases, teardown } = await setup({ dir, iterations: arg ? Number(arg.split("=")[1]) : 200 });
		const results = [];
		try {
			for (const c of cases) {
				await c.check();
				results.push(await compare(c));
			}
		} finally {
			await teardown();
		}
		if (results.length) {
			const extra = results.map((r) => {
				const e = r.stats["exec (bwrap transport)"];
				const stat = r.stats["bwrap, stat check"];
				const over = `bwrap − local ${(r.stats.bwrap.median - r.stats.local.median).toFixed(2)} ms${stat ? `; bwrap with the stat check − local ${(stat.median - r.stats.local.median).toFixed(2)} ms` : ""}`;
				return e
					? `- ${r.name}: ${over}; exec (bwrap transport) median ${e.median.toFixed(2)} ms, p95 ${e.p95.toFixed(2)} ms`
					: `- ${r.name}: ${over}`;
			});
			process.stdout.write(
				`### ${title}\n\n${comparisonTable(results, { candidate, baseline })}\n\n${extra.join("\n")}\n${await report()}\n`,
			);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
