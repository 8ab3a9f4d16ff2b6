/**
 * Shared benchmark helpers: timing, percentiles, interleaved comparison and markdown output.
 *
 * A case is a set of contenders (e.g. keel and pi) that do the same work. `compare` runs them
 * interleaved — the order rotates every iteration (AB, BA, AB, ...) — so machine noise and ordering
 * effects (page cache, CPU frequency, a GC left over from the previous call) hit every contender
 * alike.
 *
 * Garbage collection: with node --expose-gc the heap is collected before every case. A case that
 * makes a lot of garbage per call (the 10 MB cases) can ask for `gcEach`: a full collection and a
 * short settle before every timed call (outside the timing), so no contender pays for collecting
 * another one's 10 MB strings. Small cases do not use it: right after a forced full GC a
 * sub-millisecond call runs several times slower, which would swamp what is being measured.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** Milliseconds from a monotonic clock, with sub-microsecond resolution. */
export function nowMs() {
	return Number(process.hrtime.bigint()) / 1e6;
}

/** Linear-interpolated percentile (p in 0..100) of an ascending array. */
export function percentile(sorted, p) {
	if (sorted.length === 0) return Number.NaN;
	if (sorted.length === 1) return sorted[0];
	const rank = (p / 100) * (sorted.length - 1);
	const lo = Math.floor(rank);
	const hi = Math.ceil(rank);
	return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

export function summarize(samples) {
	const sorted = [...samples].sort((a, b) => a - b);
	const sum = sorted.reduce((a, b) => a + b, 0);
	return {
		n: sorted.length,
		min: sorted[0],
		median: percentile(sorted, 50),
		p95: percentile(sorted, 95),
		max: sorted[sorted.length - 1],
		mean: sum / sorted.length,
	};
}

const canCollect = typeof globalThis.gc === "function";

/** Full GC (when exposed), then let concurrent sweeping finish before anything is timed. */
export async function collectGarbage(settleMs = 10) {
	if (!canCollect) return;
	globalThis.gc();
	await sleep(settleMs);
}

/** Time one call of `fn` in ms; `fn` must throw (or reject) when the work failed. */
export async function timeOnce(fn, { gcEach = false } = {}) {
	if (gcEach) await collectGarbage();
	const t0 = nowMs();
	await fn();
	return nowMs() - t0;
}

/**
 * Run the contenders of one case interleaved.
 * @param {{name: string, iterations: number, warmup: number, gcEach?: boolean,
 *          contenders: {label: string, run: () => Promise<unknown>}[]}} spec
 * @returns {Promise<{name: string, iterations: number, stats: Record<string, ReturnType<typeof summarize>>}>}
 */
/** The label of a case's floor contender (what the hardware allows for the same work). */
export const FLOOR = "floor";

export async function compare(spec) {
	const { contenders } = spec;
	const samples = Object.fromEntries(contenders.map((c) => [c.label, []]));
	const n = contenders.length;
	await collectGarbage();
	for (let i = 0; i < spec.warmup; i++) {
		for (let k = 0; k < n; k++) await contenders[(i + k) % n].run();
	}
	for (let i = 0; i < spec.iterations; i++) {
		for (let k = 0; k < n; k++) {
			const c = contenders[(i + k) % n];
			samples[c.label].push(await timeOnce(c.run, { gcEach: spec.gcEach }));
		}
	}
	const stats = Object.fromEntries(Object.entries(samples).map(([label, s]) => [label, summarize(s)]));
	// A contender marked `floor: true` (or labelled "floor") is what the hardware allows for the same
	// work, without a tool layer: the table gives it columns of its own.
	const floor = contenders.find((c) => c.floor || c.label === FLOOR)?.label;
	return { name: spec.name, iterations: spec.iterations, gcEach: Boolean(spec.gcEach), stats, floor };
}

/** Format ms for a table: three significant-ish digits. */
export function fmtMs(ms) {
	if (!Number.isFinite(ms)) return "n/a";
	if (ms >= 100) return ms.toFixed(0);
	if (ms >= 10) return ms.toFixed(1);
	if (ms >= 1) return ms.toFixed(2);
	return ms.toFixed(3);
}

export function fmtRatio(r) {
	return Number.isFinite(r) ? `${r.toFixed(2)}×` : "n/a";
}

/** A markdown table from a header row and body rows (all strings). */
export function markdownTable(header, rows) {
	const line = (cells) => `| ${cells.join(" | ")} |`;
	return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/**
 * The comparison table: median and p95 per contender, the candidate/baseline ratio of medians and,
 * when a case has a floor contender, the floor's median and the candidate's distance above it.
 * @param {Awaited<ReturnType<typeof compare>>[]} results
 * @param {{candidate: string, baseline: string}} labels
 */
export function comparisonTable(results, { candidate, baseline }) {
	const withFloor = results.some((r) => r.floor);
	const header = [
		"case",
		"N",
		`${candidate} median (ms)`,
		`${candidate} p95 (ms)`,
		`${baseline} median (ms)`,
		`${baseline} p95 (ms)`,
		`${candidate}/${baseline} (median)`,
		...(withFloor ? ["floor median (ms)", `${candidate} − floor (ms)`, `${candidate}/floor (median)`] : []),
	];
	const rows = results.map((r) => {
		const none = { median: Number.NaN, p95: Number.NaN };
		const a = r.stats[candidate] ?? none;
		const b = r.stats[baseline] ?? none;
		const f = r.floor ? r.stats[r.floor] : undefined;
		const floorCells = f
			? [
					`${fmtMs(f.median)}${r.floor === FLOOR ? "" : ` (${r.floor})`}`,
					fmtMs(a.median - f.median),
					fmtRatio(a.median / f.median),
				]
			: ["", "", ""];
		return [
			r.gcEach ? `${r.name} †` : r.name,
			String(r.iterations),
			fmtMs(a.median),
			fmtMs(a.p95),
			fmtMs(b.median),
			fmtMs(b.p95),
			fmtRatio(a.median / b.median),
			...(withFloor ? floorCells : []),
		];
	});
	const table = markdownTable(header, rows);
	if (!results.some((r) => r.gcEach)) return table;
	return `${table}\n\n† full GC and a 10 ms settle before every timed call, outside the timing.`;
}

function tryRun(cmd, args) {
	try {
		return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
	} catch {
		return undefined;
	}
}

function packageVersion(name) {
	try {
		const url = new URL(`../node_modules/${name}/package.json`, import.meta.url);
		return JSON.parse(readFileSync(url, "utf8")).version;
	} catch {
		return undefined;
	}
}

/** The commit dist was (presumably) built from, and whether the work tree had other changes. */
function keelVersion() {
	const repo = new URL("..", import.meta.url).pathname;
	const commit = tryRun("git", ["-C", repo, "rev-parse", "--short", "HEAD"]);
	if (!commit) return "(not a git checkout)";
	const dirty = tryRun("git", [
		"--no-optional-locks",
		"-C",
		repo,
		"status",
		"--porcelain",
		"--untracked-files=no",
		"--",
		"src",
	]);
	return dirty ? `${commit} + uncommitted changes in src/` : commit;
}

/** Facts about the machine and toolchain a reader needs to judge the numbers. */
export function machineInfo(dirForFs) {
	let cpuModel = cpus()[0]?.model ?? "unknown";
	try {
		const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
		if (m) cpuModel = m[1].trim();
	} catch {
		// not Linux: keep os.cpus()
	}
	return {
		date: new Date().toISOString(),
		node: process.version,
		platform: `${process.platform} ${process.arch}`,
		nproc: tryRun("nproc", []) ?? String(cpus().length),
		cpuModel,
		memGiB: (totalmem() / 2 ** 30).toFixed(1),
		tmpFs: dirForFs
			? (tryRun("findmnt", ["-n", "-o", "FSTYPE", "-T", dirForFs]) ??
				tryRun("stat", ["-f", "-c", "%T", dirForFs]) ??
				"unknown")
			: "unknown",
		loadAvg: loadavg()
			.map((l) => l.toFixed(2))
			.join(" "),
		rg: tryRun("rg", ["--version"])?.split("\n")[0] ?? "not found",
		keel: keelVersion(),
		pi: packageVersion("@mariozechner/pi-coding-agent") ?? "not installed",
	};
}

/** Throw with a readable message when a sanity check fails (run before any timing). */
export function assert(cond, message) {
	if (!cond) throw new Error(`bench sanity check failed: ${message}`);
}

/** The text parts of a tool result's content, joined. */
export function textOf(result) {
	return (result.content ?? [])
		.filter((c) => c.type === "text")
		.map((c) => c.text)
		.join("\n");
}

/** One process: resolves with its stdout, rejects on a non-zero exit (`label` names it). */
export function spawnOutput(command, args, stdin, label = command) {
	return new Promise((resolvePromise, reject) => {
		const child = spawn(command, args, { stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"] });
		const out = [];
		const err = [];
		child.stdout.on("data", (c) => out.push(c));
		child.stderr.on("data", (c) => err.push(c));
		child.on("error", reject);
		child.on("close", (code) =>
			code === 0
				? resolvePromise(Buffer.concat(out))
				: reject(new Error(`${label} failed (${code}): ${Buffer.concat(err).toString()}`)),
		);
		if (stdin) child.stdin.end(stdin);
	});
}

/** ~2 KB of code-like text with one `value = 41` line (the remote cases' small file). */
export function smallText() {
	const lines = [];
	for (let i = 0; i < 40; i++) {
		lines.push(
			i === 20
				? "export const value = 41; // the line the edit changes"
				: `// ${i} lorem ipsum dolor sit amet`,
		);
	}
	return `${lines.join("\n")}\n`;
}

/** Edits toggling `value = 41` and `value = 42`, so every call makes one real change. */
export function toggler() {
	let cur = "41";
	return () => {
		const next = cur === "41" ? "42" : "41";
		const edit = { oldText: `value = ${cur};`, newText: `value = ${next};` };
		cur = next;
		return edit;
	};
}

/**
 * Run an area module on its own (`node bench/cases-X.mjs [--quick]`): its cases in order, the
 * comparison table (and its report, when it has one) on stdout, progress on stderr.
 */
export async function runAreaStandalone(mod, argv = process.argv) {
	const quick = argv.includes("--quick");
	// --iterations=N: every case N times (a loaded machine where the peer takes seconds per call).
	const fixed = Number(argv.find((a) => a.startsWith("--iterations="))?.slice("--iterations=".length));
	const dir = mkdtempSync(join(tmpdir(), `keel-bench-${mod.area}-`));
	try {
		const { cases, teardown } = await mod.setup({ dir });
		const results = [];
		try {
			for (const c of cases) {
				await c.check?.();
				let iterations = quick ? Math.max(3, Math.round(c.iterations / 10)) : c.iterations;
				if (fixed > 0) iterations = fixed;
				const started = Date.now();
				results.push(await compare({ ...c, iterations, warmup: quick ? 1 : c.warmup }));
				c.after?.();
				process.stderr.write(`[${mod.area}] ${c.name}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
			}
		} finally {
			await teardown();
		}
		const table = comparisonTable(results, { candidate: mod.candidate, baseline: mod.baseline });
		const extra = mod.report ? `\n${await mod.report()}\n` : "";
		process.stdout.write(`### ${mod.title}\n\n${table}\n${extra}`);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
