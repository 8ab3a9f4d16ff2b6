/**
 * Commits of keel run in a child process that strace attaches to, shared by the fault-injection
 * and power-loss tests. The child opens a session, prints "ready" and waits; once strace is
 * attached (so its counters and trace start at the operation, not at node's start-up), "go" runs
 * one operation between two marker calls (access("/keel-fault-begin") and "-end") and prints the
 * answer. Three operations: an apply_patch over five files (two updates, an add into new
 * directories, a delete, a move into a new directory), a `file` batch (an edit and a write into a
 * new directory) and a single `edit` in a subdirectory; each run starts with a fresh workspace
 * copy and a fresh state directory, so the journal's own directories and key are made inside the
 * traced window too.
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildKeel } from "./build-keel.js";

/** What a commit does to files: the calls faults are injected into. */
export const FILE_SYSCALLS = [
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
export const MARKERS = ["access", "faccessat", "faccessat2"];

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

export type Op = "patch" | "batch" | "edit";
export const OPS: Op[] = ["patch", "batch", "edit"];

/** The workspace before (old) and after (new) each operation: relative path → content. */
export const OLD: Record<string, string> = {
	"a.txt": "a1\n",
	"b.txt": "b1\n",
	"d.txt": "d1\n",
	"e.txt": "e1\n",
	"sub/a.txt": "s1\n",
};
export const NEW: Record<Op, Record<string, string>> = {
	patch: (() => {
		const n: Record<string, string> = {
			...OLD,
			"a.txt": "A1\n",
			"b.txt": "B1\n",
			"new/deep/c.txt": "c1\n",
			"moved/e.txt": "E1\n",
		};
		delete n["d.txt"];
		delete n["e.txt"];
		return n;
	})(),
	batch: { ...OLD, "a.txt": "A1\n", "fresh/f.txt": "f1\n" },
	edit: { ...OLD, "sub/a.txt": "S1\n" },
};

/** A bundle of keel, the child script and the workspace template, in a temp directory of their own. */
export class Lab {
	private runs = 0;
	private constructor(
		readonly work: string,
		readonly bundle: string,
		readonly script: string,
		readonly template: string,
	) {}

	/** Undefined when strace is missing. */
	static async create(): Promise<Lab | undefined> {
		try {
			execFileSync("strace", ["-V"], { stdio: "ignore" });
		} catch {
			return undefined;
		}
		const work = await mkdtemp(join(tmpdir(), "keel-traced-"));
		// The session module alone: the whole library pulls in native modules a bundle cannot hold.
		const bundle = await buildKeel(work, "session");
		const script = join(work, "child.mjs");
		writeFileSync(script, CHILD_SOURCE);
		const template = join(work, "template");
		for (const [rel, text] of Object.entries(OLD)) {
			mkdirSync(join(template, rel, ".."), { recursive: true });
			writeFileSync(join(template, rel), text);
		}
		return new Lab(work, bundle, script, template);
	}

	nextDir(): string {
		return join(this.work, `run-${this.runs++}`);
	}

	close(): Promise<void> {
		return rm(this.work, { recursive: true, force: true });
	}
}

/** Every file below `dir` (relative path → content), and the keel temp files found on the way. */
export function tree(dir: string): { files: Record<string, string>; temps: string[] } {
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

export function classify(files: Record<string, string>, op: Op): "old" | "new" | "mixed" {
	const same = (a: Record<string, string>) =>
		JSON.stringify(Object.entries(files).sort()) === JSON.stringify(Object.entries(a).sort());
	return same(OLD) ? "old" : same(NEW[op]) ? "new" : "mixed";
}

export interface Run {
	root: string;
	state: string;
	answer?: {
		ok: boolean;
		error?: { code: string; retry: string; message: string; details?: Record<string, unknown> };
	};
	stderr: string;
	killed: boolean;
	/** How the child ended and what it printed, for a failure's message. */
	exit: string;
}

export interface Ready {
	child: ChildProcessWithoutNullStreams;
	root: string;
	state: string;
	out: () => string;
	err: () => string;
	exited: Promise<{ code: number | null; signal: string | null }>;
}

/** A child for `op` in a fresh copy of the workspace, started and waiting for "go". */
export async function prepare(lab: Lab, op: Op): Promise<Ready> {
	const dir = lab.nextDir();
	const root = join(dir, "root");
	const state = join(dir, "state");
	cpSync(lab.template, root, { recursive: true });
	// One thread-pool thread: fewer threads whose invocation numbers collide with the target's.
	const child = spawn(process.execPath, [lab.script, lab.bundle, root, state, op], {
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
	await waitFor(
		() => out.includes("ready\n"),
		exited,
		() => `child did not start: ${err}`,
	);
	return { child, root, state, out: () => out, err: () => err, exited };
}

/** Run the prepared child's operation with strace attached (`straceArgs`) before it starts. */
export async function runOp(ready: Ready, straceArgs: string[]): Promise<Run> {
	const { child, root, state, exited } = ready;
	const tracer = spawn("strace", ["-f", "-p", String(child.pid), ...straceArgs], {
		stdio: ["ignore", "ignore", "pipe"],
	});
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

export async function waitFor(
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
