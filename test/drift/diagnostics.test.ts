/**
 * The workspace's own checkers after a change, through the tools on real files and real checkers
 * (python3 -m py_compile, shell scripts; the repository's tsc in diagnostics-tsc.test.ts): an
 * error the project already had is not reported, a new one is; every tool that changes files
 * reports; the checker runs
 * through the session's backend (in bwrap's sandbox); a run another change overlapped is not kept
 * as a baseline; a checker that sleeps, before or after the change, is cut off and the result says
 * so; a hostile checker's output (huge, binary, escape sequences, paths outside the root) is
 * bounded, cleaned, and never names a path outside the roots; a configuration keel does not know
 * is refused naming the valid values.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import { Session, type SessionOptions } from "../../src/session.js";
import { bwrapAvailable } from "../contract/backends.js";
import { diagnosticLines, newErrors, report, scratch, workspace } from "./diagnostics-fixtures.js";

const HAVE_PYTHON = (() => {
	try {
		execFileSync("python3", ["-c", "import py_compile"], { stdio: "ignore" });
		return true;
	} catch {
		return false;
	}
})();
if (!HAVE_PYTHON) console.warn("diagnostics test: python3 missing; the py_compile case is skipped");

/** A checker of the workspace's own: every line with BAD in the changed files is an error. */
const BAD_WORDS = {
	name: "bad-words",
	command: 'awk \'/BAD/ { print FILENAME ":" FNR ":1: error: a bad word" }\' {files}',
	extensions: ["txt"],
	timeoutMs: 20_000,
};

describe("every tool that changes files", () => {
	it("write, the file tool and apply_patch report the errors their change introduced", async () => {
		const { root, session: pi } = await workspace({ "old.txt": "BAD one\n" }, { diagnostics: [BAD_WORDS] });
		const unified = await Session.create({ root, profile: "unified", diagnostics: [BAD_WORDS] });
		try {
			const written = await pi.call("write", { path: "w.txt", content: "fine\nBAD\n" });
			expect(newErrors(written)).toEqual(["w.txt:2 a"]);
			const filed = await unified.call("file", {
				queries: [
					{ type: "edit", path: "old.txt", edits: [{ oldText: "one", newText: "one\nBAD two" }] },
					{ type: "write", path: "f.txt", content: "BAD\n" },
				],
			});
			expect(newErrors(filed)).toEqual(["old.txt:2 a", "f.txt:1 a"]);
			const patched = await unified.call("apply_patch", {
				input:
					"*** Begin Patch\n*** Add File: p.txt\n+ok\n+BAD\n*** Update File: old.txt\n@@\n BAD one\n-BAD two\n+fine two\n*** End Patch\n",
			});
			expect(patched.ok, JSON.stringify(patched)).toBe(true);
			expect(newErrors(patched)).toEqual(["p.txt:2 a"]);
			expect(diagnosticLines(patched)).toEqual([
				"Diagnostics: bad-words 1 new error (p.txt:2:1 a bad word). details.diagnostics has each error.",
			]);
		} finally {
			await pi.close();
			await unified.close();
		}
	}, 30_000);
});

const bwrap = await bwrapAvailable();

describe("where the checker runs", () => {
	// The checker tries to leave a mark outside the root, then reports the changed file's BAD lines.
	const marking = (mark: string) => ({
		...BAD_WORDS,
		command: `touch '${mark}' 2>/dev/null; ${BAD_WORDS.command}`,
	});
	it.each([
		["local", false],
		["bwrap", true],
	] as const)(
		"%s: through the session's backend",
		async (kind, sandboxed) => {
			if (sandboxed && bwrap !== true) {
				console.warn(`diagnostics test: bwrap case skipped (${bwrap})`);
				return;
			}
			const mark = join(scratch.base, `mark-${kind}`);
			const root = join(scratch.base, `ws-${kind}`);
			await mkdir(root);
			await writeFile(join(root, "a.txt"), "fine\n");
			const session = await Session.create({
				root,
				diagnostics: [marking(mark)],
				...(sandboxed ? { backend: createBwrapBackend({ roots: [root] }) } : {}),
			});
			try {
				const r = await session.call("edit", { path: "a.txt", edits: [{ oldText: "fine", newText: "BAD" }] });
				expect(newErrors(r)).toEqual(["a.txt:1 a"]);
				// Outside the root only a command outside the sandbox could write.
				expect(existsSync(mark)).toBe(!sandboxed);
			} finally {
				await session.close();
			}
		},
		30_000,
	);
});

describe("a racing change", () => {
	it("a run that another change overlapped is not kept as the baseline of the next change", async () => {
		const mark = join(scratch.base, "race-mark");
		// A checker of the whole project that reads the files at its start; its first run that sees
		// b.txt say "y" marks that it has read them and takes its time to answer.
		const slowOnce = await script(
			"race.sh",
			[
				'out=$(awk \'/BAD/ { print FILENAME ":" FNR ":1: error: a bad word" }\' *.txt)',
				`if grep -q y b.txt && [ ! -e '${mark}' ]; then touch '${mark}'; sleep 1.5; fi`,
				'printf "%s\\n" "$out"',
			].join("\n"),
		);
		let holdA = false;
		const { root, session } = await workspace(
			{ "a.txt": "fine\n", "b.txt": "x\n" },
			{
				profile: "unified",
				diagnostics: [{ name: "race", command: slowOnce, extensions: ["txt"], timeoutMs: 20_000 }],
				probes: {
					// The change of a.txt commits only once the run after b.txt's change has read the files.
					afterAdmission: async (canonical) => {
						if (!holdA || !canonical.endsWith("/a.txt")) return;
						for (let i = 0; i < 400 && !existsSync(mark); i++) await new Promise((r) => setTimeout(r, 25));
					},
				},
			},
		);
		try {
			// The file tool: the one that passes the admission probe.
			const edit = (path: string, from: string, to: string) =>
				session.call("file", { queries: [{ type: "edit", path, edits: [{ oldText: from, newText: to }] }] });
			// Both files known to the kept result: neither racing change runs the checker before it.
			expect(newErrors(await edit("a.txt", "fine", "good"))).toEqual([]);
			expect(newErrors(await edit("b.txt", "x", "w"))).toEqual([]);
			holdA = true;
			const [a, b] = await Promise.all([edit("a.txt", "good", "BAD"), edit("b.txt", "w", "y")]);
			expect(newErrors(a)).toEqual(["a.txt:1 a"]);
			expect(b.ok).toBe(true);
			expect(existsSync(mark)).toBe(true);
			expect(await readFile(join(root, "a.txt"), "utf8")).toBe("BAD\n");
			// b.txt's run did not see a.txt's BAD; were it kept, the next change would report it.
			const next = await edit("b.txt", "y", "z");
			expect(newErrors(next)).toEqual([]);
		} finally {
			await session.close();
		}
	}, 30_000);
});

describe.skipIf(!HAVE_PYTHON)("py_compile through the tools", () => {
	it("a file that was already broken stays unreported; a new break in another file is reported", async () => {
		const { root, session } = await workspace(
			{ "old.py": "def f(:\n    pass\n\nx = 1\n", "new.py": "def g(y):\n    return y\n" },
			{ diagnostics: [{ name: "py_compile", timeoutMs: 30_000 }] },
		);
		try {
			const kept = await session.call("edit", {
				path: "old.py",
				edits: [{ oldText: "x = 1", newText: "x = 2" }],
			});
			expect(kept.ok).toBe(true);
			expect(newErrors(kept)).toEqual([]);
			expect(diagnosticLines(kept)).toEqual(["Diagnostics: py_compile found no new errors."]);
			const broke = await session.call("edit", {
				path: "new.py",
				edits: [{ oldText: "return y", newText: "return (y" }],
			});
			expect(newErrors(broke)).toEqual(["new.py:2 SyntaxError"]);
			expect(diagnosticLines(broke)[0]).toMatch(
				/^Diagnostics: py_compile 1 new error \(new\.py:2 SyntaxError/,
			);
			// Bytecode went to a temporary prefix, not into the workspace.
			expect(existsSync(join(root, "__pycache__"))).toBe(false);
		} finally {
			await session.close();
		}
	}, 60_000);
});

/** A checker script in the test's directory (outside every workspace root). */
async function script(name: string, body: string): Promise<string> {
	const path = join(scratch.base, name);
	await writeFile(path, `#!/bin/sh\n${body}\n`);
	await chmod(path, 0o755);
	return path;
}

describe("bounds", () => {
	it("a checker that sleeps is cut off; the change is written and the result says so in one line", async () => {
		const slow = await script("slow.sh", "sleep 30\necho 'a.txt:1:1: error: never read'");
		const { root, session } = await workspace(
			{ "a.txt": "one\n" },
			{ diagnostics: [{ name: "slow", command: slow, extensions: ["txt"], timeoutMs: 300 }] },
		);
		try {
			const r = await session.call("edit", { path: "a.txt", edits: [{ oldText: "one", newText: "two" }] });
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect(await readFile(join(root, "a.txt"), "utf8")).toBe("two\n");
			expect(report(r)?.checkers[0]).toMatchObject({ checker: "slow", status: "timeout", files: [] });
			expect(diagnosticLines(r)).toEqual([
				"Diagnostics: slow did not finish within 0.3 s; this result has none of its errors.",
			]);
		} finally {
			await session.close();
		}
	}, 30_000);

	it("a run after the change that does not finish: the change stands, the result says so", async () => {
		// Quick on the state before, stuck on the state after.
		const stuck = await script(
			"stuck.sh",
			"grep -q BAD a.txt && sleep 30\necho 'a.txt:1:1: error: never read'",
		);
		const { root, session } = await workspace(
			{ "a.txt": "fine\n" },
			{ diagnostics: [{ name: "stuck", command: stuck, extensions: ["txt"], timeoutMs: 500 }] },
		);
		try {
			const r = await session.call("edit", { path: "a.txt", edits: [{ oldText: "fine", newText: "BAD" }] });
			expect(r.ok, JSON.stringify(r)).toBe(true);
			expect(await readFile(join(root, "a.txt"), "utf8")).toBe("BAD\n");
			expect(report(r)?.checkers[0]).toMatchObject({ status: "timeout", files: [], baselineKept: false });
			expect(diagnosticLines(r)).toEqual([
				"Diagnostics: stuck did not finish within 0.5 s; this result has none of its errors.",
			]);
		} finally {
			await session.close();
		}
	}, 30_000);

	it("hostile output: binary, escapes and paths outside the root are cleaned, counted and never shown", async () => {
		// It reports errors only once the file says BAD, so they are new to the change.
		const hostile = await script(
			"hostile.sh",
			[
				"grep -q BAD a.txt || exit 0",
				"printf '\\000\\001\\377\\376 binary \\033[31m junk\\n'",
				"echo '/etc/passwd:1:1: error: outside-absolute'",
				"echo '../../outside-secret.txt:2:3: error: outside-relative'",
				"printf 'a.txt:1:1: error: \\033[31mred\\033[0m and \\001bell\\n'",
				"exit 1",
			].join("\n"),
		);
		const { session } = await workspace(
			{ "a.txt": "fine\n" },
			{ diagnostics: [{ name: "hostile", command: hostile, extensions: ["txt"], timeoutMs: 20_000 }] },
		);
		try {
			const r = await session.call("edit", { path: "a.txt", edits: [{ oldText: "fine", newText: "BAD" }] });
			const all = JSON.stringify(r);
			expect(all).not.toMatch(/passwd|outside-secret|outside-absolute|outside-relative/);
			expect(report(r)?.checkers[0]).toMatchObject({
				status: "ok",
				outsideRoots: 2,
				files: [{ path: "a.txt", errors: [{ line: 1, column: 1, message: "red and bell" }], more: 0 }],
			});
			expect(diagnosticLines(r)).toEqual([
				"Diagnostics: hostile 1 new error; 2 more outside the roots, not shown (a.txt:1:1 red and bell). details.diagnostics has each error.",
			]);
		} finally {
			await session.close();
		}
	}, 30_000);

	it("huge output is read only up to its bound; thousands of errors show a few", async () => {
		const huge = await script(
			"huge.sh",
			[
				"grep -q BAD a.txt || exit 0",
				// Thousands of errors in a few files, then one giant line past the output bound.
				'i=1; while [ $i -le 3000 ]; do echo "f$((i % 9)).txt:$i:1: error: number $i"; i=$((i+1)); done',
				"head -c 3000000 /dev/zero | tr '\\000' 'A'",
				"echo; echo 'a.txt:1:1: error: past the bound'",
			].join("\n"),
		);
		const { session } = await workspace(
			{ "a.txt": "fine\n" },
			{ diagnostics: [{ name: "huge", command: huge, extensions: ["txt"], timeoutMs: 20_000 }] },
		);
		try {
			const r = await session.call("edit", { path: "a.txt", edits: [{ oldText: "fine", newText: "BAD" }] });
			const c = report(r)?.checkers[0];
			expect(c?.outputCut).toBe(true);
			expect(c?.files).toHaveLength(5);
			expect(c?.moreFiles).toBe(4);
			for (const f of c?.files ?? []) expect(f.errors).toHaveLength(3);
			expect(JSON.stringify(r)).not.toContain("past the bound");
			expect(JSON.stringify(r).length).toBeLessThan(4000);
			expect(diagnosticLines(r)).toHaveLength(1);
		} finally {
			await session.close();
		}
	}, 30_000);
});

describe("configuration fails closed", () => {
	const CASES: Array<[string, unknown, RegExp]> = [
		[
			"an unknown preset",
			["tscc"],
			/unknown checker "tscc".*presets are tsc, ruff, pyright, mypy, py_compile/,
		],
		["a preset in the wrong case", ["TSC"], /unknown checker "TSC"/],
		[
			"an unknown field",
			[{ name: "tsc", extension: ["ts"] }],
			/unknown field "extension".*name, command, extensions, timeoutMs/,
		],
		["not an array", "tsc", /must be an array of checkers/],
		["a command without extensions", [{ name: "mine", command: "true" }], /extensions is needed/],
		["a timeout out of range", [{ name: "tsc", timeoutMs: 0 }], /timeoutMs must be a whole number/],
		["the same checker twice", ["tsc", "tsc"], /names the checker "tsc" twice/],
		["neither a name nor an object", [42], /preset name .* or an object/],
	];
	it.each(CASES)("%s", async (_, diagnostics, message) => {
		const root = await mkdtemp(join(scratch.base, "cfg-"));
		const made = Session.create({ root, diagnostics } as SessionOptions);
		await expect(made).rejects.toMatchObject({
			code: "INVALID_ARGS",
			message: expect.stringMatching(message),
		});
	});
});
