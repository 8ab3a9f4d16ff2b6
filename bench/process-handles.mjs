/**
 * What process handles cost through Session.call on local (unified profile), against a plain
 * `bash` call of `true`: a background start (`bash` with background: true, answered at once), a
 * poll (`process` read of a running handle), a stdin write to a `cat` handle (write waits 250 ms
 * for output unless the process exits, so it is timed as `process` write with the echo read back
 * by wait), and the kill. Each round interleaves the cases so machine load hits them alike;
 * medians and p95 in ms. Also the first-use import cost of node-pty and @xterm/headless.
 *
 * Run: npm run build && node bench/process-handles.mjs [--iterations=N]
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { markdownTable, nowMs, summarize } from "./lib.mjs";

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt;
const iterations = Number(arg("iterations", 40));

const importCost = async (name) => {
	const t0 = nowMs();
	await import(name);
	return nowMs() - t0;
};
const ptyMs = await importCost("@lydell/node-pty");
const xtermMs = await importCost("@xterm/headless");

const { Session } = await import("../dist/index.js");
const dir = mkdtempSync(join(tmpdir(), "keel-bench-procs-"));
const root = join(dir, "ws");
mkdirSync(root);
const must = (r, what) => {
	if (!r.ok) throw new Error(`${what} failed: ${JSON.stringify(r.error)}`);
	return r;
};
const session = await Session.create({ root, profile: "unified", processLimits: { maxLive: 1000 } });
const samples = {
	"bash `true` (plain call)": [],
	"background start": [],
	"poll (read)": [],
	"stdin write + echo": [],
	kill: [],
};
try {
	const cat = must(await session.call("bash", { command: "cat", background: true }), "cat").details.process
		.id;
	let n = 0;
	for (let i = 0; i < iterations + 5; i++) {
		const keep = i >= 5; // warm-up rounds are not kept
		const time = async (label, fn) => {
			const t0 = nowMs();
			const r = await fn();
			if (keep) samples[label].push(nowMs() - t0);
			return r;
		};
		await time("bash `true` (plain call)", async () =>
			must(await session.call("bash", { command: "true" }), "bash"),
		);
		const started = await time("background start", async () =>
			must(await session.call("bash", { command: "sleep 1000", background: true }), "start"),
		);
		const id = started.details.process.id;
		await time("poll (read)", async () =>
			must(await session.call("process", { action: "read", id }), "read"),
		);
		const line = `line-${n++}`;
		await time("stdin write + echo", async () => {
			const { processes } = session;
			await processes.write(cat, `${line}\n`);
			const r = await processes.wait(cat, { pattern: new RegExp(line), timeoutMs: 10_000, maxBytes: 65536 });
			if (r.matched === undefined) throw new Error("no echo");
		});
		await time("kill", async () => must(await session.call("process", { action: "kill", id }), "kill"));
	}
} finally {
	await session.close();
	rmSync(dir, { recursive: true, force: true });
}
const rows = Object.entries(samples).map(([label, s]) => {
	const x = summarize(s);
	return [label, x.median.toFixed(2), x.p95.toFixed(2)];
});
console.log(`process handles on local, ${iterations} rounds\n`);
console.log(markdownTable(["case", "median ms", "p95 ms"], rows));
console.log(
	`\nfirst import: @lydell/node-pty ${ptyMs.toFixed(1)} ms, @xterm/headless ${xtermMs.toFixed(1)} ms`,
);
