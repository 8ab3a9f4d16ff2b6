/**
 * What a library user pays before the first tool call, each run in a fresh Node process:
 * `import("keel")`, opening a local session on a temp directory, and one `read` call. Beside it,
 * two floors timed the same way: a Node process that does nothing (`node -e ''`), and one that
 * imports only `node:fs`. The three kinds of process are interleaved (the order rotates every
 * round), so machine noise lands on all of them.
 *
 * Per measure: median and p95 of the wall time over N processes; "process" is the whole child,
 * spawn to exit, as the parent sees it. "cpu" is the child's user + system time up to the end of
 * the first call (steadier than wall time on a shared machine). Every child gets an empty state
 * directory (XDG_STATE_HOME), so what other runs left in ~/.local/state/keel is not in the numbers.
 *
 * Run: node bench/startup.mjs [--n=30] [--entry=dist/index.js] [--modules]   (after `npm run build`)
 * Compare two builds by passing another checkout's dist/index.js as --entry. --modules also lists
 * how many ES modules each phase loads (through a loader hook, which slows those runs: their
 * times are not reported).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { machineInfo, markdownTable, percentile } from "./lib.mjs";

const args = Object.fromEntries(
	process.argv.slice(2).map((a) => {
		const [k, v] = a.replace(/^--/, "").split("=");
		return [k, v ?? "true"];
	}),
);
const N = Number(args.n ?? 30);
const entry = pathToFileURL(
	resolve(args.entry ?? new URL("../dist/index.js", import.meta.url).pathname),
).href;

// One keel child: times around the import, the session open and the first call, as JSON.
const keelChild = `
const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const t0 = performance.now();
const keel = await import(${JSON.stringify(entry)});
const t1 = performance.now();
const session = await keel.createSession({ root: process.cwd() });
const t2 = performance.now();
const r = await session.call("read", { path: "a.txt" });
const t3 = performance.now();
if (!r.ok) throw new Error(JSON.stringify(r.error));
const c = cpu();
await session.close();
console.log(JSON.stringify({ import: t1 - t0, open: t2 - t1, call: t3 - t2, total: t3 - t0, cpu: c }));
`;
const fsChild = `
const t0 = performance.now();
await import("node:fs");
console.log(JSON.stringify({ import: performance.now() - t0 }));
`;

const work = mkdtempSync(join(tmpdir(), "keel-startup-"));
writeFileSync(join(work, "a.txt"), "alpha\nbeta\n");

function runChild(code) {
	const state = mkdtempSync(join(tmpdir(), "keel-startup-state-"));
	try {
		const t0 = performance.now();
		const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
			cwd: work,
			encoding: "utf8",
			env: { ...process.env, XDG_STATE_HOME: state },
		});
		const wall = performance.now() - t0;
		if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
		return { ...(code ? JSON.parse(r.stdout) : {}), process: wall };
	} finally {
		rmSync(state, { recursive: true, force: true });
	}
}

/** How many ES modules the import, the open and the call each load (one run, with a loader hook). */
function countModules() {
	const hookDir = mkdtempSync(join(tmpdir(), "keel-startup-hook-"));
	try {
		// The hook runs off-thread: it reports each module through the port given at registration.
		writeFileSync(
			join(hookDir, "hook.mjs"),
			"let port; export function initialize(d) { port = d.port; }\nexport async function load(url, context, next) { const r = await next(url, context); if (!url.startsWith('node:')) port.postMessage(url); return r; }\n",
		);
		writeFileSync(
			join(hookDir, "register.mjs"),
			`import { register } from "node:module"; const { port1, port2 } = new MessageChannel();
globalThis.keelLoaded = 0; port1.on("message", () => globalThis.keelLoaded++); port1.unref();
register(${JSON.stringify(pathToFileURL(join(hookDir, "hook.mjs")).href)}, { data: { port: port2 }, transferList: [port2] });\n`,
		);
		const code = `
const settle = () => new Promise((r) => setTimeout(r, 50));
const keel = await import(${JSON.stringify(entry)}); await settle(); const a = globalThis.keelLoaded;
const session = await keel.createSession({ root: process.cwd() }); await settle(); const b = globalThis.keelLoaded;
await session.call("read", { path: "a.txt" }); await settle(); const c = globalThis.keelLoaded;
await session.close();
console.log(JSON.stringify({ import: a, open: b - a, call: c - b }));`;
		const out = execFileSync(
			process.execPath,
			["--import", pathToFileURL(join(hookDir, "register.mjs")).href, "--input-type=module", "-e", code],
			{ cwd: work, encoding: "utf8", env: { ...process.env, XDG_STATE_HOME: hookDir } },
		);
		return JSON.parse(out);
	} finally {
		rmSync(hookDir, { recursive: true, force: true });
	}
}

const kinds = { "node -e ''": "", "import node:fs": fsChild, keel: keelChild };
const runs = Object.fromEntries(Object.keys(kinds).map((k) => [k, []]));
const info = machineInfo(work);
try {
	runChild(keelChild); // warm the page cache once, untimed
	const names = Object.keys(kinds);
	for (let i = 0; i < N; i++) {
		const order = names.map((_, j) => names[(i + j) % names.length]);
		for (const name of order) runs[name].push(runChild(kinds[name]));
	}
	const modules = args.modules ? countModules() : undefined;
	const stat = (name, key) => {
		const values = runs[name].map((r) => r[key]).sort((a, b) => a - b);
		return values.length && values[0] !== undefined
			? `${percentile(values, 50).toFixed(0)} / ${percentile(values, 95).toFixed(0)}`
			: "";
	};
	const rows = [
		["node -e ''", "", "", "", "", stat("node -e ''", "process")],
		["import node:fs", stat("import node:fs", "import"), "", "", "", stat("import node:fs", "process")],
		[
			"keel",
			stat("keel", "import"),
			stat("keel", "open"),
			stat("keel", "call"),
			stat("keel", "total"),
			stat("keel", "process"),
		],
	];
	console.log(
		`# Start-up: import, local session, first read\n\n\`node bench/startup.mjs --n=${N}\`, entry ${entry}\n` +
			`${info.date}, node ${info.node}, ${info.nproc} cores (${info.cpuModel}), ${args.entry ? "keel as built at the entry" : `keel ${info.keel}`}, ` +
			`load average ${info.loadAvg} at start\n`,
	);
	console.log(
		markdownTable(
			["process", "import", "createSession", "first read", "import + open + read", "whole process"],
			rows,
		),
	);
	const cpu = runs.keel.map((r) => r.cpu).sort((a, b) => a - b);
	console.log(
		`\nms, median / p95 of ${N} processes each. keel's CPU time to the end of the first read: median ${percentile(cpu, 50).toFixed(0)} ms.`,
	);
	if (modules)
		console.log(
			`ES modules loaded (outside node:): import ${modules.import}, createSession ${modules.open}, first read ${modules.call}.`,
		);
	console.log(`Load average at the end: ${machineInfo().loadAvg}.`);
} finally {
	rmSync(work, { recursive: true, force: true });
}
