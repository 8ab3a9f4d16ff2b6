/**
 * What the syntax check adds to an edit. For a small (40-line) and a large (2,000-line) TypeScript
 * and Python file: the check alone (SyntaxCheck.file) on one changed line, warm (the session kept
 * the file's tree from its previous change: an incremental parse) and cold (the file's first
 * change: a whole parse); and a whole `edit` call with the check off and on (medians). The
 * grammar's one-time load is reported apart. Goal: under 5 ms for the warm check of a 2,000-line file.
 *
 * Run after `npm run build`: node bench/syntax-check.mjs [N=40]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const N = Number(process.argv[2] ?? 40);
const { Session } = await import(new URL("../dist/index.js", import.meta.url).href);
const { SyntaxCheck } = await import(new URL("../dist/syntax/check.js", import.meta.url).href);

const UNITS = {
	ts: (k) =>
		`export function f${k}(a: number, b: string): string {\n  const x = a + ${k};\n  return b.repeat(x) + "${k}";\n}\n`,
	py: (k) => `def f${k}(a, b):\n    x = a + ${k}\n    return b * x\n\n`,
};

function source(ext, lines) {
	let text = "";
	for (let k = 0; text.split("\n").length <= lines; k++) text += UNITS[ext](k);
	return text;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => x.toFixed(2);

/** The check alone: the k-th edit changes one number in the middle of the file. */
async function checkOnly(ext, text) {
	const mid = Math.floor(text.length / 2);
	const at = text.indexOf("+ ", mid) + 2;
	const variant = (k) => `${text.slice(0, at)}${k}${text.slice(at)}`;
	const check = new SyntaxCheck();
	let t = performance.now();
	await check.file({ path: `x.${ext}`, key: "load", before: undefined, after: "x" });
	const load = performance.now() - t;
	const cold = [];
	const warm = [];
	for (let k = 0; k < N; k++) {
		const key = `f${k}`;
		t = performance.now();
		await check.file({ path: `x.${ext}`, key, before: text, after: variant(k) });
		cold.push(performance.now() - t);
		t = performance.now();
		await check.file({ path: `x.${ext}`, key, before: variant(k), after: variant(k + 1) });
		warm.push(performance.now() - t);
	}
	check.close();
	return { load, cold: median(cold), warm: median(warm) };
}

/** A whole edit call, N times on one file, with the check `mode`. */
async function editCalls(ext, text, mode) {
	const root = mkdtempSync(join(tmpdir(), "keel-syntax-bench-"));
	const s = await Session.create({ root, check: mode });
	const path = `f.${ext}`;
	writeFileSync(join(root, path), text);
	const times = [];
	const end = ext === "ts" ? ";" : "\n";
	let cur = `x = a + 7${end}`;
	for (let k = 0; k < N + 2; k++) {
		const next = `x = a + ${k + 100000}${end}`;
		const t = performance.now();
		const r = await s.call("edit", { path, edits: [{ oldText: cur, newText: next }] });
		if (!r.ok) throw new Error(JSON.stringify(r.error));
		if (k >= 2) times.push(performance.now() - t);
		cur = next;
	}
	await s.close();
	rmSync(root, { recursive: true, force: true });
	return median(times);
}

console.log(`syntax check, ${N} samples each (medians, ms)`);
console.log(
	"| file | lines | grammar load | check, first change (whole parse) | check, next change (incremental) | edit, check off | edit, check on |",
);
console.log("|---|---|---|---|---|---|---|");
for (const ext of ["ts", "py"]) {
	for (const lines of [40, 2000]) {
		const text = source(ext, lines);
		const c = await checkOnly(ext, text);
		const off = await editCalls(ext, text, "off");
		const on = await editCalls(ext, text, "report");
		console.log(
			`| .${ext} | ${lines} | ${ms(c.load)} | ${ms(c.cold)} | ${ms(c.warm)} | ${ms(off)} | ${ms(on)} |`,
		);
	}
}
