/**
 * All-or-nothing under faults at every file-affecting system call of a commit. A child process
 * (keel bundled into one file, build-keel.ts) opens a session and waits; strace attaches to it
 * (so its counters start at the commit, not at node's start-up) and makes the Nth call of one
 * system call fail with EIO or ENOSPC, or kills the child there (SIGKILL). Three operations: an
 * apply_patch over five files (two updates, an add into new directories, a delete, a move into a
 * new directory), a `file` batch (an edit and a write into a new directory) and a single `edit`
 * in a subdirectory; each starts with a fresh state directory, so the journal's own directories
 * and key are made inside the faulted window too.
 *
 * A dry run under strace lists, per thread, every invocation of each system call between two
 * marker calls around the operation; each fault run then targets one invocation number. strace
 * counts per thread, so the same number also hits that invocation in every other thread (a
 * second fault, still deterministic). The invocations are sampled deterministically (first, last
 * and evenly between, per system call) to keep the test near a minute.
 *
 * For every run:
 *   - an answer (when not killed) is truthful: ok means all-new on disk; an error says
 *     nothing-committed / rolled-back (all-old on disk) or committed / all-new (all-new on disk);
 *   - an injected EIO or ENOSPC comes back as IO_ERROR ("retry"), in keel's words (not Node's
 *     "i/o error" text, no /proc/self/fd path);
 *   - the next session (its recovery) leaves the workspace all-old or all-new, and no keel temp
 *     file anywhere in it.
 * Skipped when strace is missing or cannot attach.
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import { buildKeel } from "./build-keel.js";

/** Invocations tried per system call and operation (first, last, and evenly between). */
const PER_SYSCALL = Number(process.env.KEEL_FAULT_SAMPLES ?? 3);
const PARALLEL = 2;

/** What a commit does to files: the calls faults are injected into. */
const FILE_SYSCALLS = [
	"mkdir",
	"mkdirat",
	"openat",
	"write",
	"pwrite64",
	"writev",
	"fsync",
	"fdatasync",
	"rename",
	"renameat",
	"renameat2",
	"link",
	"linkat",
	"unlink",
	"unlinkat",
	"rmdir",
	"fchmod",
	"fchown",
];
const MARKERS = ["access", "faccessat", "faccessat2"];

const CHILD_SOURCE = `
import { existsSync, writeSync } from "node:fs";
const [bundle, root, stateDir, op] = process.argv.slice(2);
const { Session } = await import(bundle);
const patch = (...body) => ["*** Begin Patch", ...body, "*** End Patch", ""].join("\\n");
const s = await Session.create({ root, stateDir, profile: op === "edit" ? "pi" : "unified" });
if (op === "edit") {
	const r = await s.call("read", { path: "sub/a.txt" });
	if (!r.ok) throw new Error(JSON.stringify(r));
}
process.stdout.write("ready\\n");
process.stdin.on("end", () => process.exit(0));
await new Promise((resolve) => process.stdin.once("data", resolve));
existsSync("/keel-fault-begin");
let r;
if (op === "patch")
	r = await s.call("apply_patch", {
		input: patch(
			"*** Update File: a.txt", "@@", "-a1", "+A1",
			"*** Update File: b.txt", "@@", "-b1", "+B1",
			"*** Add File: new/deep/c.txt", "+c1",
			"*** Delete File: d.txt",
			"*** Update File: e.txt", "*** Move to: moved/e.txt", "@@", "-e1", "+E1",
		),
	});
else if (op === "batch")
	r = await s.call("file", {
		queries: [
			{ type: "edit", path: "a.txt", edits: [{ oldText: "a1", newText: "A1" }] },
			{ type: "write", path: "fresh/f.txt", content: "f1\\n" },
		],
	});
else r = await s.call("edit", { path: "sub/a.txt", edits: [{ oldText: "s1", newText: "S1" }] });
existsSync("/keel-fault-end");
const text = JSON.stringify(r.ok ? { ok: true } : { ok: false, error: r.error }) + "\\n";
// A write fault may land on this report's write too (another thread's invocation number): try again.
for (let i = 0; i < 5; i++) {
	try {
		writeSync(1, text);
		break;
	} catch {}
}
process.exit(0);
`;

type Op = "patch" | "batch" | "edit";
const OPS: Op[] = ["patch", "batch", "edit"];

/** The workspace before (old) and after (new) each operation: relative path → content. */
const OLD: Record<string, string> = {
	"a.txt": "a1\n",
	"b.txt": "b1\n",
	"d.txt": "d1\n",
	"e.txt": "e1\n",
	"sub/a.txt": "s1\n",
};
const NEW: Record<Op, Record<string, string>> = {
	patch: (() => {
		const n: Record<string, string> = { ...OLD, "a.txt": "A1\n", "b.txt": "B1\n", "new/deep/c.txt": "c1\n", "moved/e.txt": "E1\n" };
		delete n["d.txt"];
		delete n["e.txt"];
		return n;
	})(),
	batch: { ...OLD, "a.txt": "A1\n", "fresh/f.txt": "f1\n" },
	edit: { ...OLD, "sub/a.txt": "S1\n" },
};

let work: string;
let bundle: string;
let script: string;
let template: string;
let usable = true;

/** Every file below `dir` (relative path → content), and the keel temp files found on the way. */
function tree(dir: string): { files: Record<string, string>; temps: string[] } {
	const files: Record<string, string> = {};
	const temps: string[] = [];
	const walk = (d: string, rel: string) => {
		for (const e of readdirSync(d, { withFileTypes: true })) {
			const r = rel ? `${rel}/${e.name}` : e.name;
			if (e.isDirectory()) walk(join(d, e.name), r);
			else if (e.name.startsWith(".keel-tmp-")) temps.push(r);
			else files[r] = readFileSync(join(d, e.name), "utf8");
		}
	};
	walk(dir, "");
	return { files, temps };
}

function classify(files: Record<string, string>, op: Op): "old" | "new" | "mixed" {
	const same = (a: Record<string, string>) => JSON.stringify(Object.entries(files).sort()) === JSON.stringify(Object.entries(a).sort());
	return same(OLD) ? "old" : same(NEW[op]) ? "new" : "mixed";
}

interface Run {
	root: string;
	state: string;
	answer?: { ok: boolean; error?: { code: string; retry: string; message: string; details?: Record<string, unknown> } };
	stderr: string;
	killed: boolean;
	/** How the child ended and what it printed, for a failure's message. */
	exit: string;
}

let runs = 0;

interface Ready {
	child: ChildProcessWithoutNullStreams;
	root: string;
	state: string;
	out: () => string;
	err: () => string;
	exited: Promise<{ code: number | null; signal: string | null }>;
}

/** A child for `op` in a fresh copy of the workspace, started and waiting for "go". */
async function prepare(op: Op): Promise<Ready> {
	const dir = join(work, `run-${runs++}`);
	const root = join(dir, "root");
	const state = join(dir, "state");
	cpSync(template, root, { recursive: true });
	// One thread-pool thread: fewer threads whose invocation numbers collide with the target's.
	const child = spawn(process.execPath, [script, bundle, root, state, op], {
		stdio: ["pipe", "pipe", "pipe"],
		env: { ...process.env, UV_THREADPOOL_SIZE: "1" },
	});
	let out = "";
	let err = "";
	child.stdout.setEncoding("utf8").on("data", (d: string) => {
		out += d;
	});
	child.stderr.setEncoding("utf8").on("data", (d: string) => {
		err += d;
	});
	child.stdin.on("error", () => {});
	const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
		child.once("exit", (code, signal) => resolve({ code, signal })),
	);
	await waitFor(() => out.includes("ready\n"), exited, () => `child did not start: ${err}`);
	return { child, root, state, out: () => out, err: () => err, exited };
}

/** Run the prepared child's operation with strace attached (`straceArgs`) before it starts. */
async function runOp(ready: Ready, straceArgs: string[]): Promise<Run> {
	const { child, root, state, exited } = ready;
	const tracer = spawn("strace", ["-f", "-p", String(child.pid), ...straceArgs], { stdio: ["ignore", "ignore", "pipe"] });
	let traceErr = "";
	tracer.stderr.setEncoding("utf8").on("data", (d: string) => {
		traceErr += d;
	});
	const traced = new Promise<void>((resolve) => tracer.once("exit", () => resolve()));
	await waitFor(
		() => /attached/.test(traceErr),
		traced,
		() => `strace did not attach: ${traceErr}`,
	);
	child.stdin.write("go\n");
	const exit = await exited;
	child.stdin.end();
	await traced;
	const out = ready.out();
	const line = out.split("\n").find((l) => l.startsWith("{"));
	return {
		root,
		state,
		answer: line ? JSON.parse(line) : undefined,
		stderr: ready.err(),
		killed: exit.signal === "SIGKILL",
		exit: `code ${exit.code} signal ${exit.signal} stdout ${JSON.stringify(out.slice(0, 200))}`,
	};
}

async function waitFor(
	ready: () => boolean,
	gone: Promise<unknown>,
	why: () => string,
): Promise<void> {
	let over = false;
	void gone.then(() => {
		over = true;
	});
	for (let i = 0; i < 3000 && !ready(); i++) {
		if (over) throw new Error(why());
		await new Promise((r) => setTimeout(r, 5));
	}
	if (!ready()) throw new Error(why());
}

/**
 * Per system call: the invocation numbers (per thread) that fall inside the operation. A number
 * is left out when, in any thread, that invocation is not keel's: libuv's wake-up write to its
 * eventfd (failing it aborts node, whatever the program) or a call outside the operation.
 */
function invocations(trace: string): Map<string, number[]> {
	const counts = new Map<string, number>();
	const inside = new Map<string, Set<number>>();
	const foreign = new Map<string, Set<number>>();
	let phase = 0;
	for (const line of trace.split("\n")) {
		if (line.includes("/keel-fault-begin")) phase = 1;
		if (line.includes("/keel-fault-end")) phase = 2;
		const m = /^(\d+)\s+([a-z0-9_]+)\((.*)/.exec(line);
		if (!m || !FILE_SYSCALLS.includes(m[2])) continue;
		const key = `${m[1]} ${m[2]}`;
		const n = (counts.get(key) ?? 0) + 1;
		counts.set(key, n);
		const wakeUp = m[2] === "write" && m[3].includes('"\\1\\0\\0\\0\\0\\0\\0\\0", 8');
		const set = phase === 1 && !wakeUp ? inside : foreign;
		if (!set.has(m[2])) set.set(m[2], new Set());
		set.get(m[2])!.add(n);
	}
	return new Map(
		[...inside]
			.map(([s, ns]): [string, number[]] => [s, [...ns].filter((n) => !foreign.get(s)?.has(n)).sort((a, b) => a - b)])
			.filter(([, ns]) => ns.length > 0),
	);
}

/** First, last and evenly between: `k` of `ns`, the same every time. */
function sample(ns: number[], k: number): number[] {
	if (ns.length <= k) return ns;
	return [...new Set(Array.from({ length: k }, (_, i) => ns[Math.round((i * (ns.length - 1)) / (k - 1))]))];
}

beforeAll(async () => {
	try {
		execFileSync("strace", ["-V"], { stdio: "ignore" });
	} catch {
		usable = false;
		return;
	}
	work = await mkdtemp(join(tmpdir(), "keel-fault-"));
	bundle = await buildKeel(work);
	script = join(work, "child.mjs");
	writeFileSync(script, CHILD_SOURCE);
	template = join(work, "template");
	for (const [rel, text] of Object.entries(OLD)) {
		mkdirSync(join(template, rel, ".."), { recursive: true });
		writeFileSync(join(template, rel), text);
	}
}, 120_000);

afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

interface Case {
	op: Op;
	syscall: string;
	n: number;
	fault: "EIO" | "ENOSPC" | "KILL";
}

/** What went wrong in one run, or undefined when it kept every promise. */
async function check(c: Case, run: Run): Promise<string | undefined> {
	const label = `${c.op} ${c.fault} at ${c.syscall} #${c.n}`;
	const after = tree(run.root);
	const seen = classify(after.files, c.op);
	if (!run.killed) {
		const a = run.answer;
		if (!a) return `${label}: no answer (${run.exit}; ${run.stderr.slice(0, 300)})`;
		const d = a.error?.details ?? {};
		const claimsNew = a.ok || d.committed === true || d.allOrNothing === "all-new";
		if (seen !== (claimsNew ? "new" : "old"))
			return `${label}: answered ${JSON.stringify(a).slice(0, 400)} but the workspace is ${seen}`;
		if (!a.ok) {
			const e = a.error!;
			if (/EIO: i\/o error|ENOSPC: no space left|\/proc\/self\/fd/.test(e.message))
				return `${label}: message not in keel's words: ${e.message}`;
			if (e.code !== "IO_ERROR" || e.retry !== "retry")
				return `${label}: ${e.code} (${e.retry}) for an injected ${c.fault}: ${e.message}`;
		}
	}
	// The next session finishes whatever was cut off.
	const next = await Session.create({ root: run.root, stateDir: run.state, profile: "unified" });
	await next.close();
	const recovered = tree(run.root);
	const state = classify(recovered.files, c.op);
	if (state === "mixed") return `${label}: after recovery a mix: ${JSON.stringify(recovered.files)}`;
	if (!run.killed && state !== seen) return `${label}: recovery changed a truthfully answered ${seen} state to ${state}`;
	if (recovered.temps.length > 0) return `${label}: temp files left: ${recovered.temps.join(", ")}`;
	return undefined;
}

describe("faults at every file-affecting system call of a commit", () => {
	for (const op of OPS) {
		it(`${op}: every kill, EIO and ENOSPC leaves all-old or all-new, and the answer says which`, async (ctx) => {
			if (!usable) return ctx.skip();
			const traceFile = join(work, `${op}.trace`);
			const dry = await runOp(await prepare(op), ["-o", traceFile, "-e", `trace=${[...FILE_SYSCALLS, ...MARKERS].join(",")}`]);
			if (!dry.answer?.ok) {
				if (/attach|ptrace|Operation not permitted/.test(dry.stderr)) return ctx.skip();
				throw new Error(`dry run failed: ${JSON.stringify(dry)}`);
			}
			expect(classify(tree(dry.root).files, op)).toBe("new");
			const found = invocations(readFileSync(traceFile, "utf8"));
			// The commit's own calls are all there: a trace that missed them would test nothing.
			for (const s of ["openat", "fsync", op === "patch" || op === "batch" ? "linkat" : "rename"])
				expect([...found.keys()].some((k) => k.startsWith(s.replace("at", "")))).toBe(true);
			const cases: Case[] = [];
			for (const [syscall, ns] of found) {
				for (const n of sample(ns, PER_SYSCALL)) cases.push({ op, syscall, n, fault: "EIO" });
				// Kills at a commit's calls already keep all-or-nothing; fewer of them are sampled.
				for (const n of sample(ns, 2)) cases.push({ op, syscall, n, fault: "KILL" });
				// Only the calls that allocate space can fail for lack of it.
				if (["mkdir", "mkdirat", "write", "pwrite64", "writev", "openat", "link", "linkat"].includes(syscall))
					cases.push({ op, syscall, n: ns[0], fault: "ENOSPC" }, { op, syscall, n: ns[ns.length - 1], fault: "ENOSPC" });
			}
			// KEEL_FAULT_ONLY="syscall:n:fault" replays one case.
			const only = process.env.KEEL_FAULT_ONLY?.split(":");
			if (only) cases.splice(0, cases.length, ...cases.filter((c) => c.syscall === only[0] && c.n === Number(only[1]) && c.fault === only[2]));
			const failures: string[] = [];
			const started = performance.now();
			let next = 0;
			// Each worker starts its next child while the current one runs.
			const worker = async () => {
				const claim = () => (next < cases.length ? { c: cases[next++], ready: prepare(op) } : undefined);
				let warm = claim();
				while (warm) {
					const { c } = warm;
					const ready = await warm.ready;
					warm = claim();
					const inject = c.fault === "KILL" ? "signal=KILL" : `error=${c.fault}`;
					const run = await runOp(ready, ["-o", "/dev/null", "-e", `trace=${c.syscall}`, "-e", `inject=${c.syscall}:${inject}:when=${c.n}`]);
					const problem = await check(c, run);
					if (problem) failures.push(problem);
					rmSync(join(run.root, ".."), { recursive: true, force: true });
				}
			};
			await Promise.all(Array.from({ length: PARALLEL }, worker));
			console.log(`${op}: ${cases.length} fault runs in ${Math.round(performance.now() - started)} ms; invocations: ${JSON.stringify([...found])}`);
			expect(failures, failures.join("\n")).toEqual([]);
			expect(cases.length).toBeGreaterThan(10);
		}, 300_000);
	}
});

