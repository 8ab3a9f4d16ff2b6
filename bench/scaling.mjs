/**
 * Cost as work grows: time and peak memory of read and edit against file size (1 KB … 100 MB),
 * and of grep and find against tree size (1,000 … 200,000 files), keel, pi 0.73.1 and the floor
 * on the same log-log axes. `npm run bench:scaling` (after `npm run build`).
 *
 * Options:
 *   --quick       fewer, smaller points and iterations: a smoke run, not numbers to publish
 *   --out=DIR     where the PNGs go (default docs/bench)
 *   --json=FILE   also write the raw numbers as JSON
 *
 * Every (operation, size, contender) is measured in a fresh child process (bench/scaling-point.mjs)
 * so a point's heap and peak RSS are its own; the contenders of one point run back to back, their
 * order rotating from point to point. The fixtures live in a temp dir removed at the end.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fmtMs, fmtRatio, machineInfo, markdownTable, summarize } from "./lib.mjs";
import { renderChart } from "./scaling-plot.mjs";

const FULL = {
	files: [1e3, 1e5, 1e6, 1e7, 1e8],
	trees: [1_000, 10_000, 50_000, 200_000],
};
const QUICK = { files: [1e3, 1e5, 1e6], trees: [1_000, 10_000] };
const CONTENDERS = ["keel", "pi", "floor"];
const LOREM = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut";
const NEEDLES = 10;

/** Iterations (and warmup calls) for a point: fewer as the work grows, so the run stays bounded. */
function iterationsFor(op, size, quick) {
	const big = op === "read" || op === "edit" ? size / 1e6 : size / 10_000;
	const [iterations, warmup] = big >= 100 ? [3, 1] : big >= 10 ? [5, 1] : big >= 1 ? [10, 2] : [30, 5];
	return quick ? { iterations: Math.max(3, Math.ceil(iterations / 3)), warmup: 1 } : { iterations, warmup };
}

function parseArgs(argv) {
	const opts = { quick: false, out: "docs/bench", json: undefined };
	for (const a of argv) {
		if (a === "--quick") opts.quick = true;
		else if (a.startsWith("--out=")) opts.out = a.slice("--out=".length);
		else if (a.startsWith("--json=")) opts.json = a.slice("--json=".length);
		else {
			console.error(`unknown option ${a}`);
			process.exit(2);
		}
	}
	return opts;
}

/** About `bytes` of ~100-byte lines with the one line the edit toggles in the middle. */
function fileOf(bytes) {
	const line = (i) => `${String(i).padStart(8, "0")}: ${LOREM}`;
	const n = Math.max(3, Math.round(bytes / (line(0).length + 1)));
	const lines = Array.from({ length: n }, (_, i) =>
		i === n >> 1 ? "export const value = 41; // the line the edit changes" : line(i),
	);
	return `${lines.join("\n")}\n`;
}

/**
 * Nested trees: level k holds level k-1 plus enough new files (100 a directory) to reach
 * sizes[k] files, so one tree on disk serves every size. The innermost level holds the NEEDLES
 * files (named needle-N.js, containing NEEDLE_RARE) that grep and find must report at every size.
 * @returns {string[]} the path of each level, relative to root
 */
function makeTrees(root, sizes) {
	const paths = [];
	let made = 0;
	let rel = "";
	for (let k = sizes.length - 1; k >= 0; k--) rel = rel ? `${rel}/t${sizes[k]}` : `t${sizes[k]}`;
	for (let k = 0; k < sizes.length; k++) {
		const levelRel = rel
			.split("/")
			.slice(0, sizes.length - k)
			.join("/");
		paths.push(levelRel);
		let dirIndex = 0;
		while (made < sizes[k]) {
			const dir = join(root, levelRel, `d${String(dirIndex++).padStart(4, "0")}`);
			mkdirSync(dir, { recursive: true });
			for (let f = 0; f < 100 && made < sizes[k]; f++, made++) {
				const needle = k === 0 && made < NEEDLES;
				const name = needle ? `needle-${made}.js` : `f${String(f).padStart(3, "0")}.js`;
				const body = `// file ${made}\nexport function f${made}(x) {\n\treturn x + ${made}; // common_marker\n}\n`;
				writeFileSync(join(dir, name), needle ? `${body}// NEEDLE_RARE ${made}\n` : body);
			}
		}
	}
	return paths;
}

/** pi 0.73.1 passes fd --no-require-git (fd ≥ 8.7); where only an older fd is installed it gets
 * a shim in pi's own tool dir that drops that flag (the trees have no .gitignore: no effect). */
function fdForPi(agentDir, fd) {
	const help = spawnSync(fd, ["--help"], { encoding: "utf8" }).stdout ?? "";
	if (help.includes("--no-require-git")) return "native";
	mkdirSync(join(agentDir, "bin"), { recursive: true });
	const shim = join(agentDir, "bin", "fd");
	writeFileSync(
		shim,
		`#!/bin/sh\nfor a do shift; [ "$a" = --no-require-git ] || set -- "$@" "$a"; done\nexec ${fd} "$@"\n`,
	);
	chmodSync(shim, 0o755);
	return "shim";
}

/** Run one point in a fresh process; a point killed by a signal (not one that failed) runs once more. */
function measure(point, env, log) {
	for (let attempt = 1; ; attempt++) {
		const child = spawnSync(
			process.execPath,
			["--expose-gc", "bench/scaling-point.mjs", JSON.stringify(point)],
			{
				encoding: "utf8",
				env,
				maxBuffer: 1 << 24,
			},
		);
		if (child.status === 0) return JSON.parse(child.stdout.trim().split("\n").pop());
		const what = `${point.tool} ${point.op} ${point.path}: ${child.signal ? `killed by ${child.signal}` : `exit ${child.status}`}`;
		if (child.signal && attempt === 1) {
			log(`${what}; running that point again`);
			continue;
		}
		throw new Error(`${what}\n${child.stderr}`);
	}
}

const MB = 1e6;
const sizeLabel = (op, size) =>
	op === "read" || op === "edit"
		? size >= MB
			? `${size / MB} MB`
			: `${size / 1e3} KB`
		: `${size.toLocaleString("en-US")} files`;

/** Memory added per byte of file; under 1 MB page granularity and heap slack make it noise. */
function perByte(k, p, size) {
	if (size < MB) return "–";
	const x = (by) => `${((by.addedMB * MB) / size).toFixed(1)}×`;
	return `${x(k)} / ${x(p)}`;
}

function tables(results, ops) {
	const out = [];
	for (const op of ops) {
		const fileOp = op === "read" || op === "edit";
		const rows = results
			.filter((r) => r.op === op)
			.map((r) => {
				const k = r.by.keel;
				const p = r.by.pi;
				const f = r.by.floor;
				return [
					sizeLabel(op, r.size),
					String(k.n),
					fmtMs(k.median),
					fmtMs(p.median),
					fmtMs(f.median),
					fmtRatio(k.median / p.median),
					fmtRatio(k.median / f.median),
					k.peakMB.toFixed(0),
					p.peakMB.toFixed(0),
					f.peakMB.toFixed(0),
					`${k.addedMB.toFixed(0)} / ${p.addedMB.toFixed(0)}`,
					...(fileOp ? [perByte(k, p, r.size)] : []),
				];
			});
		out.push(
			`#### ${op}\n\n${markdownTable(
				[
					"size",
					"N",
					"keel median (ms)",
					"pi median (ms)",
					"floor median (ms)",
					"keel/pi",
					"keel/floor",
					"keel peak RSS (MB)",
					"pi peak RSS (MB)",
					"floor peak RSS (MB)",
					"added by the call, keel / pi (MB)",
					...(fileOp ? ["added ÷ file size, keel / pi"] : []),
				],
				rows,
			)}`,
		);
	}
	return out.join("\n\n");
}

async function charts(results, outDir, stamp) {
	mkdirSync(outDir, { recursive: true });
	const written = [];
	const groups = [
		{ ops: ["read", "edit"], xTitle: "file size (bytes)", file: "file" },
		{ ops: ["grep", "find"], xTitle: "files in the tree", file: "tree" },
	];
	for (const g of groups)
		for (const op of g.ops)
			for (const measureName of ["time", "memory"]) {
				const points = results
					.filter((r) => r.op === op)
					.flatMap((r) =>
						CONTENDERS.map((c) => ({
							x: r.size,
							y: measureName === "time" ? r.by[c].median : r.by[c].peakMB,
							contender: c,
						})),
					);
				const rg = op === "grep" || op === "find" ? " (node process; rg/fd not counted)" : "";
				const { png } = await renderChart({
					title: `${op}: ${measureName === "time" ? "median time" : "peak RSS of one call"} (${stamp})`,
					xTitle: g.xTitle,
					yTitle: measureName === "time" ? "median ms" : `peak RSS, MB${rg}`,
					points,
				});
				const file = join(outDir, `scaling-${op}-${measureName}.png`);
				writeFileSync(file, png);
				written.push(file);
			}
	return written;
}

async function main() {
	const opts = parseArgs(process.argv.slice(2));
	const plan = opts.quick ? QUICK : FULL;
	const root = mkdtempSync(join(tmpdir(), "keel-scaling-"));
	const cleanup = () => rmSync(root, { recursive: true, force: true });
	for (const sig of ["SIGINT", "SIGTERM"])
		process.on(sig, () => {
			cleanup();
			process.exit(130);
		});
	const log = (m) => process.stderr.write(`${m}\n`);
	try {
		const work = join(root, "work");
		mkdirSync(work);
		const agentDir = join(root, "pi-agent");
		const fd = ["fd", "fdfind"].find((n) => spawnSync(n, ["--version"]).status === 0);
		if (!fd) throw new Error("fd (or fdfind) is needed on PATH for the find points");
		const fdMode = fdForPi(agentDir, fd);
		const env = { ...process.env, PI_OFFLINE: "1", PI_CODING_AGENT_DIR: agentDir };
		const info = machineInfo(work);
		const loadStart = execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim();
		const t0 = Date.now();

		log("making fixtures …");
		const jobs = [];
		for (const size of plan.files) {
			const text = fileOf(size);
			for (const op of ["read", "edit"]) {
				writeFileSync(join(work, `${op}-${size}.txt`), text);
				jobs.push({ op, size, path: `${op}-${size}.txt` });
			}
		}
		const treePaths = makeTrees(work, plan.trees);
		plan.trees.forEach((size, k) => {
			jobs.push({ op: "grep", size, path: treePaths[k], pattern: "NEEDLE_RARE" });
			jobs.push({ op: "find", size, path: treePaths[k], pattern: "needle-*.js" });
		});
		log(`fixtures made in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

		const results = [];
		jobs.forEach((job, index) => {
			const { iterations, warmup } = iterationsFor(job.op, job.size, opts.quick);
			const gcEach = (job.op === "read" || job.op === "edit") && job.size >= MB;
			const order = CONTENDERS.map((_, i) => CONTENDERS[(i + index) % CONTENDERS.length]);
			const by = {};
			for (const tool of order) {
				const r = measure({ ...job, tool, root: work, fd, iterations, warmup, gcEach }, env, log);
				by[tool] = {
					...summarize(r.samples),
					peakMB: r.rssPeak / MB,
					addedMB: Math.max(0, r.rssPeak - r.rssBefore) / MB,
					peakReset: r.peakReset,
					signature: r.signature,
				};
			}
			const sigs = new Set(CONTENDERS.map((c) => by[c].signature));
			if (sigs.size !== 1)
				throw new Error(
					`${job.op} ${sizeLabel(job.op, job.size)}: the contenders gave different answers (${CONTENDERS.map((c) => `${c} ${by[c].signature}`).join(", ")})`,
				);
			results.push({ ...job, by });
			log(
				`${job.op} ${sizeLabel(job.op, job.size)}: keel ${fmtMs(by.keel.median)} ms, pi ${fmtMs(by.pi.median)} ms, floor ${fmtMs(by.floor.median)} ms`,
			);
		});

		const loadEnd = execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim();
		const seconds = ((Date.now() - t0) / 1000).toFixed(0);
		const stamp = `${info.date.slice(0, 10)}, keel ${info.keel}`;
		const written = await charts(results, opts.out, stamp);
		const md = [
			`### Cost as work grows${opts.quick ? " (--quick)" : ""}`,
			"",
			`\`npm run bench:scaling${opts.quick ? " -- --quick" : ""}\`, ${info.date}, keel ${info.keel}, pi ${info.pi}, node ${info.node}, ${info.nproc} × ${info.cpuModel}, ${info.tmpFs} temp dir, ${info.rg}, ${fd}${fdMode === "shim" ? " (pi's through a shim that drops --no-require-git)" : ""}; ${seconds} s in all.`,
			`Load average (/proc/loadavg) at the start: ${loadStart}; at the end: ${loadEnd}. The machine was shared with other work: read the ratios, not the absolute times.`,
			"",
			tables(results, ["read", "edit", "grep", "find"]),
			"",
			`Charts: ${written.join(", ")}`,
		].join("\n");
		console.log(md);
		if (opts.json)
			writeFileSync(opts.json, `${JSON.stringify({ info, loadStart, loadEnd, results }, null, 2)}\n`);
	} finally {
		cleanup();
	}
}

await main();
