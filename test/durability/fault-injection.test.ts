/**
 * All-or-nothing under faults at every file-affecting system call of a commit: strace makes the
 * Nth call of one system call fail with EIO or ENOSPC, or kills the child there (SIGKILL), in the
 * operations of traced-commits.ts (an apply_patch over five files, a `file` batch, a single edit).
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
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import {
	classify,
	FILE_SYSCALLS,
	Lab,
	MARKERS,
	OPS,
	type Op,
	prepare,
	type Run,
	runOp,
	tree,
} from "./traced-commits.js";

/** Invocations tried per system call and operation (first, last, and evenly between). */
const PER_SYSCALL = Number(process.env.KEEL_FAULT_SAMPLES ?? 3);
const PARALLEL = 2;

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
			.map(([s, ns]): [string, number[]] => [
				s,
				[...ns].filter((n) => !foreign.get(s)?.has(n)).sort((a, b) => a - b),
			])
			.filter(([, ns]) => ns.length > 0),
	);
}

/** First, last and evenly between (the middle one for k = 1): `k` of `ns`, the same every time. */
function sample(ns: number[], k: number): number[] {
	if (ns.length <= k) return ns;
	if (k === 1) return [ns[Math.floor(ns.length / 2)]];
	return [...new Set(Array.from({ length: k }, (_, i) => ns[Math.round((i * (ns.length - 1)) / (k - 1))]))];
}

let lab: Lab | undefined;

beforeAll(async () => {
	lab = await Lab.create();
}, 120_000);

afterAll(async () => {
	await lab?.close();
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
	if (!run.killed && state !== seen)
		return `${label}: recovery changed a truthfully answered ${seen} state to ${state}`;
	if (recovered.temps.length > 0) return `${label}: temp files left: ${recovered.temps.join(", ")}`;
	return undefined;
}

describe("faults at every file-affecting system call of a commit", () => {
	for (const op of OPS) {
		it(`${op}: every kill, EIO and ENOSPC leaves all-old or all-new, and the answer says which`, async (ctx) => {
			if (!lab) return ctx.skip();
			const l = lab;
			const traceFile = join(l.work, `${op}.trace`);
			const dry = await runOp(await prepare(l, op), [
				"-o",
				traceFile,
				"-e",
				`trace=${[...FILE_SYSCALLS, ...MARKERS].join(",")}`,
			]);
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
				// Kills are sampled less: multi-crash.test.ts kills at random points a hundred times.
				for (const n of sample(ns, 1)) cases.push({ op, syscall, n, fault: "KILL" });
				// Only the calls that allocate space can fail for lack of it.
				if (["mkdir", "mkdirat", "write", "pwrite64", "writev", "openat", "link", "linkat"].includes(syscall))
					cases.push({ op, syscall, n: ns[ns.length - 1], fault: "ENOSPC" });
			}
			// KEEL_FAULT_ONLY="syscall:n:fault" replays one case.
			const only = process.env.KEEL_FAULT_ONLY?.split(":");
			if (only)
				cases.splice(
					0,
					cases.length,
					...cases.filter((c) => c.syscall === only[0] && c.n === Number(only[1]) && c.fault === only[2]),
				);
			const failures: string[] = [];
			const started = performance.now();
			let next = 0;
			// Each worker starts its next child while the current one runs.
			const worker = async () => {
				const claim = () => (next < cases.length ? { c: cases[next++], ready: prepare(l, op) } : undefined);
				let warm = claim();
				while (warm) {
					const { c } = warm;
					const ready = await warm.ready;
					warm = claim();
					const inject = c.fault === "KILL" ? "signal=KILL" : `error=${c.fault}`;
					const run = await runOp(ready, [
						"-o",
						"/dev/null",
						"-e",
						`trace=${c.syscall}`,
						"-e",
						`inject=${c.syscall}:${inject}:when=${c.n}`,
					]);
					const problem = await check(c, run);
					if (problem) failures.push(problem);
					rmSync(join(run.root, ".."), { recursive: true, force: true });
				}
			};
			await Promise.all(Array.from({ length: PARALLEL }, worker));
			console.log(
				`${op}: ${cases.length} fault runs in ${Math.round(performance.now() - started)} ms; invocations: ${JSON.stringify([...found])}`,
			);
			expect(failures, failures.join("\n")).toEqual([]);
			expect(cases.length).toBeGreaterThan(10);
		}, 300_000);
	}
});
