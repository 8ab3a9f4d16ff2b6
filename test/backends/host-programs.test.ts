/**
 * The host programs (src/backend/remote/host/) run directly against a temp directory on this
 * machine, without sshd or a container: the stat line they all print, the file helper's read as
 * opened and durable write, the exec backend's read-as-opened and commit scripts, the sweep of
 * temp leftovers, and the command runner's kill of what a command leaves behind. Hostile inputs:
 * a link swapped in (last component and on the way), a FIFO, a name with a newline, a rival write
 * between plan and commit, a short transfer, a daemon that left its process group.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXIT } from "../../src/backend/exec/errors.js";
import { readCurrentScript } from "../../src/backend/exec/read-current.js";
import {
	killScript,
	lstatScript,
	statFormat,
	sweepScript,
	writeScript,
} from "../../src/backend/exec/scripts.js";
import { fillPlaceholders } from "../../src/backend/remote/host-programs.js";
import { parseReadCurrentReply } from "../../src/backend/remote/read-current-reply.js";
import { shellInit } from "../../src/backend/ssh/remote-lib.js";
import { pyHelperSource } from "../../src/backend/ssh/remote-py.js";
import { runnerSource } from "../../src/backend/ssh/remote-run.js";
import { processesWith, waitFor } from "../fixtures/processes.js";

const FMT = statFormat(true);
/** The interpreter itself (a version manager's shim on PATH costs a shell per start). */
const PYTHON =
	spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).stdout?.trim() ??
	"";
const sha = (b: string | Buffer) => createHash("sha256").update(b).digest("hex");

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "keel-host-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The stat line every host program prints: raw mode (hex), size, dev, ino, mtime, ctime (ns). */
function expectedIdent(p: string): string {
	const st = lstatSync(p, { bigint: true });
	const t = (ns: bigint) => `${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, "0")}`;
	return `${st.mode.toString(16)} ${st.size} ${st.dev} ${st.ino} ${t(st.mtimeNs)} ${t(st.ctimeNs)}`;
}

/** An exec script as the backend runs it: `sh -c SCRIPT keel ARGS...`, bounded so a hang fails. */
function sh(script: string, args: string[], input?: string | Buffer) {
	const r = spawnSync("sh", ["-c", script, "keel", ...args], { input, timeout: 10_000 });
	if (r.error) throw r.error;
	return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString("utf8") };
}

/** The file helper, one request per array; each answer's body and status, in order. */
function helper(...requests: string[][]): { body: Buffer; status: number }[] {
	const input = requests.map((args, i) => `${JSON.stringify([`m${i}`, ...args])}\n`).join("");
	const r = spawnSync(PYTHON, ["-I", "-S", "-u", "-c", pyHelperSource()], { input, timeout: 10_000 });
	if (r.error) throw r.error;
	const out = r.stdout;
	const answers: { body: Buffer; status: number }[] = [];
	let at = 0;
	for (let i = 0; i < requests.length; i++) {
		const record = out.indexOf(`\x1fm${i} r `, at);
		expect(record, `answer ${i}`).toBeGreaterThanOrEqual(0);
		const eol = out.indexOf(10, record);
		answers.push({
			body: out.subarray(at, record),
			status: Number(out.subarray(record + 4 + String(i).length, eol)),
		});
		at = eol + 1;
	}
	return answers;
}

const temps = (d: string) => readdirSync(d).filter((n) => n.startsWith(".keel-tmp-"));

describe.skipIf(!PYTHON)("host programs against a temp directory", () => {
	it("the stat line is one in all three: the file helper, the shell library, the exec script", () => {
		const p = join(dir, "a\nname");
		writeFileSync(p, "twelve bytes");
		const want = expectedIdent(p);
		expect(helper(["k_lstat", p])[0]).toEqual({ body: Buffer.from(`${want}\n`), status: 0 });
		expect(sh(`${shellInit()}k_lstat "$1"`, [p]).stdout.toString()).toBe(`${want}\n`);
		expect(sh(lstatScript(FMT), [p]).stdout.toString()).toBe(`${want}\n`);
	});

	describe("the file helper's read as opened (k_read)", () => {
		it("answers the handle's stat and its bytes, a name with a newline included", () => {
			const p = join(dir, "new\nline");
			writeFileSync(p, "body\n");
			const [a] = helper(["k_read", p]);
			expect(a.status).toBe(0);
			expect(a.body.toString()).toBe(`st ${expectedIdent(p)}\nbody\n`);
		});

		it("refuses a link swapped in for the last component, and never reads through it", () => {
			writeFileSync(join(dir, "secret"), "outside");
			symlinkSync(join(dir, "secret"), join(dir, "f"));
			const [a] = helper(["k_read", join(dir, "f")]);
			expect(a.status).toBe(1);
			expect(a.body.toString()).toContain("Too many levels of symbolic links");
			expect(a.body.toString()).not.toContain("outside");
		});

		it("answers swapped when a directory on the way became a link", () => {
			mkdirSync(join(dir, "elsewhere"));
			writeFileSync(join(dir, "elsewhere", "f"), "outside");
			symlinkSync(join(dir, "elsewhere"), join(dir, "d"));
			const [a] = helper(["k_read", join(dir, "d", "f")]);
			expect(a).toEqual({ body: Buffer.from("swapped\n"), status: 1 });
		});

		it("refuses a FIFO at once, without waiting for a writer", () => {
			const fifo = join(dir, "fifo");
			expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
			const [a] = helper(["k_read", fifo]);
			expect(a).toEqual({ body: Buffer.from(`${fifo}: not a regular file\n`), status: 1 });
		});

		it("k_readc with a bound answers big, with the stat, for a larger file", () => {
			const p = join(dir, "f");
			writeFileSync(p, "0123456789");
			expect(helper(["k_readc", p, "4"])[0].body.toString()).toBe(`big ${expectedIdent(p)}\n`);
		});
	});

	describe("the file helper's durable write (k_put)", () => {
		const put = (p: string, kind: "link" | "swap", data: string, want = ["", ""]) => {
			const temp = join(dir, ".keel-tmp-0-x");
			return helper(["k_put", p, temp, dir, "644", kind, ...want, Buffer.from(data).toString("base64")])[0];
		};

		it("creates without clobbering: a second create is exists, the first file whole", () => {
			const p = join(dir, "n\new");
			expect(put(p, "link", "first").body.toString()).toMatch(/^linked\nst /);
			expect(put(p, "link", "second").body.toString()).toBe("exists\n");
			expect(readFileSync(p, "utf8")).toBe("first");
			expect(temps(dir)).toEqual([]);
		});

		it("swaps when the file is as read; a rival's write between read and commit is changed", () => {
			const p = join(dir, "f");
			writeFileSync(p, "old");
			const planned = [sha("old"), expectedIdent(p)];
			writeFileSync(p, "rival!");
			expect(put(p, "swap", "mine", planned).body.toString()).toBe("changed\n");
			expect(readFileSync(p, "utf8")).toBe("rival!");
			expect(temps(dir)).toEqual([]);
			const now = [sha("rival!"), expectedIdent(p)];
			const a = put(p, "swap", "mine", now);
			expect(a.body.toString()).toBe(`moved\nst ${expectedIdent(p)}\n`);
			expect(readFileSync(p, "utf8")).toBe("mine");
		});

		it("a link swapped in for the target is changed: neither it nor what it points to is written", () => {
			const p = join(dir, "f");
			writeFileSync(p, "old");
			const planned = [sha("old"), expectedIdent(p)];
			writeFileSync(join(dir, "outside"), "old");
			rmSync(p);
			symlinkSync(join(dir, "outside"), p);
			expect(put(p, "swap", "mine", planned).body.toString()).toBe("changed\n");
			expect(lstatSync(p).isSymbolicLink()).toBe(true);
			expect(readFileSync(join(dir, "outside"), "utf8")).toBe("old");
			expect(temps(dir)).toEqual([]);
		});
	});

	describe("the exec backend's read as opened (exec_read_current.sh)", () => {
		it("prints the descriptor's stat, then the bytes; big alone past the bound", () => {
			const p = join(dir, "x\ny");
			writeFileSync(p, "abcdef");
			const r = sh(readCurrentScript(FMT), [p, ""]);
			expect(r.status).toBe(0);
			expect(r.stdout.toString()).toBe(`st ${expectedIdent(p)}\nabcdef`);
			expect(sh(readCurrentScript(FMT), [p, "3"]).stdout.toString()).toBe(`big ${expectedIdent(p)}\n`);
		});

		it("refuses a link (ELOOP) and a FIFO (SWAPPED) without reading or waiting", () => {
			writeFileSync(join(dir, "secret"), "outside");
			symlinkSync(join(dir, "secret"), join(dir, "l"));
			const link = sh(readCurrentScript(FMT), [join(dir, "l"), ""]);
			expect(link.status).toBe(EXIT.ELOOP);
			expect(link.stdout.length).toBe(0);
			expect(spawnSync("mkfifo", [join(dir, "p")]).status).toBe(0);
			expect(sh(readCurrentScript(FMT), [join(dir, "p"), ""]).status).toBe(EXIT.SWAPPED);
		});

		it("its reply and the file helper's k_readc read the same through the one reader", () => {
			const p = join(dir, "f");
			writeFileSync(p, "abc\0def\n");
			for (const bound of [undefined, 8, 4]) {
				const arg = bound === undefined ? "" : String(bound);
				const viaSh = parseReadCurrentReply(sh(readCurrentScript(FMT), [p, arg]).stdout, p, bound);
				const viaPy = parseReadCurrentReply(helper(["k_readc", p, arg])[0].body, p, bound);
				expect(viaPy).toEqual(viaSh);
				expect(viaSh.bytes).toEqual(bound === 4 ? null : readFileSync(p));
			}
		});
	});

	describe("the exec backend's commit (exec_write.sh), with and without python3", () => {
		for (const py of [PYTHON, ""]) {
			const label = py ? "python3" : "sh only";
			const write = (p: string, data: string, expect_: string, want: string[], newHash = sha(data)) =>
				sh(
					writeScript(FMT, true),
					[p, join(dir, ".keel-tmp-0-w"), "644", expect_, ...want, newHash, "", "", py],
					data,
				);

			it(`${label}: a rival's write between plan and commit is CHANGED; the file as planned is replaced`, () => {
				const p = join(dir, "f\nn");
				writeFileSync(p, "old");
				const planned = [sha("old"), expectedIdent(p)];
				writeFileSync(p, "rival!");
				expect(write(p, "mine", "cas", planned).status).toBe(EXIT.CHANGED);
				expect(readFileSync(p, "utf8")).toBe("rival!");
				expect(temps(dir)).toEqual([]);
				const now = [sha("rival!"), expectedIdent(p)];
				const r = write(p, "mine", "cas", now);
				expect(r.status).toBe(0);
				expect(r.stdout.toString().trim()).toBe(expectedIdent(p));
				expect(readFileSync(p, "utf8")).toBe("mine");
			});

			it(`${label}: content that did not arrive whole is PARTIAL and commits nothing`, () => {
				const p = join(dir, "f");
				writeFileSync(p, "old");
				expect(write(p, "mi", "none", ["", ""], sha("mine")).status).toBe(EXIT.PARTIAL);
				expect(readFileSync(p, "utf8")).toBe("old");
				expect(temps(dir)).toEqual([]);
			});
		}
	});

	describe("the one compare-and-swap, on every host: a rival's plant between plan and commit is refused at once", () => {
		/** Each host's replace of `p` (planned as `want`) by "mine": whether it answered changed. */
		const TEMP = ".keel-tmp-0-cas";
		const hosts: [string, (p: string, want: string[]) => boolean][] = [
			[
				"the file helper (ssh, python3)",
				(p, want) => {
					writeFileSync(join(dir, TEMP), "mine");
					const [a] = helper(["k_swap", join(dir, TEMP), p, dir, ...want]);
					rmSync(join(dir, TEMP), { force: true }); // as the ssh backend does after a refusal
					return a.body.toString() === "changed\n";
				},
			],
			[
				"the shell library (ssh, containers without python3)",
				(p, want) => {
					writeFileSync(join(dir, TEMP), "mine");
					// timeout kills its whole group: a subshell stuck opening a FIFO fails the case, not the run.
					const r = spawnSync(
						"timeout",
						["-s", "KILL", "10", "sh", "-c", `${shellInit()}k_swap "$@"; rm -f -- "$1"`, "keel"].concat(
							join(dir, TEMP),
							p,
							dir,
							...want,
						),
					);
					return r.status === 0 && r.stdout.toString() === "changed\n";
				},
			],
			...[PYTHON, ""].map((py): [string, (p: string, want: string[]) => boolean] => [
				`the exec write script (${py ? "python3" : "sh only"})`,
				(p, want) => {
					const args = [p, join(dir, TEMP), "644", "cas", ...want, sha("mine"), "", "", py];
					return sh(writeScript(FMT, true), args, "mine").status === EXIT.CHANGED;
				},
			]),
		];
		/** A rival's move after the plan: what `p` is at the commit, and what must be left as it was. */
		const plants: [string, (p: string) => string[]][] = [
			[
				"a rival's write",
				(p) => {
					writeFileSync(p, "rival!");
					return [p];
				},
			],
			[
				"a link to a file with the planned bytes",
				(p) => {
					writeFileSync(join(dir, "outside"), "old");
					rmSync(p);
					symlinkSync(join(dir, "outside"), p);
					return [join(dir, "outside")];
				},
			],
			[
				"a FIFO (no writer ever comes)",
				(p) => {
					rmSync(p);
					expect(spawnSync("mkfifo", [p]).status).toBe(0);
					return [];
				},
			],
			[
				"a link to a FIFO",
				(p) => {
					expect(spawnSync("mkfifo", [join(dir, "pipe")]).status).toBe(0);
					rmSync(p);
					symlinkSync(join(dir, "pipe"), p);
					return [];
				},
			],
		];
		for (const [host, replace] of hosts) {
			for (const [plant, move] of plants) {
				it(`${host}: ${plant}`, () => {
					const p = join(dir, "f");
					writeFileSync(p, "old");
					const want = [sha("old"), expectedIdent(p)];
					const kept = move(p).map((f) => [f, readFileSync(f, "utf8")]);
					const before = expectedIdent(p);
					expect(replace(p, want)).toBe(true);
					expect(expectedIdent(p)).toBe(before);
					for (const [f, text] of kept) expect(readFileSync(f, "utf8")).toBe(text);
					expect(temps(dir)).toEqual([]);
				});
			}
		}
	});

	it("the exec backend's kill ends a command's whole group, background children included", async () => {
		const marker = `keelhostkill${process.pid}x${Date.now()}`;
		const leader = spawn("setsid", ["sh", "-c", `sleep 300 & sleep 301 & sleep 302; : ${marker}`], {
			stdio: "ignore",
		});
		try {
			expect(await waitFor(() => processesWith(marker).length > 0, 5000)).toBe(true);
			const pgid = Number(
				spawnSync("ps", ["-o", "pgid=", "-p", processesWith(marker)[0].split(" ")[0]])
					.stdout.toString()
					.trim(),
			);
			const group = () =>
				spawnSync("pgrep", ["-g", String(pgid)], { encoding: "utf8" })
					.stdout.split("\n")
					.filter(Boolean);
			expect(await waitFor(() => group().length === 4, 5000)).toBe(true);
			expect(sh(killScript(), [String(pgid)]).status).toBe(0);
			expect(await waitFor(() => group().length === 0, 5000)).toBe(true);
		} finally {
			leader.kill("SIGKILL");
		}
	});

	it("the sweeps remove old temp files only: not fresh ones, directories, links or their targets", () => {
		const old = Date.now() / 1000 - 3600;
		const mk = (name: string) => {
			writeFileSync(join(dir, name), "x");
			utimesSync(join(dir, name), old, old);
		};
		const plant = () => {
			mk(".keel-tmp-old");
			mk(".keel-tmp-new\nline");
			writeFileSync(join(dir, ".keel-tmp-fresh"), "x");
			mkdirSync(join(dir, ".keel-tmp-dir"));
			mk("target");
			symlinkSync(join(dir, "target"), join(dir, ".keel-tmp-link"));
			mk("keep");
		};
		const left = [".keel-tmp-dir", ".keel-tmp-fresh", ".keel-tmp-link", "keep", "target"];
		plant();
		const r = sh(sweepScript(), [dir, "15"]);
		expect(r.stdout.toString().split("\0").filter(Boolean).sort()).toEqual(
			[join(dir, ".keel-tmp-new\nline"), join(dir, ".keel-tmp-old")].sort(),
		);
		expect(readdirSync(dir).sort()).toEqual(left);
		rmSync(dir, { recursive: true });
		mkdirSync(dir);
		plant();
		sh(`${shellInit()}k_sweep "$1" 15`, [dir]);
		expect(readdirSync(dir).sort()).toEqual(left);
		expect(existsSync(join(dir, "target"))).toBe(true);
	});

	it("placeholders: a value that is not a plain word, a missing one, or a quote in a quoted program is refused", () => {
		expect(() => fillPlaceholders("exit @@X@@", { X: "1; rm -rf /" })).toThrow(/@@X@@/);
		expect(() => fillPlaceholders("exit @@X@@", {})).toThrow(/no value/);
		expect(() => fillPlaceholders("p '@@P@@'", {}, { P: "print('x')" })).toThrow(/single quote/);
		expect(() => fillPlaceholders("p @@P@@", {}, { P: "print(1)" })).toThrow(/between single quotes/);
		expect(fillPlaceholders("p '@@P@@' @@N@@", { N: "7" }, { P: "print(1)" })).toBe("p 'print(1)' 7");
	});
});

/** The runner's frames: kind, job id, payload (a 9-byte header, then the payload). */
function frames(buf: Buffer): { kind: string; id: number; payload: Buffer }[] {
	const out: { kind: string; id: number; payload: Buffer }[] = [];
	for (let at = 0; at + 9 <= buf.length; ) {
		const len = buf.readUInt32BE(at + 5);
		if (at + 9 + len > buf.length) break;
		out.push({
			kind: String.fromCharCode(buf[at]),
			id: buf.readUInt32BE(at + 1),
			payload: buf.subarray(at + 9, at + 9 + len),
		});
		at += 9 + len;
	}
	return out;
}

/** Pids whose environment holds KEEL_CALL_TAG=tag (this user's processes). */
function tagged(tag: string): number[] {
	const needle = Buffer.from(`KEEL_CALL_TAG=${tag}\0`);
	return readdirSync("/proc")
		.filter((n) => /^\d+$/.test(n))
		.filter((n) => {
			try {
				return readFileSync(`/proc/${n}/environ`).includes(needle);
			} catch {
				return false;
			}
		})
		.map(Number);
}

describe.skipIf(!PYTHON || !existsSync("/proc/self/environ"))(
	"the command runner (runner*.py) on this machine",
	() => {
		let runner: ChildProcess | undefined;
		afterEach(() => runner?.kill("SIGKILL"));

		it("kills what a command left behind (a background job and a setsid daemon) before its end", async () => {
			runner = spawn(PYTHON, ["-I", "-S", "-c", runnerSource()], {
				cwd: dir,
				stdio: ["pipe", "pipe", "inherit"],
			});
			const chunks: Buffer[] = [];
			const tag = `keel-host-test-${process.pid}-${Date.now()}`;
			const done = new Promise<void>((resolve, reject) => {
				runner?.stdout?.on("data", (c: Buffer) => {
					chunks.push(c);
					if (frames(Buffer.concat(chunks)).some((f) => f.kind === "d" && f.id === 1)) resolve();
				});
				runner?.on("exit", () => reject(new Error("the runner exited")));
			});
			const command = "sleep 60 & setsid sleep 61 & echo started";
			runner.stdin?.write(`${JSON.stringify(["r", 1, dir, command, {}, tag])}\n`);
			await done;
			const got = frames(Buffer.concat(chunks)).filter((f) => f.id === 1);
			expect(got.map((f) => f.kind).filter((k) => k !== "o")).toEqual(["p", "x", "d"]);
			expect(Buffer.concat(got.filter((f) => f.kind === "o").map((f) => f.payload)).toString()).toBe(
				"started\n",
			);
			expect(got.find((f) => f.kind === "x")?.payload.toString()).toBe("0");
			expect(tagged(tag)).toEqual([]);
		});
	},
);
