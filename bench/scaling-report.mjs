/**
 * The scaling bench's output (bench/scaling.mjs): the markdown tables and header of a run, and
 * its charts as PNG files (bench/scaling-plot.mjs). Separate from the measuring so a run saved
 * with --json can be drawn again with --from-json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fmtMs, fmtRatio, markdownTable } from "./lib.mjs";
import { renderChart } from "./scaling-plot.mjs";

export const CONTENDERS = ["keel", "pi", "floor"];
export const MB = 1e6;
export const sizeLabel = (op, size) =>
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

/** The markdown section for a run (header with command, date, commit, load; tables) after
 * writing its charts to outDir. */
export async function report(run, outDir) {
	const { info, quick, fd, fdMode } = run;
	const stamp = `${info.date.slice(0, 10)}, keel ${info.keel}`;
	const written = await charts(run.results, outDir, stamp);
	const command = `npm run bench:scaling${quick ? " -- --quick" : ""}`;
	const shim = fdMode === "shim" ? " (pi's through a shim that drops --no-require-git)" : "";
	return [
		`### Cost as work grows${quick ? " (--quick)" : ""}`,
		"",
		`\`${command}\`, ${info.date}, keel ${info.keel}, pi ${info.pi}, node ${info.node}, ${info.nproc} × ${info.cpuModel}, ${info.tmpFs} temp dir, ${info.rg}, ${fd}${shim}; ${run.seconds} s in all.`,
		`Load average (/proc/loadavg) at the start: ${run.loadStart}; at the end: ${run.loadEnd}. The machine was shared with other work: read the ratios, not the absolute times.`,
		"",
		tables(run.results, ["read", "edit", "grep", "find"]),
		"",
		`Charts: ${written.join(", ")}`,
	].join("\n");
}
