/**
 * All-or-nothing across a crash: a keel process SIGKILLed at a random point of
 * a multi-file commit leaves an intent journal from which the next session on the workspace
 * finishes the job, so every file is wholly the old version or the whole set wholly the new one.
 *
 * A child (keel bundled into one file, see build-keel.ts) loops over versions K → K+1 of a set of
 * four files plus one file that exists only in odd versions, alternating a `file` batch (four
 * edits and a write or delete) and an apply_patch (four updates and an add or delete). The parent
 * SIGKILLs it (children are started one ahead and wait for "go") at a random point of its next change or two (0–1.5× the time its first change took), ROUNDS times; after each kill a new Session on the workspace
 * (the recovery) must leave one consistent version: all four files at the same K, byte-exact, and
 * the extra file present (with K's bytes) exactly when K is odd. The test also requires that some
 * kills did land mid-change (the recovery had a record to finish), so it cannot pass vacuously.
 *
 * The schedule is seeded; set KEEL_CRASH_SEED to replay a failure.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import { prng } from "../fixtures/prng.js";
import { buildKeel } from "./build-keel.js";

const ROUNDS = Number(process.env.KEEL_MULTI_CRASH_ROUNDS ?? 100);
const FILES = 4;
/** Small files: the change's time goes into its commits (fsync-bound), where the kills should land. */
const FILLER_LINES = 8;

/** File j at version k: its header names both, then filler that also carries k (a mix shows). */
function content(j: number, k: number): string {
	const filler = `line of file ${j} at version ${k} ${"=".repeat(40)}\n`.repeat(FILLER_LINES);
	return `file ${j} version ${k}\n${filler}`;
}

const CHILD_SOURCE = `
import { readFileSync } from "node:fs";
import { join } from "node:path";
const [bundle, root, stateDir, files, filler] = process.argv.slice(2);
const { createSession } = await import(bundle);
const n = Number(files);
// Started ahead of time: the session (and its recovery) is created only after "go", once the
// previous child is dead and the parent has checked the workspace.
process.stdout.write("ready\\n");
process.stdin.on("end", () => process.exit(0));
await new Promise((resolve) => process.stdin.once("data", resolve));
const s = await createSession({ root, profile: "unified", stateDir });
let k = Number(/version (\\d+)/.exec(readFileSync(join(root, "f0.txt"), "utf8"))[1]);
const body = (j, v) => "line of file " + j + " at version " + v + " " + "=".repeat(40) + "\\n";
function fail(what, r) {
	process.stderr.write(what + " failed: " + JSON.stringify(r.error ?? r) + "\\n");
	process.exit(3);
}
for (let i = 0; ; i++, k++) {
	// Announced after the first change, so a kill lands in the warm loop, not in start-up.
	if (i === 1) process.stdout.write("loop\\n");
	const started = performance.now();
	const next = k + 1;
	let r;
	if (i % 2 === 0) {
		const queries = [];
		for (let j = 0; j < n; j++)
			queries.push({ type: "edit", path: "f" + j + ".txt", edits: [
				{ oldText: "file " + j + " version " + k + "\\n", newText: "file " + j + " version " + next + "\\n" },
				{ oldText: body(j, k).repeat(Number(filler)), newText: body(j, next).repeat(Number(filler)) },
			] });
		queries.push(next % 2 ? { type: "write", path: "extra.txt", content: "extra " + next + "\\n" } : { type: "delete", path: "extra.txt" });
		r = await s.call("file", { queries });
	} else {
		const lines = ["*** Begin Patch"];
		for (let j = 0; j < n; j++) {
			lines.push("*** Update File: f" + j + ".txt", "@@", "-file " + j + " version " + k, "+file " + j + " version " + next);
			for (let m = 0; m < Number(filler); m++) lines.push("-" + body(j, k).slice(0, -1), "+" + body(j, next).slice(0, -1));
		}
		if (next % 2) lines.push("*** Add File: extra.txt", "+extra " + next);
		else lines.push("*** Delete File: extra.txt");
		lines.push("*** End Patch");
		r = await s.call("apply_patch", { input: lines.join("\\n") });
	}
	if (!r.ok) fail("version " + next, r);
	if (i < 3) process.stdout.write("took " + (performance.now() - started).toFixed(1) + "\\n");
}
`;

let work: string;
let root: string;
let stateDir: string;
let script: string;
let bundle: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), "keel-multi-crash-"));
	root = join(work, "root");
	stateDir = join(work, "state");
	await mkdir(root);
	for (let j = 0; j < FILES; j++) writeFileSync(join(root, `f${j}.txt`), content(j, 0));
	script = join(work, "child.mjs");
	writeFileSync(script, CHILD_SOURCE);
	bundle = await buildKeel(work);
}, 120_000);

afterAll(async () => {
	for (const c of children) c.kill("SIGKILL");
	await rm(work, { recursive: true, force: true });
});

/** The version the workspace is at, or a description of the mix it is in. */
function consistentVersion(): number | string {
	const versions = Array.from({ length: FILES }, (_, j) => {
		const text = readFileSync(join(root, `f${j}.txt`), "utf8");
		const k = Number(/^file \d+ version (\d+)\n/.exec(text)?.[1] ?? Number.NaN);
		return text === content(j, k) ? k : Number.NaN;
	});
	const k = versions[0];
	if (!versions.every((v) => v === k) || Number.isNaN(k)) return `files at versions ${versions.join(", ")}`;
	const extra = join(root, "extra.txt");
	const present = existsSync(extra);
	if (present !== (k % 2 === 1)) return `version ${k} with extra.txt ${present ? "present" : "absent"}`;
	if (present && readFileSync(extra, "utf8") !== `extra ${k}\n`) return `version ${k} with a wrong extra.txt`;
	return k;
}

interface Child {
	proc: ChildProcessWithoutNullStreams;
	/** Resolves once the child has loaded keel and waits for "go". */
	ready: Promise<void>;
	/** Resolves when the child is in its loop, with how long its first change took (ms). */
	looping: Promise<number>;
	exit: Promise<void>;
	err: () => string;
}

function startChild(): Child {
	const proc = spawn(
		process.execPath,
		[script, bundle, root, stateDir, String(FILES), String(FILLER_LINES)],
		{
			stdio: ["pipe", "pipe", "pipe"],
		},
	);
	children.push(proc);
	proc.stdin.on("error", () => {});
	let err = "";
	proc.stderr.setEncoding("utf8");
	proc.stderr.on("data", (d: string) => {
		err += d;
	});
	const exit = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
	let out = "";
	let onReady: () => void = () => {};
	let onLoop: (ms: number) => void = () => {};
	proc.stdout.setEncoding("utf8");
	proc.stdout.on("data", (d: string) => {
		out += d;
		if (out.includes("ready\n")) onReady();
		const took = /took ([\d.]+)\nloop\n/.exec(out);
		if (took) onLoop(Number(took[1]));
	});
	const early = (what: string) => () => Promise.reject(new Error(`child exited before ${what}: ${err}`));
	const ready = new Promise<void>((resolve, reject) => {
		onReady = resolve;
		void exit.then(early("ready")).catch(reject);
	});
	const looping = new Promise<number>((resolve, reject) => {
		onLoop = resolve;
		void exit.then(early("looping")).catch(reject);
	});
	// Either may never be awaited (the last prewarmed child): no unhandled rejection.
	ready.catch(() => {});
	looping.catch(() => {});
	return { proc, ready, looping, exit, err: () => err };
}

describe("multi-file changes under SIGKILL", () => {
	it(`${ROUNDS} kills at random points: after recovery the set is always one whole version`, async () => {
		const seed = Number(process.env.KEEL_CRASH_SEED ?? Date.now() % 1_000_000);
		const random = prng(seed);
		let recovered = 0;
		let last = 0;
		let next = startChild();
		for (let round = 0; round < ROUNDS; round++) {
			const child = next;
			await child.ready;
			child.proc.stdin.write("go\n");
			// The next child loads keel while this one runs.
			next = startChild();
			// A kill anywhere in the next change or so: its length is about the first change's.
			const took = await child.looping;
			await sleep(Math.floor(random() * took * 1.5));
			child.proc.kill("SIGKILL");
			await child.exit;
			expect(child.err(), `seed ${seed}, round ${round}`).toBe("");
			const s = await Session.create({ root, stateDir });
			try {
				recovered += s.recovery.length;
				expect(
					s.recovery.every((r) => r.outcome !== "unresolved"),
					`seed ${seed}, round ${round}`,
				).toBe(true);
			} finally {
				await s.close();
			}
			const k = consistentVersion();
			expect(typeof k === "number" ? "consistent" : k, `seed ${seed}, round ${round}`).toBe("consistent");
			expect(k as number).toBeGreaterThanOrEqual(last);
			last = k as number;
		}
		next.proc.kill("SIGKILL");
		// The kills did land inside multi-file changes, and the set moved forward.
		expect(recovered).toBeGreaterThan(0);
		expect(last).toBeGreaterThan(0);
		const journal = join(stateDir, "journal");
		for (const key of readdirSync(journal)) expect(readdirSync(join(journal, key))).toEqual([]);
		console.log(
			`multi-crash: seed ${seed}, ${ROUNDS} kills, ${recovered} records finished by recovery, final version ${last}`,
		);
	}, 300_000);
});
