/**
 * A checkpoint restore under SIGKILL: its file contents are one journaled multi-file change, so a
 * keel process killed at any point of a restore leaves the workspace, once the next session has
 * recovered, wholly at one side: every file at the checkpoint's version, or every file at the
 * version the restore started from.
 *
 * A child (keel bundled into one file, build-keel.ts) with checkpoints on runs a shell command
 * that moves four files from version A to B and creates a fifth, then restores to checkpoint 0
 * (A) and to the command's checkpoint (B) in turn, forever. The parent SIGKILLs it at a random
 * point (0-1.5x the time its first restore took), ROUNDS times or more; after each kill a new Session on
 * the workspace recovers, and the files must be all A (no fifth file) or all B (with it). Some
 * kills must land inside a restore call (the child says so before and after each), so it cannot
 * pass vacuously: the rounds go on (up to MAX_ROUNDS) until one has. Kills inside the journaled
 * commit itself (the next session's recovery finishes them) are counted too.
 * The schedule is seeded; set KEEL_CRASH_SEED to replay a failure.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../../src/session.js";
import { prng } from "../fixtures/prng.js";
import { buildKeel } from "./build-keel.js";

const ROUNDS = Number(process.env.KEEL_UNDO_CRASH_ROUNDS ?? 12);
const MAX_ROUNDS = Math.max(ROUNDS, 80);
const FILES = 4;
const body = (j: number, v: string) =>
	`file ${j} at ${v}\n${`filler of ${j} at ${v} ${"=".repeat(60)}\n`.repeat(20)}`;

const CHILD_SOURCE = `
import { writeSync } from "node:fs";
const [bundle, root, stateDir, files] = process.argv.slice(2);
const { createSession } = await import(bundle);
const s = await createSession({ root, profile: "unified", stateDir, checkpoints: true });
const must = (r, what) => { if (!r.ok) { process.stderr.write(what + ": " + JSON.stringify(r.error) + "\\n"); process.exit(3); } return r; };
// Whichever side the last kill left, the command writes B (a restore to 0 then means A).
const writes = [];
for (let j = 0; j < Number(files); j++) writes.push("cp b" + j + ".src f" + j + ".txt");
must(await s.call("bash", { command: writes.join(" && ") + " && echo extra > extra.txt" }), "command");
const list = must(await s.call("checkpoints", { action: "list" }), "list").details.checkpoints;
const b = list.at(-1).id;
for (let i = 0; ; i++) {
	const t0 = performance.now();
	// Written synchronously: what the parent reads after the kill says whether a restore was running.
	writeSync(1, "begin " + i + "\\n");
	must(await s.call("checkpoints", { action: "restore", id: i % 2 ? b : 0 }), "restore " + i);
	writeSync(1, "end " + i + "\\n");
	if (i === 0) writeSync(1, "took " + (performance.now() - t0).toFixed(1) + "\\n");
}
`;

let work: string;
let root: string;
let stateDir: string;
let script: string;
let bundle: string;

beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), "keel-undo-crash-"));
	root = join(work, "root");
	stateDir = join(work, "state");
	await mkdir(root);
	for (let j = 0; j < FILES; j++) {
		writeFileSync(join(root, `f${j}.txt`), body(j, "A"));
		// The B bytes, left out of the checkpoints by .gitignore.
		writeFileSync(join(root, `b${j}.src`), body(j, "B"));
	}
	writeFileSync(join(root, ".gitignore"), "*.src\n");
	script = join(work, "child.mjs");
	writeFileSync(script, CHILD_SOURCE);
	bundle = await buildKeel(work);
}, 120_000);

afterAll(async () => {
	await rm(work, { recursive: true, force: true });
});

function side(): string {
	const sides = Array.from({ length: FILES }, (_, j) => {
		const text = readFileSync(join(root, `f${j}.txt`), "utf8");
		return text === body(j, "A") ? "A" : text === body(j, "B") ? "B" : "mixed";
	});
	const extra = existsSync(join(root, "extra.txt"));
	if (sides.every((s) => s === "A") && !extra) return "A";
	if (sides.every((s) => s === "B") && extra) return "B";
	return `files ${sides.join(",")}, extra.txt ${extra ? "present" : "absent"}`;
}

describe("checkpoint restores under SIGKILL", () => {
	it(`${ROUNDS} kills at random points: after recovery the workspace is wholly one side`, async () => {
		const seed = Number(process.env.KEEL_CRASH_SEED ?? Date.now() % 1_000_000);
		const random = prng(seed);
		// Restores the next session's recovery finished (a kill inside the journaled commit itself).
		let recovered = 0;
		// At least ROUNDS kills; more (up to MAX_ROUNDS) until one has landed mid-restore, which a
		// quiet machine's fast restores can make rare.
		let interrupted = 0;
		let round = 0;
		for (; round < MAX_ROUNDS && (round < ROUNDS || interrupted === 0); round++) {
			const proc = spawn(process.execPath, [script, bundle, root, stateDir, String(FILES)], {
				stdio: ["ignore", "pipe", "pipe"],
			});
			let err = "";
			let out = "";
			proc.stderr.on("data", (d) => {
				err += d;
			});
			const exit = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
			// Every byte it wrote has been read once its pipes closed.
			const closed = new Promise<void>((resolve) => proc.once("close", () => resolve()));
			const took = await new Promise<number>((resolve, reject) => {
				proc.stdout.on("data", (d) => {
					out += d;
					const m = /took ([\d.]+)\n/.exec(out);
					if (m) resolve(Number(m[1]));
				});
				void exit.then(() => reject(new Error(`child exited early: ${err}`)));
			});
			await sleep(Math.floor(random() * took * 1.5));
			proc.kill("SIGKILL");
			await exit;
			await closed;
			// The kill landed inside a restore call when the last line is a "begin" without its "end".
			if (/begin \d+\n$/.test(out)) interrupted++;
			expect(err, `seed ${seed}, round ${round}`).toBe("");
			const s = await Session.create({ root, stateDir });
			try {
				recovered += s.recovery.length;
				expect(side(), `seed ${seed}, round ${round}`).toMatch(/^[AB]$/);
			} finally {
				await s.close();
			}
		}
		expect(
			interrupted,
			`seed ${seed}: no kill of ${round} landed in a restore (${recovered} recovered)`,
		).toBeGreaterThan(0);
	}, 600_000);
});
