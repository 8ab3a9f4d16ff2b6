/**
 * The `python` tool on local, bwrap and ssh (a loopback sshd, the test fixture's), in one run:
 * keel's persistent worker through the whole tool boundary (`Session.call("python", {code: "pass"})`)
 * against what an agent without a persistent worker pays on the same backend, a `bash` tool call
 * running `python3 -c pass` (on ssh: in keel's persistent remote shell, so no connection per call).
 *
 * Per backend:
 *  - warm no-op, interleaved with the per-call baseline; then keel alone (no spawns in between);
 *  - three parts of the warm call, keel alone: the tool's cwd preflight in its two steps (the path
 *    guard's resolve, then `backend.fs.stat`; on ssh, SFTP requests and a helper-shell command) and
 *    `session.python.run` without the tool layer (the round trip to the worker);
 *  - cold start to first result: a new backend and session, its first python result, close
 *    (on ssh this includes the connection); next to it, a new session without python (create +
 *    close), so the worker's share can be read off.
 * A backend that cannot run here (no bwrap, no sshd) is skipped with a message on stderr.
 *
 * Warm-up calls run in each case's check() (compare's own warm-up is 0), so every recorded sample
 * is a timed one; report() gives p50/p95/p99 from them next to run.mjs's median/p95 table.
 *
 * As an area of bench/run.mjs:  npm run bench -- --area=python-backends [--quick]
 * On its own:                   node --expose-gc bench/cases-python-backends.mjs [--quick] [--iterations=N]
 * Needs `npm run build` first (it imports ../dist). Interpreter: $KEEL_PYTHON, else /usr/bin/python3
 * when present, else python3 on PATH; the same one for keel and the baseline.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { transformWithOxc } from "vite";
import { createBwrapBackend } from "../dist/backend/bwrap.js";
import { createLocalBackend, createSession, createSshBackend } from "../dist/index.js";
import { compare, comparisonTable, fmtMs, markdownTable, nowMs, percentile, textOf } from "./lib.mjs";

export const area = "python-backends";
export const title =
	"Python on local, bwrap and ssh: persistent worker (keel) vs `bash` running `python3 -c pass` per call";
export const candidate = "keel";
export const baseline = "bash per call";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const QUICK = process.argv.includes("--quick");
const log = (msg) => process.stderr.write(`[${area}] ${msg}\n`);

function interpreter() {
	if (process.env.KEEL_PYTHON) return process.env.KEEL_PYTHON;
	return existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

/** The sshd test fixture is TypeScript; compile it (it imports only node built-ins) into `dir`. */
async function loadSshdFixture(dir) {
	const src = join(REPO, "test", "fixtures", "sshd.ts");
	const { code } = await transformWithOxc(readFileSync(src, "utf8"), src, { lang: "ts" });
	const out = join(dir, "sshd-fixture.mjs");
	writeFileSync(out, code);
	return import(pathToFileURL(out).href);
}

async function call(session, tool, args, expected) {
	const r = await session.call(tool, args);
	if (!r.ok) throw new Error(`${tool} failed: ${r.error.code}: ${r.error.message}`);
	if (expected !== undefined && textOf(r) !== expected)
		throw new Error(`${tool}: unexpected output ${textOf(r)}`);
	return r;
}

/** Raw samples of every timed call, per case and contender (compare() keeps summaries only). */
const recorded = [];

/**
 * A case whose contenders record each timed call; the warm-up runs in check() (interleaved, in
 * rotating order like compare's), and compare's own warm-up is 0.
 */
function timedCase({ name, iterations, warmup, contenders, check }) {
	const timed = contenders.map((c) => {
		const samples = [];
		recorded.push({ name, contender: c.label, samples });
		return {
			label: c.label,
			run: async () => {
				const t0 = nowMs();
				await c.run();
				samples.push(nowMs() - t0);
			},
		};
	});
	return {
		name,
		iterations,
		warmup: 0,
		contenders: timed,
		async check() {
			await check?.();
			const n = QUICK ? Math.min(warmup, 2) : warmup;
			for (let i = 0; i < n; i++) {
				for (let k = 0; k < contenders.length; k++) await contenders[(i + k) % contenders.length].run();
			}
		},
	};
}

/**
 * @param {{dir: string, iterations?: number}} env
 * @returns {Promise<{cases: object[], teardown: () => Promise<void>}>}
 */
export async function setup({ dir, iterations = 300 }) {
	recorded.length = 0;
	const python = interpreter();
	const root = join(dir, "ws");
	const spillDir = join(dir, "spill");
	mkdirSync(root, { recursive: true });
	const closers = [];
	const targets = [];

	/** A backend is used when a session on it gives a python and a bash result; else it is skipped. */
	const addTarget = async (name, newBackend) => {
		let session;
		try {
			session = await createSession({
				root,
				spillDir,
				backend: await newBackend(),
				profile: "unified",
				python: { interpreter: python },
			});
			await call(session, "python", { code: "pass" }, "(no output)");
			await call(session, "bash", { command: `${python} -c pass` }, "(no output)");
		} catch (e) {
			log(`${name} skipped: ${e.message}`);
			await session?.close();
			return;
		}
		closers.push(() => session.close());
		targets.push({ name, session, newBackend });
	};

	await addTarget("local", () => createLocalBackend());

	// ready() builds and probes the sandbox: it throws when bwrap is missing or cannot run here.
	await addTarget("bwrap", async () => {
		const b = createBwrapBackend({ roots: [root] });
		await b.ready();
		return b;
	});

	const fixture = await loadSshdFixture(dir);
	const missing = fixture.sshdMissing();
	if (missing) {
		log(`ssh skipped: ${missing}`);
	} else {
		let sshd;
		try {
			sshd = await fixture.startSshd();
		} catch (e) {
			log(`ssh skipped: ${e.message}`);
		}
		if (sshd) {
			closers.push(() => sshd.stop());
			await addTarget("ssh", () => createSshBackend(fixture.sshOptions(sshd)));
		}
	}

	const keel = (s) => () => call(s, "python", { code: "pass" });
	const perCall = (s) => () => call(s, "bash", { command: `${python} -c pass` });
	const cases = [];
	for (const { name, session } of targets) {
		cases.push(
			timedCase({
				name: `${name}: warm no-op \`pass\``,
				iterations,
				warmup: 20,
				contenders: [
					{ label: "keel", run: keel(session) },
					{ label: "bash per call", run: perCall(session) },
				],
			}),
		);
	}
	for (const { name, session } of targets) {
		cases.push(
			timedCase({
				name: `${name}: warm no-op \`pass\`, keel alone`,
				iterations: iterations * 5,
				warmup: 50,
				contenders: [{ label: "keel", run: keel(session) }],
			}),
		);
	}
	for (const { name, session } of targets) {
		cases.push(
			// What the python tool does with the cwd before the worker sees the request (preflightCwd):
			// the path guard resolves it, then the backend stats it.
			timedCase({
				name: `${name}: part — cwd through the path guard alone`,
				iterations,
				warmup: 20,
				contenders: [{ label: "keel", run: () => session.resolvePath(".", "read") }],
			}),
			timedCase({
				name: `${name}: part — \`backend.fs.stat\` of the cwd alone`,
				iterations,
				warmup: 20,
				contenders: [{ label: "keel", run: () => session.backend.fs.stat(session.workspace) }],
			}),
			timedCase({
				name: `${name}: part — \`session.python.run\` alone (no tool layer)`,
				iterations,
				warmup: 20,
				contenders: [
					{
						label: "keel",
						run: async () => {
							const r = await session.python.run({ kind: "code", code: "pass", cwd: session.workspace });
							if (r.status !== "done" || r.outcome.kind !== "result")
								throw new Error("python.run: no result");
						},
					},
				],
			}),
		);
	}
	const coldIterations = Math.max(10, Math.round(iterations / 10));
	for (const { name, session, newBackend } of targets) {
		const open = async () =>
			createSession({
				root,
				spillDir,
				backend: await newBackend(),
				profile: "unified",
				python: { interpreter: python },
			});
		cases.push(
			timedCase({
				// keel: a new backend and session, its first python result (worker start included),
				// close; the baseline: one `python3 -c pass` through bash on the warm session.
				name: `${name}: cold start to first result`,
				iterations: coldIterations,
				warmup: 2,
				contenders: [
					{
						label: "keel",
						run: async () => {
							const s = await open();
							try {
								await call(s, "python", { code: "pass" }, "(no output)");
							} finally {
								await s.close();
							}
						},
					},
					{ label: "bash per call", run: perCall(session) },
				],
			}),
			timedCase({
				name: `${name}: part — new session without python (create + close)`,
				iterations: coldIterations,
				warmup: 2,
				contenders: [{ label: "keel", run: async () => (await open()).close() }],
			}),
		);
	}
	return {
		cases,
		async teardown() {
			for (const close of closers.reverse()) await close();
		},
	};
}

/** p50/p95/p99 of every recorded case and contender (ms). */
export function report() {
	const rows = recorded
		.filter((r) => r.samples.length > 0)
		.map((r) => {
			const s = [...r.samples].sort((a, b) => a - b);
			return [
				r.name,
				r.contender,
				String(s.length),
				fmtMs(percentile(s, 50)),
				fmtMs(percentile(s, 95)),
				fmtMs(percentile(s, 99)),
			];
		});
	if (rows.length === 0) return "";
	return markdownTable(["case", "contender", "N", "p50 (ms)", "p95 (ms)", "p99 (ms)"], rows);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	const arg = process.argv.find((a) => a.startsWith("--iterations="));
	const base = arg ? Number(arg.split("=")[1]) : 300;
	const dir = mkdtempSync(join(tmpdir(), "keel-bench-python-backends-"));
	try {
		const { cases, teardown } = await setup({
			dir,
			iterations: QUICK ? Math.max(3, Math.round(base / 10)) : base,
		});
		const results = [];
		try {
			for (const c of cases) {
				await c.check();
				const started = Date.now();
				results.push(await compare(c));
				log(`${c.name}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
			}
		} finally {
			await teardown();
		}
		if (results.length) {
			process.stdout.write(
				`### ${title}\n\n${comparisonTable(results, { candidate, baseline })}\n\n${report()}\n`,
			);
		}
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}
