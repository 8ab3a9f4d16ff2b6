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
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
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
	// A contender marked `floor: true` is what the hardware allows (no tool layer): its own column.
	const floor = contenders.find((c) => c.floor)?.label;
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
 * The comparison table: median and p95 per contender and the candidate/baseline ratio of medians.
 * @param {Awaited<ReturnType<typeof compare>>[]} results
 * @param {{candidate: string, baseline: string}} labels
 */
export function comparisonTable(results, { candidate, baseline }) {
	const header = [
		"case",
		"N",
		`${candidate} median (ms)`,
		`${candidate} p95 (ms)`,
		`${baseline} median (ms)`,
		`${baseline} p95 (ms)`,
		`${candidate}/${baseline} (median)`,
	];
	const rows = results.map((r) => {
		const none = { median: Number.NaN, p95: Number.NaN };
		const a = r.stats[candidate] ?? none;
		const b = r.stats[baseline] ?? none;
		return [
			r.gcEach ? `${r.name} †` : r.name,
			String(r.iterations),
			fmtMs(a.median),
			fmtMs(a.p95),
			fmtMs(b.median),
			fmtMs(b.p95),
			fmtRatio(a.median / b.median),
		];
	});
	if (results.some((r) => r.floor)) {
		header.push("floor median (ms)", `${candidate}/floor (median)`);
		results.forEach((r, i) => {
			const f = r.floor ? r.stats[r.floor] : undefined;
			const a = r.stats[candidate];
			rows[i].push(f ? `${fmtMs(f.median)} (${r.floor})` : "", f && a ? fmtRatio(a.median / f.median) : "");
		});
	}
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
