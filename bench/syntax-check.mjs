/**
 * What the syntax check adds to an edit: `edit` calls on a 40-line and a 2,000-line TypeScript and
 * Python file, in a session with the check on ("report") and one with it off, p50 and p95 of each
 * and the difference (what the check adds). Four situations of an edit:
 *   cold       the file's first change, never read in the session (the check parses it whole);
 *   read       the file's first change after a read whose parse made ahead has finished (a model
 *              takes seconds between a read and an edit);
 *   read+0     the first change sent the moment the read answered (the edit waits for that parse);
 *   next       a later change of the same file (the tree of the last change is kept);
 *   broken     as cold, in a file that already has a syntax error (its old text is parsed too).
 * Every sample is a new file (distinct text: trees are kept by content) except for "next".
 * The grammar's one-time load (the first check in the process) is reported apart.
 * Goal: under 5 ms added to an edit of a 2,000-line file.
 *
 * Run after `npm run build`: node bench/syntax-check.mjs [N=30] [LINES] [KINDS]
 * (LINES: only files of that size; KINDS: only these situations, comma-separated, e.g. cold,next).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";

const N = Number(process.argv[2] ?? 30);
const SIZES = process.argv[3] ? [Number(process.argv[3])] : [40, 2000];
const KINDS = process.argv[4] ? process.argv[4].split(",") : ["cold", "read", "read+0", "next", "broken"];
const { createSession } = await import(new URL("../dist/index.js", import.meta.url).href);

const UNITS = {
	ts: (k) =>
		`export function f${k}(a: number, b: string): string {\n  const x = a + ${k};\n  return b.repeat(x) + "${k}";\n}\n`,
	py: (k) => `def f${k}(a, b):\n    x = a + ${k}\n    return b * x\n\n`,
};

/** A line with a syntax error, for a file that is already broken. */
const BROKEN_LINE = { ts: "const broken = ;\n", py: "broken = = 1\n" };

/** A file of about `lines` lines; `tag` makes its text unique. */
function source(ext, lines, tag) {
	let text = ext === "ts" ? `// ${tag}\n` : `# ${tag}\n`;
	for (let k = 0; text.split("\n").length <= lines; k++) text += UNITS[ext](k);
	return text;
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const ms = (x) => x.toFixed(1);

/** Sample `k`'s edit: one number near the middle of the file, from `from` (default: the unit there). */
function middleEdit(ext, lines, k, from) {
	const end = ext === "ts" ? ";" : "\n";
	return {
		oldText: `x = a + ${from ?? Math.floor(lines / 8)}${end}`,
		newText: `x = a + ${100000 + k}${end}`,
	};
}

async function until(cond) {
	for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
}

/** Wall-clock and CPU (user + system, every thread) milliseconds of `fn`. */
async function measure(fn) {
	const cpu = process.cpuUsage();
	const t = performance.now();
	await fn();
	const wall = performance.now() - t;
	const used = process.cpuUsage(cpu);
	return { wall, cpu: (used.user + used.system) / 1000 };
}

/**
 * N edits in one situation, in a session with the check off and one with it on, taken in turn
 * (which goes first alternates) so that the machine's load falls on both alike.
 */
async function situation(ext, lines, kind) {
	const sessions = {};
	for (const mode of ["off", "report"]) {
		const root = mkdtempSync(join(tmpdir(), "keel-syntax-bench-"));
		sessions[mode] = { root, s: await createSession({ root, check: mode }), wall: [], cpu: [] };
	}
	const edit = async (s, path, e) => {
		const r = await s.call("edit", { path, edits: [e] });
		if (!r.ok) throw new Error(JSON.stringify(r.error));
	};
	const sample = async ({ root, s }, mode, k) => {
		const path = `f${k + 2}.${ext}`;
		const text = source(ext, lines, `${mode} ${kind} ${k}`);
		writeFileSync(join(root, path), kind === "broken" ? `${BROKEN_LINE[ext]}${text}` : text);
		const first = middleEdit(ext, lines, k);
		if (kind === "cold" || kind === "broken") return measure(() => edit(s, path, first));
		if (kind === "next") {
			await edit(s, path, first);
			return measure(() => edit(s, path, middleEdit(ext, lines, k + 100000, 100000 + k)));
		}
		const ahead = s.syntax.parses?.ahead;
		const read = await s.call("read", { path });
		if (!read.ok) throw new Error(JSON.stringify(read.error));
		// A build without parses made ahead (an older keel) has nothing to wait for.
		if (kind === "read" && mode !== "off" && ahead !== undefined)
			await until(() => s.syntax.parses.ahead > ahead);
		return measure(() => edit(s, path, first));
	};
	// Two samples warm the code paths first; they are not counted.
	for (let k = -2; k < N; k++) {
		const order = k % 2 === 0 ? ["off", "report"] : ["report", "off"];
		for (const mode of order) {
			const m = await sample(sessions[mode], mode, k);
			if (k < 0) continue;
			sessions[mode].wall.push(m.wall);
			sessions[mode].cpu.push(m.cpu);
		}
	}
	for (const { root, s } of Object.values(sessions)) {
		await s.close();
		rmSync(root, { recursive: true, force: true });
	}
	return { off: sessions.off, on: sessions.report };
}

/** The grammar's one-time load: the first checked edit in a fresh session of this process. */
async function firstLoad(ext) {
	const root = mkdtempSync(join(tmpdir(), "keel-syntax-bench-"));
	const s = await createSession({ root });
	writeFileSync(join(root, `a.${ext}`), source(ext, 40, "load"));
	const t = performance.now();
	await s.call("edit", { path: `a.${ext}`, edits: [middleEdit(ext, 40, 0)] });
	const took = performance.now() - t;
	await s.close();
	rmSync(root, { recursive: true, force: true });
	return took;
}

console.log(
	`syntax check cost, ${N} samples per cell, ms (node ${process.version}, load ${loadavg()[0].toFixed(1)})`,
);
console.log("");
console.log(
	"| file | lines | edit | wall off p50 / p95 | wall on p50 / p95 | wall added p50 | cpu off p50 / p95 | cpu on p50 / p95 | cpu added p50 / p95 |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
const loads = [];
const cell = (xs) => `${ms(pct(xs, 0.5))} / ${ms(pct(xs, 0.95))}`;
for (const ext of ["ts", "py"]) {
	loads.push(`.${ext} ${ms(await firstLoad(ext))}`);
	for (const lines of SIZES) {
		for (const kind of KINDS) {
			const { off, on } = await situation(ext, lines, kind);
			const added = (xs, ys, p) => ms(pct(ys, p) - pct(xs, p));
			console.log(
				`| .${ext} | ${lines} | ${kind} | ${cell(off.wall)} | ${cell(on.wall)} | ${added(off.wall, on.wall, 0.5)} | ${cell(off.cpu)} | ${cell(on.cpu)} | ${added(off.cpu, on.cpu, 0.5)} / ${added(off.cpu, on.cpu, 0.95)} |`,
			);
		}
	}
}
console.log("");
console.log(`First checked edit in the process (grammar load included), wall: ${loads.join(", ")}`);
