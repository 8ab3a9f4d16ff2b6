/**
 * A child started with its stderr held (Spawner's holdStderr, used for grep's parallel rg beside
 * the probe): its first write to stderr blocks until released, then everything it writes arrives,
 * the filler never. Killed while held, or its parent killed, it is never left blocked for good.
 * Real processes throughout.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadNativeLib } from "../../src/backend/native-lib.js";
import { type ChildLike, SpawnedChild } from "../../src/backend/spawn/child.js";
import { Spawner } from "../../src/backend/spawn/spawner.js";
import { buildKeel } from "../durability/build-keel.js";
import { collect, type Ended } from "../fixtures/child-output.js";
import { HAS_RG, RG, realTools } from "../search/rg-script.js";

const why = loadNativeLib() ? "" : " (skipped: koffi cannot load here)";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the child wrote and how it ended (it must start: a spawn error fails the test). */
const ended = (child: ChildLike) => collect(child) as Promise<Ended>;

function held(argv: string[]): SpawnedChild {
	const child = new Spawner({ engine: "posix_spawn" }).start(argv[0], argv.slice(1), {
		stdio: ["ignore", "pipe", "pipe"],
		holdStderr: true,
	});
	if (!(child instanceof SpawnedChild)) throw new Error("not started through posix_spawn");
	return child;
}

const openFds = () => readdirSync("/proc/self/fd").length;

let work = "";
beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), "keel-held-"));
});
afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

describe.skipIf(why !== "")(`a child with its stderr held${why}`, () => {
	it("stops at its first stderr write until released; then its stderr arrives whole, no filler", async () => {
		const after = join(work, "after-release");
		const child = held(["/bin/sh", "-c", `echo out; echo 'first line' >&2; : > '${after}'; echo more >&2`]);
		const end = ended(child);
		expect(child.stderrHeld).toBe(true);
		await sleep(300);
		// stdout is not held: what it wrote before the stderr write arrived.
		expect(existsSync(after)).toBe(false);
		expect(child.exitCode).toBeNull();
		child.releaseStderr();
		const r = await end;
		expect(r).toMatchObject({ code: 0, signal: null, out: "out\n", err: "first line\nmore\n" });
		expect(existsSync(after)).toBe(true);
	});

	it("a megabyte on stderr after the release arrives byte for byte", async () => {
		const child = held(["/bin/sh", "-c", "head -c 1048576 /dev/zero | tr '\\0' e >&2"]);
		const end = ended(child);
		await sleep(50);
		child.releaseStderr();
		const r = await end;
		expect(r.code).toBe(0);
		expect(r.err.length).toBe(1048576);
		expect(/^e+$/.test(r.err)).toBe(true);
	});

	it("killed while held: it ends, 'close' is emitted, and its pipe's descriptor is closed", async () => {
		const before = openFds();
		const child = held(["/bin/sh", "-c", "echo held >&2; sleep 30"]);
		const end = ended(child);
		await sleep(100);
		child.kill("SIGKILL");
		const r = await end;
		expect(r).toMatchObject({ code: null, signal: "SIGKILL", out: "", err: "" });
		expect(child.stderrHeld).toBe(false);
		child.releaseStderr(); // too late: does nothing, throws nothing
		await sleep(20);
		expect(openFds()).toBe(before);
	});

	it("ending without writing to stderr: 'close' comes without a release", async () => {
		const r = await ended(held(["/bin/sh", "-c", "echo only-out"]));
		expect(r).toMatchObject({ code: 0, signal: null, out: "only-out\n", err: "" });
	});

	it("through Node's spawn (no posix_spawn) the hold is not available: the child just runs", async () => {
		const child = new Spawner({ engine: "fork" }).start("/bin/sh", ["-c", "echo e >&2"], {
			stdio: ["ignore", "pipe", "pipe"],
			holdStderr: true,
		});
		expect(child instanceof SpawnedChild).toBe(false);
		expect((await ended(child)).err).toBe("e\n");
	});

	it.skipIf(!HAS_RG)(
		`rg held at the ready mark has not walked; its parent killed, it does not stay${RG}`,
		async () => {
			// A tree, and a host process (keel's stand-in) that starts a held rg over it and is killed.
			const tree = join(work, "tree");
			for (let d = 0; d < 20; d++) {
				await mkdir(join(tree, `d${d}`), { recursive: true });
				for (let f = 0; f < 20; f++) await writeFile(join(tree, `d${d}`, `f${f}.txt`), "needle\n");
			}
			const script = join(work, "host.mjs");
			const spawnerModule = await buildKeel(work, "backend/spawn/spawner");
			await writeFile(
				script,
				`import { Spawner } from ${JSON.stringify(spawnerModule)};
const child = new Spawner({ engine: "posix_spawn" }).start(${JSON.stringify(realTools.rg?.path)},
  ["--no-config", "--", "needle", "/dev/null/keel-rg-walk-starts", ${JSON.stringify(tree)}],
  { stdio: ["ignore", "pipe", "pipe"], holdStderr: true });
child.stdout.on("data", (d) => process.stdout.write("OUT " + d.length + "\\n"));
process.stdout.write("PID " + child.pid + "\\n");
setInterval(() => {}, 1000);
`,
			);
			const host = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] });
			try {
				let said = "";
				host.stdout.on("data", (d: Buffer) => {
					said += d;
				});
				for (let i = 0; i < 300 && !/PID \d+/.test(said); i++) await sleep(50);
				const rgPid = Number(/PID (\d+)/.exec(said)?.[1]);
				expect(rgPid).toBeGreaterThan(0);
				await sleep(500);
				// Held: started, blocked on its mark's message, not one match printed.
				expect(said).not.toContain("OUT");
				const state = () => {
					try {
						return readFileSync(`/proc/${rgPid}/stat`, "utf8").split(") ")[1]?.[0];
					} catch {
						return undefined;
					}
				};
				expect(state()).toBe("S");
				host.kill("SIGKILL");
				// Its stderr's far end is gone: the write fails, and rg ends (at most after one walk of a
				// small tree, its output going nowhere) instead of waiting forever.
				let s = state();
				for (let i = 0; i < 200 && s !== undefined && s !== "Z"; i++) {
					await sleep(50);
					s = state();
				}
				expect(s === undefined || s === "Z").toBe(true);
			} finally {
				host.kill("SIGKILL"); // a failed check must not leave the host (and its rg) behind
			}
		},
	);
});
