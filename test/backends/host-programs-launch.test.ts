/**
 * The short host programs that start other programs, run directly on this machine as they are
 * sent: the ssh channel's shell (start_shell.sh) and python3 start (start_python.sh), the
 * in-directory start of a process (in_dir.sh) and of a search (search_in_dir.sh), the staging of
 * a sandbox SDK's input (stage_input.sh) and the extension smoke test's limits (child_limits.sh).
 * Hostile cases: a missing directory (nothing may run elsewhere), directory names and words that
 * look like options or shell syntax, a planted rc file, a permissive umask, inherited PWD/OLDPWD.
 */
import { spawnSync } from "node:child_process";
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	realpathSync,
	rmSync,
	statSync,
	symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stageInputScript } from "../../src/backend/container/sdk-process.js";
import { searchInDir } from "../../src/backend/exec/search.js";
import { inDirArgv } from "../../src/backend/relay-process.js";
import { pythonInit, startShell } from "../../src/backend/ssh/remote-lib.js";
import { limitScript } from "../../src/extensions/child-run.js";

let dir: string;
beforeEach(() => {
	dir = mkdtempSync(join(tmpdir(), "keel-launch-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(argv: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}) {
	const r = spawnSync(argv[0], argv.slice(1), { ...opts, encoding: "utf8", timeout: 10_000 });
	if (r.error) throw r.error;
	return r;
}

const has = (cmd: string) => spawnSync("sh", ["-c", 'command -v "$1"', "sh", cmd]).status === 0;

/** A directory name a careless cd would take for an option, with shell syntax in it. */
const hostileDir = () => {
	const d = join(dir, "-P $(touch pwned); x");
	mkdirSync(d);
	return d;
};

describe("in_dir.sh: a process started in its directory", () => {
	it("runs argv there, every word as given, with the request's variables", () => {
		const cwd = hostileDir();
		const r = run(
			inDirArgv({
				argv: ["sh", "-c", 'pwd; printf "<%s>" "$@"; echo "$V"', "sh", "$HOME", "-n"],
				cwd,
				env: { V: "v;1" },
			}),
		);
		expect(r.status).toBe(0);
		expect(r.stdout).toBe(`${cwd}\n<$HOME><-n>v;1\n`);
		expect(existsSync(join(dir, "pwned"))).toBe(false);
	});

	it("exits 127 and runs nothing when the directory is not there", () => {
		const marker = join(dir, "ran");
		const r = run(inDirArgv({ argv: ["touch", marker], cwd: join(dir, "gone") }));
		expect(r.status).toBe(127);
		expect(existsSync(marker)).toBe(false);
	});
});

describe("search_in_dir.sh: a search engine started in its directory", () => {
	it("runs argv there; a missing directory runs nothing and fails", () => {
		const cwd = hostileDir();
		expect(run(searchInDir(cwd, ["pwd"])).stdout).toBe(`${cwd}\n`);
		const marker = join(dir, "ran");
		const r = run(searchInDir(join(dir, "gone"), ["touch", marker]));
		expect(r.status).not.toBe(0);
		expect(existsSync(marker)).toBe(false);
		expect(existsSync(join(dir, "pwned"))).toBe(false);
	});
});

describe("stage_input.sh: input staged in pieces to a private file", () => {
	it("appends each piece, private (0600) whatever the umask, and answers !0", () => {
		const file = join(dir, ".keel-in-x");
		for (const piece of ["AAAA", "$(touch pwned)'\"", "BBBB"]) {
			const r = run(["sh", "-c", `umask 000; exec sh -c "$0" sh "$1"`, stageInputScript(), file], {
				env: { ...process.env, KEEL_IN: piece },
			});
			expect(r.stdout).toBe("!0\n");
			expect(r.status).toBe(0);
		}
		expect(readFileSync(file, "utf8")).toBe("AAAA$(touch pwned)'\"BBBB");
		expect(statSync(file).mode & 0o777).toBe(0o600);
		expect(existsSync(join(dir, "pwned"))).toBe(false);
	});

	it("a piece that cannot be written is no !0", () => {
		const r = run(["sh", "-c", stageInputScript(), "sh", join(dir, "no", "such")], {
			env: { ...process.env, KEEL_IN: "AAAA" },
		});
		expect(r.stdout).toBe("");
		expect(r.status).not.toBe(0);
	});
});

/** The sh this machine has, and whether it is bash under another name. */
const SH = spawnSync("sh", ["-c", "command -v sh"], { encoding: "utf8" }).stdout.trim();
const SH_IS_BASH = realpathSync(SH).endsWith("/bash");
const WHICH_SHELL = '[ -n "$BASH_VERSION" ] && echo bash || echo sh\n';

describe("start_shell.sh: the shell an ssh channel runs", () => {
	it.skipIf(!has("bash"))("is bash where there is one", () => {
		const r = run([SH, "-c", startShell()], { input: WHICH_SHELL });
		expect(r.stdout).toBe("bash\n");
	});

	it.skipIf(SH_IS_BASH)("is sh where there is no bash", () => {
		const bin = join(dir, "bin");
		mkdirSync(bin);
		symlinkSync(realpathSync(SH), join(bin, "sh"));
		const r = run([SH, "-c", startShell()], { input: WHICH_SHELL, env: { PATH: bin } });
		expect(r.stdout).toBe("sh\n");
		expect(r.status).toBe(0);
	});
});

describe.skipIf(!has("python3"))("start_python.sh: a python3 program started on a fresh shell", () => {
	it("runs the program isolated, in the C locale", () => {
		const r = run(["sh"], {
			input: pythonInit(
				"import os, sys; print(os.environ['LC_ALL'], sys.flags.isolated, sys.flags.no_site)",
				undefined,
			),
			env: { ...process.env, LC_ALL: "en_US.UTF-8" },
		});
		expect(r.stdout).toBe("C 1 1\n");
	});

	it("exits 127, running nothing, on a host with no python3", () => {
		const r = run(["sh"], { input: pythonInit("print('ran')", join(dir, "empty")) });
		expect(r.status).toBe(127);
		expect(r.stdout).toBe("");
	});
});

describe("child_limits.sh: the limits the smoke test's child starts under", () => {
	it("sets the data, CPU, core and file-size limits, then execs the child without PWD or OLDPWD", () => {
		const script = limitScript({ timeoutMs: 2500, dataMb: 64 });
		const limits = run([
			"/bin/sh",
			"-c",
			script,
			"/bin/sh",
			"-c",
			"ulimit -d; ulimit -t; ulimit -c; ulimit -f",
		]);
		expect(limits.stdout.split("\n").slice(0, 4)).toEqual(["65536", String(3 * 2 + 5), "0", "131072"]);
		const env = run(["/bin/sh", "-c", script, "env"], {
			env: { PATH: process.env.PATH, PWD: "/planted", OLDPWD: "/planted" },
		});
		expect(env.status).toBe(0);
		expect(env.stdout).not.toMatch(/^(OLD)?PWD=/m);
		expect(env.stdout).toMatch(/^PATH=/m);
	});
});
