/**
 * Every Python and sh program in src/ is checked as it is sent: each .py compiles
 * (`python3 -m py_compile`), each .sh passes shellcheck (POSIX sh: the exec scripts run under
 * `sh -c`, the helper shell under bash or sh), and, where pyflakes is installed, every whole
 * Python program keel sends (the joined ones as joined, the bwrap sandbox's server) has no
 * undefined name or unused import. A file with placeholders is
 * checked filled, with the values the backends give it. Every file in host/ is one keel sends.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serverCode } from "../../src/backend/bwrap/server-code.js";
import { sdkWrapperScript } from "../../src/backend/container/sdk-process.js";
import { replacePy } from "../../src/backend/exec/replace-py.js";
import { execPlaceholders, statFormat } from "../../src/backend/exec/scripts.js";
import { watchdogScript } from "../../src/backend/leftovers.js";
import {
	fillPlaceholders,
	HOST_DIR,
	HOST_FILES,
	placeholdersOf,
} from "../../src/backend/remote/host-programs.js";
import { pyHelperSource } from "../../src/backend/ssh/remote-py.js";
import { runnerSource } from "../../src/backend/ssh/remote-run.js";
import { checkpointHelperSource } from "../../src/checkpoints/remote-source.js";
import { limitScript } from "../../src/extensions/child-run.js";

const SRC = join(import.meta.dirname, "../../src");
/** Deliberate constructs shellcheck misreads: SC2209 `b=bash` (the word, not its output); SC2163 `export "$kv"` (kv is NAME=VALUE). */
const SHELLCHECK_EXCLUDE = "SC2209,SC2163";

function filesUnder(dir: string, ext: string): string[] {
	return readdirSync(dir, { recursive: true, encoding: "utf8" })
		.filter((f) => f.endsWith(ext) && !f.split("/").includes("__pycache__"))
		.map((f) => join(dir, f))
		.sort();
}

/** Files whose module fills them with values of its own: the text exactly as that module sends it. */
const FILLED_BY_OWNER: Readonly<Record<string, () => string>> = {
	"watchdog.sh": watchdogScript,
	"sdk_wrapper.sh": sdkWrapperScript,
	"child_limits.sh": () => limitScript({ timeoutMs: 1000, dataMb: 64 }),
};

/** A file's text as a backend sends it: placeholders filled with the values the backends give. */
function asSent(file: string): string {
	const owner = FILLED_BY_OWNER[relative(HOST_DIR, file)];
	if (owner) return owner();
	const text = readFileSync(file, "utf8");
	if (placeholdersOf(text).length === 0) return text;
	const quoted: Record<string, string> = placeholdersOf(text).includes("REPLACE_PY")
		? { REPLACE_PY: replacePy() }
		: {};
	return fillPlaceholders(text, { ...execPlaceholders(statFormat(true)), PRECISE: "1" }, quoted);
}

const work = mkdtempSync(join(tmpdir(), "keel-lint-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Copies of the files as sent, under work/NAME (slashes flattened), so nothing is written in src/. */
function copies(files: string[]): string[] {
	return files.map((f) => {
		const out = join(work, relative(SRC, f).replaceAll("/", "__"));
		writeFileSync(out, asSent(f));
		return out;
	});
}

function has(cmd: string, args: string[]): boolean {
	return spawnSync(cmd, args, { stdio: "ignore" }).status === 0;
}

describe("host programs as files", () => {
	it("host/ holds exactly the files keel sends, each free of placeholders once filled", () => {
		const onDisk = readdirSync(HOST_DIR).filter((f) => f !== "README.md" && f !== "__pycache__");
		expect(onDisk.sort()).toEqual([...HOST_FILES].sort());
		for (const f of HOST_FILES) expect(placeholdersOf(asSent(join(HOST_DIR, f))), f).toEqual([]);
	});

	it("every .py in src/ compiles (python3 -m py_compile), alone and as joined", () => {
		const pys = filesUnder(SRC, ".py");
		expect(pys.length).toBeGreaterThan(5);
		const joined = [
			["file_helper.joined.py", pyHelperSource()],
			["runner.joined.py", runnerSource()],
			["checkpoint.joined.py", checkpointHelperSource()],
		].map(([name, text]) => {
			writeFileSync(join(work, name), text);
			return join(work, name);
		});
		const r = spawnSync("python3", ["-m", "py_compile", ...copies(pys), ...joined], { encoding: "utf8" });
		expect(r.stderr).toBe("");
		expect(r.status).toBe(0);
	});

	it("every .sh in src/ passes shellcheck", (ctx) => {
		if (!has("shellcheck", ["--version"])) {
			console.warn("skipping shellcheck: not installed (apt-get install shellcheck)");
			return ctx.skip();
		}
		const shs = filesUnder(SRC, ".sh");
		expect(shs.length).toBeGreaterThan(10);
		const r = spawnSync(
			"shellcheck",
			["--shell=sh", "--severity=warning", `--exclude=${SHELLCHECK_EXCLUDE}`, "--format=gcc", ...copies(shs)],
			{ encoding: "utf8" },
		);
		expect(r.stdout + r.stderr).toBe("");
		expect(r.status).toBe(0);
	});

	it("the host's Python programs pass pyflakes, where it is installed", (ctx) => {
		const pyflakes = ["pyflakes3", "pyflakes"].find((p) => has(p, ["--version"]));
		if (!pyflakes) {
			console.warn("skipping pyflakes: not installed");
			return ctx.skip();
		}
		const programs = [
			["file_helper.py", pyHelperSource()],
			["runner.py", runnerSource()],
			["exec_replace.py", replacePy()],
			["bwrap_server.py", serverCode()],
			["checkpoint.py", checkpointHelperSource()],
			["sdk_relay.py", readFileSync(join(HOST_DIR, "sdk_relay.py"), "utf8")],
		].map(([name, text]) => {
			const out = join(work, `flakes-${name}`);
			writeFileSync(out, text);
			return out;
		});
		const r = spawnSync(pyflakes, programs, { encoding: "utf8" });
		expect(r.stdout + r.stderr).toBe("");
		expect(r.status).toBe(0);
	});
});
