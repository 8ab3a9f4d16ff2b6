/**
 * Seeded random arguments for every tool of both profiles, on both search
 * engines (the JS engine, and rg/fd when on PATH), through Session.call. Every call must answer
 * within a bound (no hang), as a structured result (no crash, no escaped rejection: vitest fails on
 * one), never INTERNAL or a generic IO_ERROR (the workspace is healthy: a failure is the input's),
 * never with Node's own error text; and nothing outside the workspace root changes.
 *
 * The seed is KEEL_FUZZ_SEED when set, else random; it is printed when a run fails (fast-check also
 * prints it with the shrunk counterexample). Rerun with KEEL_FUZZ_SEED=<seed>.
 */
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import { ERROR_CATALOGUE } from "../../src/boundary/errors.js";
import type { CallResult } from "../../src/session.js";
import { PROFILES, type Profile, toolsForProfile } from "../../src/tools/registry.js";
import { snapshotTree } from "../bad-input/fixtures.js";
import { useWorkspace } from "../fixtures/workspace.js";
import { NO_PYTHON, PYTHON } from "../python/helpers.js";

const SEED = process.env.KEEL_FUZZ_SEED
	? Number(process.env.KEEL_FUZZ_SEED)
	: Date.now() ^ (Math.random() * 2 ** 31);
/** Calls per profile and engine: 2 profiles x 2 engines x RUNS in all. */
const RUNS = 450;
/** A call that has not answered after this long is a hang (a liveness bound, not a speed check). */
const CALL_BOUND_MS = 20_000;

function onPath(name: string): boolean {
	try {
		execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
		return true;
	} catch {
		return false;
	}
}
const HAS_NATIVE = onPath("rg") && (onPath("fd") || onPath("fdfind"));
const ENGINES: Array<"js" | "native"> = HAS_NATIVE ? ["js", "native"] : ["js"];
if (!HAS_NATIVE) console.warn("rg/fd not on PATH: the fuzz test runs on the JS engine only");

/** Node and V8 wording that must never reach the model. */
const INTERNAL_TEXT =
	/TypeError|ReferenceError|ERR_[A-Z_]{3,}|The "[a-zA-Z]+" argument|spawn E2BIG|Invalid regular expression|Cannot read propert|is not a function|Maximum call stack/;

// One workspace for the file; each test opens its session on the profile and engine it fuzzes.
const ws = useWorkspace({
	prefix: "keel-fuzz-",
	shared: true,
	session: false,
	files: {
		"a.txt": "alpha\nbeta\ngamma\n",
		"src/m.ts": "export const x = 1;\n// TODO\n",
		"src/deep/crlf.txt": "one\r\ntwo\r\n",
		"bin.dat": Buffer.from([0, 1, 2, 0xff]),
		".gitignore": "ignored/\n",
	},
});
/** A directory beside the root that no call may change. */
let outside: string;

beforeAll(async () => {
	outside = ws().outside("outside");
	await mkdir(outside);
	await writeFile(join(outside, "secret.txt"), "outside\n");
});

const SPECIAL_STRINGS = [
	"",
	".",
	"..",
	"/",
	"~",
	"~/x",
	"a.txt",
	"src",
	"src/m.ts",
	"../outside/secret.txt",
	"../outside",
	"/etc/passwd",
	"/proc/self/environ",
	"/dev/zero",
	"a.txt/x",
	"x\u0000y",
	"x\uD800y",
	"\uDFFF",
	"😀",
	"\r\n",
	"*",
	"**",
	"**/*.ts",
	"{a,b",
	"[",
	"(a+)+$",
	"(",
	"\\",
	"*a*a*a*a*a*a*a*a*a*a*a*a*b",
	"a".repeat(5000),
	"x".repeat(300),
];

const text = fc.oneof(
	{ weight: 6, arbitrary: fc.constantFrom(...SPECIAL_STRINGS) },
	{ weight: 4, arbitrary: fc.string({ maxLength: 16 }) },
	{ weight: 1, arbitrary: fc.string({ maxLength: 16, unit: "binary" }) },
);
const extreme = fc.oneof(
	fc.constantFrom(0, -1, 1001, 2 ** 31, 2 ** 31 - 1, 2 ** 53, 1e20, 1e308, -1e308, 0.5, 1e-9),
	fc.double({ noNaN: true }),
	fc.integer(),
);
/** Mostly small counts that run, sometimes an extreme the range refuses. */
const num = fc.oneof(
	{ weight: 5, arbitrary: fc.integer({ min: 0, max: 40 }) },
	{ weight: 1, arbitrary: extreme },
);
/** Anything JSON can carry, for fields given the wrong type. */
const anything = fc.oneof(
	{ weight: 3, arbitrary: text },
	{ weight: 2, arbitrary: num },
	{ weight: 1, arbitrary: fc.constantFrom(true, false, null, [], {}, [1], { a: 1 }) },
);
/** A required field: nearly always there and of its type. */
const req = <T>(a: fc.Arbitrary<T>) =>
	fc.oneof(
		{ weight: 20, arbitrary: a },
		{ weight: 1, arbitrary: fc.constant(undefined) },
		{ weight: 1, arbitrary: anything },
	);
/** An optional field: often left out, mostly of its type, now and then of the wrong one. */
const maybe = <T>(a: fc.Arbitrary<T>) =>
	fc.option(fc.oneof({ weight: 15, arbitrary: a }, { weight: 1, arbitrary: anything }), {
		nil: undefined,
		freq: 2,
	});

/** A shell command that only prints (random text is quoted, never run). */
const command = fc.oneof(
	fc.constantFrom(
		"true",
		"echo hi",
		"exit 3",
		"printf 'a\\nb'",
		"sleep 0.01",
		"",
		"   ",
		"x\u0000",
		"echo \uD800",
	),
	text.map((s) => `printf '%s' '${s.replaceAll("'", "'\\''")}'`),
	fc.constant(`echo ${"y".repeat(200_000)}`),
);
/** Python that only prints or fails (random text goes in as a string literal). */
const code = fc.oneof(
	fc.constantFrom("1", "print('x')", "raise ValueError('boom')", "def", "import sys; sys.exit(3)", ""),
	text.map((s) => `print(${JSON.stringify(s)})`),
);
const edit = fc.record(
	{
		oldText: maybe(text),
		newText: req(text),
		matchMode: maybe(fc.constantFrom("exact", "normalized", "lineRange", "hashline")),
		replaceAll: maybe(fc.boolean()),
		startLine: maybe(num),
		endLine: maybe(num),
		start: maybe(text),
		end: maybe(text),
	},
	{ requiredKeys: [] },
);
const query = fc.record(
	{
		type: req(fc.constantFrom("edit", "write", "delete")),
		path: req(text),
		content: maybe(text),
		contentRef: maybe(text),
		payloadRef: maybe(text),
		edits: maybe(fc.array(edit, { maxLength: 3 })),
	},
	{ requiredKeys: [] },
);

const ARGS: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
	read: fc.record(
		{ path: req(text), offset: maybe(num), limit: maybe(num), hashline: maybe(fc.boolean()) },
		{ requiredKeys: [] },
	),
	write: fc.record({ path: req(text), content: req(text) }, { requiredKeys: [] }),
	edit: fc.record(
		{
			path: req(text),
			edits: req(fc.array(edit, { minLength: 1, maxLength: 3 })),
			oldText: maybe(text),
			newText: maybe(text),
		},
		{ requiredKeys: [] },
	),
	bash: fc.record({ command: req(command), timeout: maybe(num) }, { requiredKeys: [] }),
	grep: fc.record(
		{
			pattern: req(text),
			path: maybe(text),
			glob: maybe(text),
			ignoreCase: maybe(fc.boolean()),
			literal: maybe(fc.boolean()),
			context: maybe(num),
			limit: maybe(num),
		},
		{ requiredKeys: [] },
	),
	find: fc.record({ pattern: req(text), path: maybe(text), limit: maybe(num) }, { requiredKeys: [] }),
	ls: fc.record({ path: maybe(text), limit: maybe(num) }, { requiredKeys: [] }),
	file: fc.record({ queries: req(fc.array(query, { minLength: 1, maxLength: 3 })) }, { requiredKeys: [] }),
	python: fc.record(
		{
			code: req(code),
			scriptPath: maybe(text),
			cwd: maybe(text),
			timeout: maybe(fc.constantFrom(5, 1e-9, 3e6, 0, -1, 1e308)),
		},
		{ requiredKeys: [] },
	),
	python_jobs: fc.record(
		{
			action: fc.oneof(fc.constantFrom("list", "status", "wait", "cancel"), anything),
			jobId: maybe(text),
			timeout: maybe(fc.constantFrom(0, 0.01, 1e308, -1)),
		},
		{ requiredKeys: [] },
	),
};

/** Patch-shaped inputs for apply_patch: well formed, truncated, hostile paths, or anything. */
const patch = fc.oneof(
	text,
	fc
		.tuple(fc.constantFrom("Add", "Update", "Delete"), text, text)
		.map(
			([op, path, line]) =>
				`*** Begin Patch\n*** ${op} File: ${path}\n@@\n-${line}\n+${line}x\n*** End Patch`,
		),
	fc.constantFrom(
		"*** Begin Patch\n*** Add File: ../outside.txt\n+x\n*** End Patch",
		"*** Begin Patch\n*** Update File: f.txt\n*** Move to: /etc/passwd\n@@\n-a\n+b\n*** End Patch",
		"*** Begin Patch\n",
		"<<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
	),
);

// The codex profile's tools.
ARGS.apply_patch = fc.record({ input: req(patch) }, { requiredKeys: [] });
ARGS.shell = fc.record(
	{
		command: req(
			fc.oneof(fc.array(text, { maxLength: 3 }), fc.constant(["bash", "-lc", "echo hi"]), anything),
		),
		workdir: maybe(text),
		timeout_ms: maybe(num),
	},
	{ requiredKeys: [] },
);
ARGS.read_file = fc.record(
	{ file_path: req(text), offset: maybe(num), limit: maybe(num) },
	{ requiredKeys: [] },
);
ARGS.list_dir = fc.record({ dir_path: req(text), limit: maybe(num) }, { requiredKeys: [] });
ARGS.exec_command = fc.record(
	{
		cmd: req(command),
		workdir: maybe(text),
		tty: maybe(fc.boolean()),
		yield_time_ms: maybe(num),
		max_output_tokens: maybe(num),
	},
	{ requiredKeys: [] },
);
ARGS.write_stdin = fc.record(
	{ session_id: req(num), chars: maybe(text), yield_time_ms: maybe(num), max_output_tokens: maybe(num) },
	{ requiredKeys: [] },
);
// The unified profile's process handles.
ARGS.process = fc.record(
	{
		action: fc.oneof(fc.constantFrom("list", "read", "wait", "write", "signal", "kill"), anything),
		id: maybe(num),
		cursor: maybe(num),
		pattern: maybe(text),
		timeout: maybe(fc.constantFrom(0, 0.01, 1e308, -1)),
		chars: maybe(text),
		eof: maybe(fc.boolean()),
		signal: maybe(fc.oneof(fc.constantFrom("SIGINT", "TERM", "SIGKILL"), text)),
	},
	{ requiredKeys: [] },
);

function toolCall(profile: Profile) {
	const names = toolsForProfile(profile)
		.map((t) => t.name)
		.filter((n) => !(NO_PYTHON && n.startsWith("python")));
	return fc.oneof(
		...names.map((name) => ({
			weight: 12,
			arbitrary: fc.record({ tool: fc.constant(name), args: ARGS[name] as fc.Arbitrary<unknown> }),
		})),
		{
			weight: 1,
			arbitrary: fc.record({ tool: fc.constantFrom("nope", "__proto__", "toString", ""), args: anything }),
		},
		{ weight: 2, arbitrary: fc.record({ tool: fc.constantFrom(...names), args: anything }) },
	);
}

async function bounded(p: Promise<CallResult>, what: string): Promise<CallResult> {
	let timer: NodeJS.Timeout | undefined;
	const hang = new Promise<never>((_, reject) => {
		timer = setTimeout(
			() => reject(new Error(`no answer within ${CALL_BOUND_MS} ms: ${what}`)),
			CALL_BOUND_MS,
		);
	});
	try {
		return await Promise.race([p, hang]);
	} finally {
		clearTimeout(timer);
	}
}

/** Answers by code ("ok" for success): proof the fuzzing reaches the tools, not only the checker. */
type Tally = Map<string, number>;

function checkAnswer(r: CallResult, what: string, tally: Tally): void {
	const key = r.ok ? "ok" : r.error.code;
	tally.set(key, (tally.get(key) ?? 0) + 1);
	expect(typeof r.ok, what).toBe("boolean");
	if (r.ok) {
		expect(Array.isArray(r.content), what).toBe(true);
		return;
	}
	expect(Object.keys(ERROR_CATALOGUE), what).toContain(r.error.code);
	expect(["INTERNAL", "IO_ERROR"], `${what} -> ${r.error.code}: ${r.error.message}`).not.toContain(
		r.error.code,
	);
	// An INVALID_PATTERN message may quote the regex parser: it says what is wrong with the pattern.
	const message =
		r.error.code === "INVALID_PATTERN"
			? r.error.message.replace(/Invalid regular expression/g, "")
			: r.error.message;
	expect(message, what).not.toMatch(INTERNAL_TEXT);
	expect(r.error.message.length, what).toBeGreaterThan(0);
}

describe(`fuzzed tool calls (seed ${SEED})`, () => {
	for (const profile of PROFILES) {
		for (const engine of ENGINES) {
			it(`${profile} profile, ${engine} search engine: every call answers, specifically, inside the root`, async () => {
				const before = await snapshotTree(outside);
				const tally: Tally = new Map();
				const session = await ws().open({
					profile,
					backend: createLocalBackend({ searchEngine: engine }),
					...(PYTHON ? { python: { interpreter: PYTHON, backgroundAfterMs: 2000 } } : {}),
				});
				try {
					await fc.assert(
						fc.asyncProperty(toolCall(profile), async ({ tool, args }) => {
							const what = `${tool} ${JSON.stringify(args)?.slice(0, 300)}`;
							checkAnswer(await bounded(session.call(tool, args), what), what, tally);
						}),
						{ seed: SEED, numRuns: RUNS, endOnFailure: true },
					);
				} catch (e) {
					console.error(`fuzz failure: rerun with KEEL_FUZZ_SEED=${SEED}`);
					throw e;
				} finally {
					await session.close();
				}
				expect(await snapshotTree(outside)).toEqual(before);
				// A good share of the calls got past the schema checker and ran.
				const checkerOnly = (tally.get("INVALID_ARGS") ?? 0) + (tally.get("UNKNOWN_TOOL") ?? 0);
				if (process.env.KEEL_FUZZ_TALLY) console.log(profile, engine, Object.fromEntries(tally));
				expect(RUNS - checkerOnly).toBeGreaterThan(RUNS / 5);
				expect(tally.get("ok") ?? 0).toBeGreaterThan(RUNS / 20);
			}, 120_000);
		}
	}
});
