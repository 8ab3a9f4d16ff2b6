/**
 * The Spawner (src/backend/spawn/) starts local programs with posix_spawn instead of Node's fork.
 * It must give a program exactly what Node's spawn gives it, reap only its own children, report
 * every exit, and hand nothing else of this process to the program. Real processes throughout.
 */
import { execFile } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadNativeLib } from "../../src/backend/native-lib.js";
import { runInGroup } from "../../src/backend/run-group.js";
import { Spawner, type StartOptions } from "../../src/backend/spawn/spawner.js";
import { collect, type Ended } from "../fixtures/child-output.js";

const native = loadNativeLib();
const why = native ? undefined : "koffi cannot load here";

function run(spawner: Spawner, argv: string[], opts: Partial<StartOptions> = {}, input?: string) {
	return collect(
		spawner.start(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"], ...opts }),
		input,
	) as Promise<Ended>;
}

/** What a shell sees of itself: session, cwd, env, argv (its descriptors: fdsOf). */
const SELF_REPORT = `
printf '[%s]\\n' "$@"
set -- $(cut -d' ' -f5,6 /proc/$$/stat)
[ "$1" = $$ ] && echo "leads its group"; [ "$2" = $$ ] && echo "leads its session"
echo "cwd $(pwd -P)"
env | grep -v '^PWD=\\|^SHLVL=\\|^_=' | sort
`;

/** The shell's own descriptors and their kinds ("0 socket"), listed by ls before anything else. */
const FDS_FIRST = "ls -l /proc/$$/fd; echo ---\n";

function fdsOf(out: string): { fds: string[]; rest: string } {
	const [list, rest] = out.split("---\n");
	const fds = list
		.split("\n")
		.map((l) => /(\d+) -> ([a-z]+|\/)/.exec(l))
		.filter((m) => m !== null)
		.map((m) => `${m[1]} ${m[2]}`);
	return { fds, rest };
}

let work = "";
beforeAll(async () => {
	work = await mkdtemp(join(tmpdir(), "keel-posix-spawn-"));
});
afterAll(async () => {
	if (work) await rm(work, { recursive: true, force: true });
});

describe.skipIf(why !== undefined)(`posix_spawn's children${why ? ` (skipped: ${why})` : ""}`, () => {
	it("'auto' starts the first program with Node's spawn and the later ones with posix_spawn", async () => {
		const spawner = new Spawner();
		expect(spawner.usesPosixSpawn).toBe(false);
		expect((await run(spawner, ["true"])).code).toBe(0);
		expect(spawner.usesPosixSpawn).toBe(false);
		expect((await run(spawner, ["true"])).code).toBe(0);
		expect(spawner.usesPosixSpawn).toBe(true);
	});

	it("a program sees what Node's spawn shows it: descriptors, signals, session, cwd, env, argv", async () => {
		const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ODD: "a b\tc'\"$x", EMPTY: "" };
		const argv = ["sh", "-c", FDS_FIRST + SELF_REPORT, "zero", "one two", "", "é\n✓"];
		const seen: { fds: string[]; rest: string }[] = [];
		const signals: string[] = [];
		for (const engine of ["fork", "posix_spawn"] as const) {
			const spawner = new Spawner({ engine });
			expect(spawner.usesPosixSpawn).toBe(engine === "posix_spawn");
			const r = await run(
				spawner,
				argv,
				{ cwd: work, env, detached: true, stdio: ["pipe", "pipe", "pipe"] },
				"",
			);
			expect(r.err).toBe("");
			expect(r.code).toBe(0);
			seen.push(fdsOf(r.out));
			// Signals as the program finds them at its start (a shell changes its mask while it waits).
			const sig = await run(spawner, ["grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"], {
				detached: true,
			});
			signals.push(sig.out);
		}
		expect(signals[1]).toBe("SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
		expect(signals[1]).toBe(signals[0]);
		// Only its three sockets; Node's fork may pass more (a pipe of the test runner's, here).
		expect(seen[1].fds).toEqual(["0 socket", "1 socket", "2 socket"]);
		expect(seen[0].fds.slice(0, 3)).toEqual(seen[1].fds);
		expect(seen[1].rest).toBe(seen[0].rest);
		expect(seen[1].rest).toContain("leads its group\nleads its session\n");
		expect(seen[1].rest).toContain(`cwd ${work}\n`);
		expect(seen[1].rest).toContain("ODD=a b\tc'\"$x\n");
		expect(seen[1].rest).toContain("[one two]\n[]\n[é\n✓]\n");
	});

	it("a descriptor this process holds without close-on-exec does not reach the program", async () => {
		const secret = join(work, "secret");
		writeFileSync(secret, "outside the roots\n");
		const opened = openSync(secret, "r"); // Node opens with O_CLOEXEC ...
		const dup = native!.lib.func("int dup(int fd)");
		const leaky: number = dup(opened); // ... a dup(2) has no such flag, as a native addon's might not
		try {
			expect(leaky).toBeGreaterThan(2);
			const ask = ["sh", "-c", `readlink /proc/$$/fd/${leaky} || echo none`];
			const viaFork = await run(new Spawner({ engine: "fork" }), ask);
			expect(viaFork.out).toBe(`${secret}\n`); // the attack is real where fork is used
			const viaSpawn = await run(new Spawner({ engine: "posix_spawn" }), ask);
			expect(viaSpawn.out).toBe("none\n");
		} finally {
			closeSync(leaky);
			closeSync(opened);
		}
	});

	it("200 children at once: every exit status arrives, and none is left a zombie", async () => {
		const spawner = new Spawner({ engine: "posix_spawn" });
		const ends = await Promise.all(
			Array.from({ length: 200 }, (_, i) => run(spawner, ["sh", "-c", `exit ${i % 7}`])),
		);
		expect(ends.map((e) => e.code)).toEqual(Array.from({ length: 200 }, (_, i) => i % 7));
		for (const e of ends) {
			let stat = "";
			try {
				stat = readFileSync(`/proc/${e.pid}/stat`, "utf8");
			} catch {
				continue; // reaped and gone
			}
			// The pid may be someone else's by now; it must not be our unreaped child.
			const [, state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
			expect(state === "Z" && Number(ppid) === process.pid).toBe(false);
		}
		expect(process.listenerCount("SIGCHLD")).toBe(0);
	});

	it("Node's own children stay Node's: their exits arrive while posix_spawn children run", async () => {
		const spawner = new Spawner({ engine: "posix_spawn" });
		const ours = Array.from({ length: 20 }, () => run(spawner, ["sh", "-c", "sleep 0.2; exit 3"]));
		const nodes = Array.from(
			{ length: 10 },
			(_, i) =>
				new Promise<number | null>((resolve) => {
					execFile("sh", ["-c", `exit ${10 + i}`], (e) =>
						resolve(e ? ((e as { code?: number }).code ?? null) : 0),
					);
				}),
		);
		expect(await Promise.all(nodes)).toEqual(Array.from({ length: 10 }, (_, i) => 10 + i));
		expect((await Promise.all(ours)).map((e) => e.code)).toEqual(Array(20).fill(3));
	});

	it("a signal's death is reported by name, and a reaped child is never signalled again", async () => {
		const spawner = new Spawner({ engine: "posix_spawn" });
		const child = spawner.start("sh", ["-c", "kill -TERM $$"], { stdio: ["ignore", "pipe", "pipe"] });
		const end = (await collect(child)) as Ended;
		expect(end).toMatchObject({ code: null, signal: "SIGTERM" });
		expect(child.signalCode).toBe("SIGTERM");
		expect(child.kill("SIGKILL")).toBe(false);
	});

	it("abort and timeout kill the whole group, a background child too", async () => {
		const spawner = new Spawner({ engine: "posix_spawn" });
		for (const how of ["timeout", "abort"] as const) {
			let out = "";
			const controller = new AbortController();
			const result = runInGroup({
				argv: ["sh", "-c", "sleep 300 & echo $!; sleep 300"],
				spawner,
				...(how === "timeout" ? { timeoutMs: 400 } : { signal: controller.signal }),
				onData: (c) => {
					out += c;
					if (how === "abort" && out.includes("\n")) controller.abort();
				},
			});
			const r = await result;
			expect(how === "timeout" ? r.timedOut : r.aborted).toBe(true);
			const background = Number(out.trim());
			expect(background).toBeGreaterThan(0);
			let state = "";
			for (let i = 0; i < 40; i++) {
				try {
					state = readFileSync(`/proc/${background}/stat`, "utf8").split(") ")[1].split(" ")[0];
				} catch {
					state = "gone";
				}
				if (state === "gone" || state === "Z") break;
				await new Promise((r) => setTimeout(r, 50));
			}
			expect(["gone", "Z"]).toContain(state);
		}
	});

	it("a program that cannot start fails as under Node's spawn, and leaks no descriptor", async () => {
		const plain = join(work, "not-executable");
		writeFileSync(plain, "#!/bin/sh\necho hi\n");
		const cases: [string, Partial<StartOptions>][] = [
			[join(work, "missing"), {}],
			[plain, {}],
			["/bin/true", { cwd: join(work, "no-such-dir") }],
			["no-such-program-on-path", {}],
		];
		for (const [file, opts] of cases) {
			const codes: string[] = [];
			for (const engine of ["fork", "posix_spawn"] as const) {
				const spawner = new Spawner({ engine });
				const r = await collect(spawner.start(file, [], { stdio: ["pipe", "pipe", "pipe"], ...opts }));
				codes.push("error" in r ? r.error : `exit ${r.code}`);
			}
			expect(codes[1], file).toBe(codes[0]);
			expect(codes[1]).toMatch(/^E/);
		}
		const spawner = new Spawner({ engine: "posix_spawn" });
		const before = readdirSync("/proc/self/fd").length;
		for (let i = 0; i < 50; i++)
			await collect(spawner.start(join(work, "missing"), [], { stdio: ["pipe", "pipe", "pipe"] }));
		expect(readdirSync("/proc/self/fd").length).toBe(before);
	});

	it("out of descriptors: EMFILE as an error, nothing leaked, and the next start works", async () => {
		const spawner = new Spawner({ engine: "posix_spawn" });
		const getrlimit = native!.lib.func("int getrlimit(int resource, _Out_ uint8_t *rlim)");
		const setrlimit = native!.lib.func("int setrlimit(int resource, const uint8_t *rlim)");
		const RLIMIT_NOFILE = 7;
		const saved = Buffer.alloc(16);
		expect(getrlimit(RLIMIT_NOFILE, saved)).toBe(0);
		const open = readdirSync("/proc/self/fd").length; // the listing's own descriptor included
		const tight = Buffer.from(saved);
		tight.writeBigUInt64LE(BigInt(open + 2), 0); // room for one socket pair of the three
		let r: Awaited<ReturnType<typeof collect>>;
		expect(setrlimit(RLIMIT_NOFILE, tight)).toBe(0);
		try {
			r = await collect(spawner.start("true", [], { stdio: ["pipe", "pipe", "pipe"] }));
		} finally {
			expect(setrlimit(RLIMIT_NOFILE, saved)).toBe(0);
		}
		expect(r).toEqual({ error: "EMFILE" });
		expect(readdirSync("/proc/self/fd").length).toBe(open);
		expect((await run(spawner, ["sh", "-c", "exit 5"])).code).toBe(5);
	});

	it("a NUL byte in an argument, the environment or the cwd is refused and nothing runs", () => {
		const spawner = new Spawner({ engine: "posix_spawn" });
		const marker = join(work, "ran");
		const argvs: [string[], Partial<StartOptions>][] = [
			[["sh", "-c", `touch ${marker}\0; true`], {}],
			[["sh", "-c", `touch ${marker}`], { env: { PATH: "/usr/bin:/bin", X: "a\0b" } }],
			[["sh", "-c", `touch ${marker}`], { cwd: `${work}\0/x` }],
		];
		for (const [argv, opts] of argvs) {
			expect(() =>
				spawner.start(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"], ...opts }),
			).toThrow(/NUL/);
		}
		expect(existsSync(marker)).toBe(false);
	});

	it("many spawners at once: no listener warning, and no listener left behind", async () => {
		const warnings: string[] = [];
		const onWarning = (w: Error) => warnings.push(w.name);
		process.on("warning", onWarning);
		const max = process.getMaxListeners();
		try {
			const spawners = Array.from({ length: 15 }, () => new Spawner({ engine: "posix_spawn" }));
			const ends = await Promise.all(spawners.map((s) => run(s, ["sh", "-c", "sleep 0.1; exit 4"])));
			expect(ends.map((e) => e.code)).toEqual(Array(15).fill(4));
			await new Promise((r) => setImmediate(r));
			expect(warnings).toEqual([]);
			expect(process.listenerCount("SIGCHLD")).toBe(0);
			expect(process.getMaxListeners()).toBe(max);
		} finally {
			process.off("warning", onWarning);
		}
	});
});
