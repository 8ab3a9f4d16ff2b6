/**
 * Crash durability: a writer killed with SIGKILL at any moment leaves the target
 * as exactly one complete version (never a mix, never truncated, never missing), and the temp files
 * it leaves behind are swept by the next session on that workspace.
 *
 * A child process loops read → overwrite of one 256 KB target through keel, cycling through
 * several versions and three write paths (pi `write`, `file` write with content, `file` write with
 * a contentRef copied file to file). The parent SIGKILLs it 5–60 ms after it reports that it is
 * looping, 200 times, starting a fresh child each time. Children are started ahead of time and
 * wait for a "go" line, so their start-up (and the writing of their contentRef sources) overlaps
 * the previous child's run; each child creates its pi Session only after "go", i.e. after the
 * previous child is dead, so after every restart the dead writer's temp files must be gone (swept
 * by that Session.create, or by a pre-warmed child's). The last sweep is checked with no other
 * child alive: a new Session.create in this process must remove the temp files left by the kill.
 *
 * The random schedule is seeded; set KEEL_CRASH_SEED to replay a failure.
 *
 * Cost: each restart is a fresh node process (~0.3 CPU-s with start-up, loop and checks), so the
 * test needs ~40 s on two idle cores; the timeout leaves room for a machine busy with other jobs.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import { prng } from "../fixtures/prng.js";
import { buildKeel } from "./build-keel.js";

const KILLS = 200;
/** Extra kills allowed at the end to leave the workspace with a dead writer's temp file in it. */
const MAX_EXTRA_KILLS = 100;
const VERSIONS = 4;
const VERSION_BYTES = 256 * 1024;
const PREWARMED = 3;
const TARGET = "target.txt";
const TEMP_PREFIX = ".keel-tmp-";

const CHILD_SOURCE = `
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [bundle, root, versionsDir, count, startArg] = process.argv.slice(2);
const { Session } = await import(bundle);
const n = Number(count);
const versions = Array.from({ length: n }, (_, k) => readFileSync(join(versionsDir, "v" + k + ".txt"), "utf8"));

function fail(what, r) {
	process.stderr.write(what + " failed: " + JSON.stringify(r.error ?? r) + "\\n");
	process.exit(3);
}

// The contentRef sources are written before "go" (in refs/, under this child's pid), through a
// unified-profile session, which has \`file\`; the pi profile has \`write\`.
const uni = await Session.create({ root, profile: "unified" });
const refs = [];
for (let k = 0; k < n; k++) {
	const path = "refs/" + process.pid + "-v" + k + ".txt";
	const r = await uni.call("file", { queries: [{ type: "write", path, content: versions[k] }] });
	if (!r.ok) fail("writing " + path, r);
	refs.push(r.details.results[0].contentRef);
}

process.stdout.write("ready\\n");
// The parent keeps stdin open; if it goes away (e.g. the test run is killed), so does this child.
process.stdin.on("end", () => process.exit(0));
await new Promise((resolve) => process.stdin.once("data", resolve));

// Created only now, after the previous child died: this Session.create must sweep its temp files.
const pi = await Session.create({ root });

process.stdout.write("loop\\n");
for (let i = 0; ; i++) {
	const k = (Number(startArg) + i) % n;
	const how = i % 3;
	// Each overwrite follows a read in the same session.
	const s = how === 0 ? pi : uni;
	const read = await s.call("read", { path: "${TARGET}" });
	if (!read.ok) fail("read #" + i, read);
	const r =
		how === 0
			? await s.call("write", { path: "${TARGET}", content: versions[k] })
			: how === 1
				? await s.call("file", { queries: [{ type: "write", path: "${TARGET}", content: versions[k] }] })
				: await s.call("file", { queries: [{ type: "write", path: "${TARGET}", contentRef: refs[k] }] });
	if (!r.ok) fail("write #" + i + " (path " + how + ")", r);
}
`;

/** Version k: a header naming it, then one line repeated, so a mix or a cut is visible. */
function makeVersion(k: number): Buffer {
	const header = `#### keel crash-test version ${k} of ${VERSIONS} ####\n`;
	const line = `v${k} ${String.fromCharCode(65 + k).repeat(72)} v${k}\n`;
	const lines = Math.ceil(VERSION_BYTES / line.length) + k * 13;
	return Buffer.from(header + line.repeat(lines), "utf8");
}

interface Exit {
	code: number | null;
	signal: NodeJS.Signals | null;
}

interface Child {
	proc: ChildProcessWithoutNullStreams;
	pid: number;
	exit: Promise<Exit>;
	/** Resolves when the child printed `line`; rejects if it exits first. */
	line(line: string): Promise<void>;
	stderr(): string;
}

let work: string;
let root: string;
let versionsDir: string;
let script: string;
let bundle: string;
let versions: Buffer[];
const started: Child[] = [];

function spawnChild(start: number): Child {
	const proc = spawn(process.execPath, [script, bundle, root, versionsDir, String(VERSIONS), String(start)], {
		stdio: ["pipe", "pipe", "pipe"],
	});
	let err = "";
	let out = "";
	const seen = new Set<string>();
	const waiters = new Map<string, () => void>();
	proc.stderr.setEncoding("utf8");
	proc.stderr.on("data", (d: string) => {
		err += d;
	});
	proc.stdout.setEncoding("utf8");
	proc.stdout.on("data", (d: string) => {
		out += d;
		for (let nl = out.indexOf("\n"); nl !== -1; nl = out.indexOf("\n")) {
			const l = out.slice(0, nl);
			out = out.slice(nl + 1);
			seen.add(l);
			waiters.get(l)?.();
		}
	});
	// A child killed before it read "go" must not turn the write into an unhandled error.
	proc.stdin.on("error", () => {});
	const exit = new Promise<Exit>((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
	const child: Child = {
		proc,
		pid: proc.pid!,
		exit,
		stderr: () => err,
		line: (l) =>
			new Promise<void>((resolve, reject) => {
				if (seen.has(l)) return resolve();
				waiters.set(l, resolve);
				void exit.then(({ code, signal }) => {
					if (!seen.has(l))
						reject(
							new Error(`child ${proc.pid} exited (code ${code}, signal ${signal}) before "${l}": ${err}`),
						);
				});
			}),
	};
	started.push(child);
	return child;
}

const tempsIn = (dir: string) => readdirSync(dir).filter((n) => n.startsWith(TEMP_PREFIX));
const tempPid = (name: string) => Number.parseInt(name.slice(TEMP_PREFIX.length), 10);

function describeBytes(bytes: Buffer): string {
	const text = bytes.toString("utf8");
	const firstLine = text.slice(0, text.indexOf("\n") + 1 || 80);
	const bodyKinds = new Set(
		text
			.split("\n")
			.slice(1, -1)
			.map((l) => l.slice(0, 3)),
	);
	return `${bytes.length} bytes, header ${JSON.stringify(firstLine)}, body line kinds ${[...bodyKinds].join(",")}`;
}

beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), "keel-crash-"));
	root = join(work, "root");
	versionsDir = join(work, "versions");
	await mkdir(root);
	await mkdir(versionsDir);
	// The session module alone, as the traced commits use: smaller than the whole library to load,
	// and each of the 200 children loads it.
	bundle = await buildKeel(work, "session");
	script = join(work, "child.mjs");
	writeFileSync(script, CHILD_SOURCE);
	versions = Array.from({ length: VERSIONS }, (_, k) => makeVersion(k));
	for (const [k, v] of versions.entries()) writeFileSync(join(versionsDir, `v${k}.txt`), v);
	writeFileSync(join(root, TARGET), versions[0]);
}, 120_000);

afterAll(async () => {
	for (const c of started) {
		if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill("SIGKILL");
	}
	await Promise.all(started.map((c) => c.exit));
	if (work) await rm(work, { recursive: true, force: true });
});

describe("SIGKILL during keel overwrites", () => {
	it(`leaves one whole version after each of ${KILLS} kills, and the next session sweeps the temp files`, async () => {
		const seed = Number(process.env.KEEL_CRASH_SEED ?? Date.now() % 2 ** 31);
		const rng = prng(seed);
		const where = (n: number) => `kill #${n} (KEEL_CRASH_SEED=${seed})`;

		const versionsSeen = new Map<number, number>();
		let killsLeavingTemps = 0;
		let tempsLeft = 0;
		let sweptByRestart = 0;
		let previousTemps: string[] = [];
		let kills = 0;
		let span = 56;

		/** Start a waiting child, let it loop, SIGKILL it 5–60 ms later (see span), then check the workspace. */
		async function runAndKill(child: Child): Promise<void> {
			await child.line("ready");
			child.proc.stdin.write("go\n");
			await child.line("loop");

			// A Session.create ran after the previous child died (this child's, or a pre-warmed
			// one's): the dead writer's temp files are gone.
			expect(
				previousTemps.filter((n) => existsSync(join(root, n))),
				`${where(kills)}: temp files of the previous (dead) writer survived Session.create`,
			).toEqual([]);
			sweptByRestart += previousTemps.length;

			// 5-60 ms; while no kill has yet seen a committed overwrite (a loaded machine can take
			// longer than that for one: fsyncs), the range doubles every 20 kills, up to 2 s.
			if (versionsSeen.size <= 1 && kills > 0 && kills % 20 === 0) span = Math.min(span * 2, 2000);
			await sleep(5 + Math.floor(rng() * span));
			child.proc.kill("SIGKILL");
			const { code, signal } = await child.exit;
			kills++;
			expect(signal, `${where(kills)}: the child ended by itself (code ${code}): ${child.stderr()}`).toBe(
				"SIGKILL",
			);

			const bytes = readFileSync(join(root, TARGET));
			const k = versions.findIndex((v) => v.equals(bytes));
			expect(
				k,
				`${where(kills)}: the target is not one whole version: ${describeBytes(bytes)}`,
			).toBeGreaterThanOrEqual(0);
			versionsSeen.set(k, (versionsSeen.get(k) ?? 0) + 1);

			const temps = tempsIn(root);
			expect(
				temps.filter((n) => tempPid(n) !== child.pid),
				`${where(kills)}: temp files not from the killed child`,
			).toEqual([]);
			if (temps.length > 0) killsLeavingTemps++;
			tempsLeft += temps.length;
			previousTemps = temps;
			for (let v = 0; v < VERSIONS; v++)
				rmSync(join(root, "refs", `${child.pid}-v${v}.txt`), { force: true });
		}

		const pool: Child[] = [];
		const refill = () => {
			while (pool.length < PREWARMED + 1) pool.push(spawnChild(Math.floor(rng() * VERSIONS)));
		};
		refill();
		while (kills < KILLS) {
			const child = pool.shift()!;
			if (kills + pool.length + 1 < KILLS) refill();
			await runAndKill(child);
		}
		// No other process may sweep from here on: the last check must be the new session's own.
		for (const c of pool) c.proc.kill("SIGKILL");
		await Promise.all(pool.map((c) => c.exit));
		// If the last kill missed every commit, kill more children, one at a time, until one lands
		// mid-commit and leaves a temp file for the final sweep.
		while (tempsIn(root).length === 0 && kills < KILLS + MAX_EXTRA_KILLS) {
			previousTemps = [];
			await runAndKill(spawnChild(Math.floor(rng() * VERSIONS)));
		}

		// Any other entry in the workspace root would be debris of a torn commit.
		expect(
			readdirSync(root).filter((n) => !n.startsWith(TEMP_PREFIX) && n !== "refs" && n !== TARGET),
		).toEqual([]);
		// The children did overwrite the target (not a vacuous pass on the initial version)...
		expect(
			versionsSeen.size,
			`versions seen after kills: ${JSON.stringify([...versionsSeen])}`,
		).toBeGreaterThan(1);
		// ...and some kills landed mid-commit, leaving a temp file behind.
		expect(killsLeavingTemps, `seed ${seed}`).toBeGreaterThan(0);
		const leftover = tempsIn(root);
		expect(
			leftover.length,
			`none of ${MAX_EXTRA_KILLS} extra kills left a temp file (seed ${seed})`,
		).toBeGreaterThan(0);

		// A new session on the root sweeps the dead writer's temp files and leaves the target alone.
		const before = readFileSync(join(root, TARGET));
		const s = await Session.create({ root });
		try {
			expect(tempsIn(root)).toEqual([]);
			expect(readFileSync(join(root, TARGET)).equals(before)).toBe(true);
		} finally {
			await s.close();
		}
		console.info(
			`crash: ${kills} kills (seed ${seed}); final versions ${JSON.stringify(Object.fromEntries(versionsSeen))}; ` +
				`${killsLeavingTemps} kills left ${tempsLeft} temp files; ${sweptByRestart} swept by restarted children, ` +
				`${leftover.length} by the final Session.create`,
		);
	}, 240_000);
});
