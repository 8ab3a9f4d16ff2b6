/**
 * keel processes on one machine never lose each other's edits (REQUIREMENTS M4): the
 * compare-and-swap's check and rename run under flock(2) on the directory (local-dir-lock.ts), so
 * a rival keel process cannot rename its replacement in between. Four CLI processes edit their
 * own lines of one file at once: every edit reported done must be in the file. A hostile process holding that lock forever
 * must not stall keel: the edit goes on without it after the hold limit.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BIN, runKeel } from "../fixtures/keel-cli.js";

const PY = "/usr/bin/python3";
const PROCESSES = 4;
const EDITS = 100;

let dir: string;
beforeEach(async () => {
	dir = await realpath(await mkdtemp(join(tmpdir(), "keel-xproc-")));
});
afterEach(async () => {
	await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!existsSync(BIN))(
	`edits from several keel processes${existsSync(BIN) ? "" : " (skipped: no build)"}`,
	() => {
		it("no edit a process was told landed is lost to a concurrent keel process", async () => {
			// One line per edit, so every edit is independent of the others' success.
			const line = (p: number, i: number, v: string) => `p${p} e${i} ${v}`;
			const lines = Array.from({ length: PROCESSES }, (_, p) =>
				Array.from({ length: EDITS }, (_, i) => line(p, i, "old")),
			).flat();
			await writeFile(join(dir, "shared.txt"), `${lines.join("\n")}\n`);
			const batch = (p: number) =>
				Array.from({ length: EDITS }, (_, i) =>
					JSON.stringify({
						tool: "edit",
						args: { path: "shared.txt", edits: [{ oldText: line(p, i, "old"), newText: line(p, i, "new") }] },
					}),
				).join("\n");
			const runs = await Promise.all(
				Array.from({ length: PROCESSES }, (_, p) => runKeel(dir, ["batch"], { input: `${batch(p)}\n` })),
			);
			const final = new Set((await readFile(join(dir, "shared.txt"), "utf8")).split("\n"));
			expect(final.size).toBe(PROCESSES * EDITS + 1); // every line still there, once ("" at the end)
			let landed = 0;
			runs.forEach((run, p) => {
				const results = run.stdout
					.trim()
					.split("\n")
					.map((l) => JSON.parse(l));
				expect(results).toHaveLength(EDITS);
				results.forEach((r, i) => {
					// Under this much contention an edit may give up (CHANGED_ON_DISK, after its re-plans);
					// then it must not be in the file. One that reported success must be.
					if (r.ok) landed++;
					else expect(r.error.code).toBe("CHANGED_ON_DISK");
					expect(final.has(line(p, i, r.ok ? "new" : "old"))).toBe(true);
				});
			});
			expect(landed).toBeGreaterThan(0);
		}, 120_000);

		it.skipIf(!existsSync(PY))(
			"a process holding the directory's lock forever does not stall an edit",
			async () => {
				await writeFile(join(dir, "f.txt"), "value = 41\n");
				const holder = spawn(PY, [
					"-c",
					"import fcntl,os,sys,time\nfd=os.open(sys.argv[1], os.O_RDONLY)\nfcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(120)",
					dir,
				]);
				try {
					await new Promise<void>((resolve, reject) => {
						holder.stdout.once("data", () => resolve());
						holder.once("error", reject);
						holder.once("exit", () => reject(new Error("the lock holder exited")));
					});
					const run = await runKeel(dir, [
						"call",
						"edit",
						JSON.stringify({ path: "f.txt", edits: [{ oldText: "41", newText: "42" }] }),
					]);
					expect(run.stdout + run.stderr).not.toContain('"ok":false');
					expect(run.code).toBe(0);
					expect(await readFile(join(dir, "f.txt"), "utf8")).toBe("value = 42\n");
				} finally {
					holder.kill("SIGKILL");
				}
			},
			60_000,
		);
	},
);
