/**
 * Cost as work grows: time and peak memory of read and edit against file size (1 KB … 100 MB),
 * and of grep and find against tree size (1,000 … 200,000 files), keel, pi 0.73.1 and the floor
 * on the same log-log axes. `npm run bench:scaling` (after `npm run build`).
 *
 * Options:
 *   --quick       fewer, smaller points and iterations: a smoke run, not numbers to publish
 *   --out=DIR     where the PNGs go (default docs/bench)
 *   --json=FILE   also write the raw numbers as JSON
 *   --from-json=FILE  measure nothing: redraw the charts and tables of a run saved with --json
 *
 * Every (operation, size, contender) is measured in a fresh child process (bench/scaling-point.mjs)
 * so a point's heap and peak RSS are its own; the contenders of one point run back to back, their
 * order rotating from point to point. The fixtures live in a temp dir removed at the end.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fmtMs, machineInfo, summarize } from "./lib.mjs";
import { CONTENDERS, MB, report, sizeLabel } from "./scaling-report.mjs";

const FULL = {
	files: [1e3, 1e5, 1e6, 1e7, 1e8],
	trees: [1_000, 10_000, 50_000, 200_000],
};
const QUICK = { files: [1e3, 1e5, 1e6], trees: [1_000, 10_000] };
const LOREM = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut";
const NEEDLES = 10;

/** Iterations (and warmup calls) for a point: fewer as the work grows, so the run stays bounded. */
function iterationsFor(op, size, quick) {
	const big = op === "read" || op === "edit" ? size / 1e6 : size / 10_000;
	const [iterations, warmup] = big >= 100 ? [3, 1] : big >= 10 ? [5, 1] : big >= 1 ? [10, 2] : [30, 5];
	return quick ? { iterations: Math.max(3, Math.ceil(iterations / 3)), warmup: 1 } : { iterations, warmup };
}

function parseArgs(argv) {
	const opts = { quick: false, out: "docs/bench", json: undefined, fromJson: undefined };
	for (const a of argv) {
		if (a === "--quick") opts.quick = true;
		else if (a.startsWith("--out=")) opts.out = a.slice("--out=".length);
		else if (a.startsWith("--json=")) opts.json = a.slice("--json=".length);
		else if (a.startsWith("--from-json=")) opts.fromJson = a.slice("--from-json=".length);
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

const log = (m) => process.stderr.write(`${m}\n`);

/** The point's child while one runs, so a SIGINT/SIGTERM of the bench ends it too. */
const running = { child: undefined, stopping: false };

/** One run of scaling-point.mjs: its exit status or signal, stdout and stderr. */
function runPoint(point, env) {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, ["--expose-gc", "bench/scaling-point.mjs", JSON.stringify(point)], {
			env,
			stdio: ["ignore", "pipe", "pipe"],
		});
		running.child = child;
		const out = [];
		const err = [];
		child.stdout.on("data", (d) => out.push(d));
		child.stderr.on("data", (d) => err.push(d));
		child.on("error", reject);
		child.on("close", (status, signal) => {
			running.child = undefined;
			resolve({
				status,
				signal,
				stdout: Buffer.concat(out).toString(),
				stderr: Buffer.concat(err).toString(),
			});
		});
	});
}

/** Run one point in a fresh process; a point killed by a signal from elsewhere runs once more. */
async function measure(point, env) {
	for (let attempt = 1; ; attempt++) {
		const child = await runPoint(point, env);
		if (child.status === 0) return JSON.parse(child.stdout.trim().split("\n").pop());
		const what = `${point.tool} ${point.op} ${point.path}: ${child.signal ? `killed by ${child.signal}` : `exit ${child.status}`}`;
		if (child.signal && attempt === 1 && !running.stopping) {
			log(`${what}; running that point again`);
			continue;
		}
		throw new Error(`${what}\n${child.stderr}`);
	}
}

/** Make the fixtures, measure every point, remove the fixtures. */
async function measureAll(opts) {
	const plan = opts.quick ? QUICK : FULL;
	const root = mkdtempSync(join(tmpdir(), "keel-scaling-"));
	const cleanup = () => rmSync(root, { recursive: true, force: true, maxRetries: 3 });
	for (const sig of ["SIGINT", "SIGTERM"])
		process.on(sig, () => {
			running.stopping = true;
			running.child?.kill("SIGKILL");
			cleanup();
			process.exit(130);
		});
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
		for (const [index, job] of jobs.entries()) {
			const { iterations, warmup } = iterationsFor(job.op, job.size, opts.quick);
			const gcEach = (job.op === "read" || job.op === "edit") && job.size >= MB;
			const order = CONTENDERS.map((_, i) => CONTENDERS[(i + index) % CONTENDERS.length]);
			const by = {};
			for (const tool of order) {
				const r = await measure({ ...job, tool, root: work, fd, iterations, warmup, gcEach }, env);
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
		}

		const loadEnd = execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim();
		const seconds = Math.round((Date.now() - t0) / 1000);
		return { info, loadStart, loadEnd, seconds, fd, fdMode, quick: opts.quick, results };
	} finally {
		cleanup();
	}
}

const opts = parseArgs(process.argv.slice(2));
const run = opts.fromJson ? JSON.parse(readFileSync(opts.fromJson, "utf8")) : await measureAll(opts);
if (opts.json && !opts.fromJson) writeFileSync(opts.json, `${JSON.stringify(run, null, 2)}\n`);
console.log(await report(run, opts.out));
