/**
 * What process handles cost through Session.call (unified profile), against a plain `bash` call of
 * `true` on the same backend: a background start (`bash` with background: true, answered at once),
 * a poll (`process` read of a running handle), a stdin write to a `cat` handle (write waits 250 ms
 * for output unless the process exits, so it is timed as `process` write with the echo read back
 * by wait), and the kill. Each round interleaves the cases so machine load hits them alike;
 * p50, p95 and each case's median as a multiple of the plain call's, per backend. Backends: local;
 * ssh against a loopback sshd (the test fixture's, with the machine's own rc files, as the ssh
 * tests run), whose handles live under keel's command runner on the host; bwrap, where a handle
 * is a sandbox of its own and a plain call goes to a long-lived one. The load average
 * before and after each backend's rounds is printed with it. Also the first-use import cost of
 * node-pty and @xterm/headless.
 *
 * Run: npm run build && node bench/process-handles.mjs [--iterations=N] [--backends=local,ssh,bwrap]
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { loadFixture } from "./cases-ssh.mjs";
import { markdownTable, nowMs, summarize } from "./lib.mjs";

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? dflt;
const iterations = Number(arg("iterations", 40));
const backends = arg("backends", "local,ssh,bwrap").split(",");

const importCost = async (name) => {
	const t0 = nowMs();
	await import(name);
	return nowMs() - t0;
};
const ptyMs = await importCost("@lydell/node-pty");
const xtermMs = await importCost("@xterm/headless");

const { createSession } = await import("../dist/index.js");
const { createSshBackend } = await import("../dist/backend/ssh/index.js");
const { createBwrapBackend } = await import("../dist/backend/bwrap.js");

const PLAIN = "bash `true` (plain call)";
const must = (r, what) => {
	if (!r.ok) throw new Error(`${what} failed: ${JSON.stringify(r.error)}`);
	return r;
};

/** The interleaved rounds on one session: samples per case, in ms. */
async function measure(session) {
	const samples = {
		[PLAIN]: [],
		"background start": [],
		"poll (read)": [],
		"stdin write + echo": [],
		kill: [],
	};
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
		await time(PLAIN, async () => must(await session.call("bash", { command: "true" }), "bash"));
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
	return samples;
}

function report(name, samples, load) {
	const plain = summarize(samples[PLAIN]).median;
	const rows = Object.entries(samples).map(([label, s]) => {
		const x = summarize(s);
		return [label, x.median.toFixed(2), x.p95.toFixed(2), `${(x.median / plain).toFixed(2)}x`];
	});
	console.log(`\n### ${name}, ${iterations} rounds\n`);
	console.log(markdownTable(["case", "p50 ms", "p95 ms", "p50 vs plain call"], rows));
	console.log(`\nload average (1, 5, 15 min): before ${load.before}; after ${load.after}`);
}

const loadNow = () =>
	loadavg()
		.map((x) => x.toFixed(2))
		.join(", ");

const dir = mkdtempSync(join(tmpdir(), "keel-bench-procs-"));
const limits = { processLimits: { maxLive: 1000 } };
try {
	for (const backend of backends) {
		const root = join(dir, backend);
		mkdirSync(root);
		let session;
		let sshd;
		if (backend === "local") session = await createSession({ root, profile: "unified", ...limits });
		else if (backend === "ssh") {
			const { startSshd, sshOptions } = await loadFixture(dir);
			sshd = await startSshd();
			const ssh = createSshBackend(sshOptions(sshd));
			session = await createSession({ root, backend: ssh, profile: "unified", ...limits });
		} else if (backend === "bwrap") {
			const bwrap = createBwrapBackend({ roots: [root] });
			session = await createSession({ root, backend: bwrap, profile: "unified", ...limits });
		} else throw new Error(`unknown backend ${backend} (local, ssh, bwrap)`);
		const before = loadNow();
		try {
			const samples = await measure(session);
			const name = { local: "local", ssh: "ssh (loopback sshd)", bwrap: "bwrap" }[backend];
			report(name, samples, { before, after: loadNow() });
		} finally {
			await session.close();
			await sshd?.stop();
		}
	}
} finally {
	rmSync(dir, { recursive: true, force: true });
}
console.log(
	`\nfirst import: @lydell/node-pty ${ptyMs.toFixed(1)} ms, @xterm/headless ${xtermMs.toFixed(1)} ms`,
);
