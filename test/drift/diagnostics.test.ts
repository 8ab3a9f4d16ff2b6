/**
 * The workspace's own checkers after a change, through the tools on real files and real checkers
 * (the repository's tsc, python3 -m py_compile, shell scripts): a change that introduces a type
 * error gets it reported in one line and in details.diagnostics, an error the project already had
 * is not (also when lines moved, and when the baseline is the kept earlier result), an error the
 * change caused in another file is; every tool that changes files reports; the checker runs
 * through the session's backend (in bwrap's sandbox); a run another change overlapped is not kept
 * as a baseline; a checker that sleeps, before or after the change, is cut off and the result says
 * so; a hostile checker's output (huge, binary, escape sequences, paths outside the root) is
 * bounded, cleaned, and never names a path outside the roots; a configuration keel does not know
 * is refused naming the valid values.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBwrapBackend } from "../../src/backend/bwrap.js";
import type { DiagnosticsReport } from "../../src/diagnostics/diagnostics.js";
import { type CallResult, Session, type SessionOptions } from "../../src/session.js";
import { bwrapAvailable } from "../contract/backends.js";

const REPO = resolve(import.meta.dirname, "../..");
const TSC = join(REPO, "node_modules/.bin/tsc");
const HAVE_TSC = existsSync(TSC);
const HAVE_PYTHON = (() => {
	try {
		execFileSync("python3", ["-c", "import py_compile"], { stdio: "ignore" });
		return true;
	} catch {
		return false;
	}
})();
if (!HAVE_TSC) console.warn("diagnostics test: node_modules/.bin/tsc missing; the tsc cases are skipped");
if (!HAVE_PYTHON) console.warn("diagnostics test: python3 missing; the py_compile case is skipped");

let base: string;
beforeAll(async () => {
	base = await mkdtemp(join(tmpdir(), "keel-diagnostics-"));
});
afterAll(async () => {
	if (base) await rm(base, { recursive: true, force: true });
});

let n = 0;
/** A fresh workspace with `files`, and a session on it. */
async function workspace(files: Record<string, string>, opts: SessionOptions) {
	const root = join(base, `w${n++}`);
	for (const [path, text] of Object.entries(files)) {
		await mkdir(join(root, path, ".."), { recursive: true });
		await writeFile(join(root, path), text);
	}
	const session = await Session.create({ root, ...opts });
	return { root, session };
}

const report = (r: CallResult): DiagnosticsReport | undefined =>
	r.ok ? (r.details as { diagnostics?: DiagnosticsReport } | undefined)?.diagnostics : undefined;
const said = (r: CallResult) => (r.ok ? r.content.map((c) => ("text" in c ? c.text : "")).join("\n") : "");
const diagnosticLines = (r: CallResult) =>
	said(r)
		.split("\n")
		.filter((l) => l.startsWith("Diagnostics:"));
/** Every new error as "path:line" and the message's first word. */
const newErrors = (r: CallResult) =>
	(report(r)?.checkers ?? []).flatMap((c) =>
		c.files.flatMap((f) => f.errors.map((e) => `${f.path}:${e.line} ${e.message.split(/[\s:]/)[0]}`)),
	);

const TSCONFIG = JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ["src"] });
/** A project that already has a type error (line 2 of a.ts). */
const A_TS = 'import { twice } from "./b";\nconst old: number = "already";\nexport const four = twice(2);\n';
const B_TS = "export function twice(x: number): number {\n  return x * 2;\n}\n";

describe.skipIf(!HAVE_TSC)("tsc through the tools", () => {
	it("reports the type error a change introduced, not the one the file had, and one it caused elsewhere", async () => {
		const { root, session } = await workspace(
			{ "tsconfig.json": TSCONFIG, "src/a.ts": A_TS, "src/b.ts": B_TS },
			// Generous: the machine running the tests may be busy; the cut-off has its own test below.
			{ diagnostics: [{ name: "tsc", timeoutMs: 60_000 }] },
		);
		await symlink(join(REPO, "node_modules"), join(root, "node_modules"));
		try {
			// Lines move (one added above the old error) and a new error comes in on another line.
			const first = await session.call("edit", {
				path: "src/a.ts",
				edits: [
					{
						oldText: 'import { twice } from "./b";\n',
						newText: 'import { twice } from "./b";\n// a comment\n',
					},
					{ oldText: "export const four", newText: 'const fresh: number = "new";\nexport const four' },
				],
			});
			expect(first.ok, JSON.stringify(first)).toBe(true);
			expect(newErrors(first)).toEqual(["src/a.ts:4 TS2322"]);
			expect(report(first)?.checkers[0]).toMatchObject({ checker: "tsc", status: "ok", baselineKept: false });
			expect(diagnosticLines(first)).toHaveLength(1);
			expect(diagnosticLines(first)[0]).toMatch(/^Diagnostics: tsc 1 new error \(src\/a\.ts:4:7 TS2322: /);
			expect(report(first)?.checkers[0].files[0].errors[0].excerpt).toBe('const fresh: number = "new";');

			// The next change of the same file compares with the kept result: no run before it.
			const second = await session.call("edit", {
				path: "src/a.ts",
				edits: [{ oldText: "// a comment", newText: "// another comment" }],
			});
			expect(newErrors(second)).toEqual([]);
			expect(report(second)?.checkers[0]).toMatchObject({ status: "ok", baselineKept: true });
			expect(diagnosticLines(second)).toEqual(["Diagnostics: tsc found no new errors."]);

			// A change of b.ts breaks its caller in a.ts: the error is reported in a.ts.
			const third = await session.call("edit", {
				path: "src/b.ts",
				edits: [{ oldText: "twice(x: number)", newText: "twice(x: string)" }],
			});
			// The changed file first, then the others.
			expect(newErrors(third)).toEqual(["src/b.ts:2 TS2362", "src/a.ts:5 TS2345"]);
			expect(report(third)?.checkers[0].baselineKept).toBe(false);

			// check "off" for the call: no checker runs.
			const off = await session.call(
				"write",
				{ path: "src/c.ts", content: 'export const c: number = "x";\n' },
				{ check: "off" },
			);
			expect(off.ok).toBe(true);
			expect(report(off)).toBeUndefined();
			expect(diagnosticLines(off)).toEqual([]);
		} finally {
			await session.close();
		}
	}, 120_000);
});

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
			const mark = join(base, `mark-${kind}`);
			const root = join(base, `ws-${kind}`);
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
		const mark = join(base, "race-mark");
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
	const path = join(base, name);
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
		const root = await mkdtemp(join(base, "cfg-"));
		const made = Session.create({ root, diagnostics } as SessionOptions);
		await expect(made).rejects.toMatchObject({
			code: "INVALID_ARGS",
			message: expect.stringMatching(message),
		});
	});
});
