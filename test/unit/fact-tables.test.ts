/**
 * The two fact tables, checked as tables: every fact has a catalogued code, the error built from
 * it carries that code's retry class, and its words, given the extras the backends send, say
 * something whole (no "undefined" left in a sentence, the path shown where it is a path fact).
 * A sample per fact is required: a fact added without one fails here until it is given words
 * that read right.
 */
import { describe, expect, it } from "vitest";
import {
	BACKEND_FACT_WORDS,
	type BackendFact,
	type BackendFactExtras,
	backendFact,
	backendFactMessage,
} from "../../src/boundary/backend-facts.js";
import { ERROR_CATALOGUE } from "../../src/boundary/errors.js";
import {
	inModelsWords,
	PATH_FACT_WORDS,
	type PathFact,
	type PathFactExtras,
	pathFact,
	pathFactMessage,
	whoHolds,
} from "../../src/boundary/path-facts.js";

const holders = [{ pid: 41, command: "python3" }, { pid: 42 }];

/** Extras as a backend sends them, for each path fact. */
const PATH_SAMPLES: Record<PathFact, PathFactExtras> = {
	"changed-since-read": {},
	"replaced-while-opening": {},
	"dir-replaced-while-opening": {},
	"changed-while-reading": {},
	"source-changed": { during: true },
	"already-exists": {},
	"not-found": {},
	"is-a-directory": {},
	"not-a-directory": {},
	"wants-a-directory": {},
	"wants-a-file": {},
	"delete-wants-a-file": { operation: '"*** Delete File:"' },
	"not-a-file-or-link": {},
	"not-a-file": {},
	"not-writable-in-place": {},
	"owner-not-kept": { uid: 0, gid: 0 },
	"attributes-not-kept": { detail: "set security.selinux" },
	"mounted-over": {},
	"permission-denied": {},
	"link-loop": {},
	"name-too-long": {},
	"nested-too-deep": { where: "a/b/c" },
	"open-for-writing": { holders },
	"directory-lock-held": { holders, heldSeconds: 2 },
	"changed-during-sandbox-setup": {},
	"cwd-not-entered": {},
	"arrived-incomplete": {},
	"operation-failed": { exitCode: 3, output: "mv: cannot move" },
	"listing-failed": { output: "find: broken" },
	"malformed-reply": { malformed: "no newline", output: '"st 1 2"' },
};

/** Extras as a backend sends them, for each backend fact (several where the words branch). */
const BACKEND_SAMPLES: Record<BackendFact, BackendFactExtras[]> = {
	"pattern-invalid": [{ kind: "regex", pattern: "(", reason: "missing )" }, { reason: "regex parse error" }],
	"pattern-too-large": [
		{ measure: "characters", size: 9000, limit: 8192 },
		{ measure: "glob-characters", size: 9000 },
		{ measure: "program", size: 30000, limit: 20000 },
		{ measure: "repeat", reason: "invalid repeat count" },
		{ measure: "compiled-bytes", limit: 10485760 },
	],
	"search-aborted": [{}],
	"search-tool-failed": [
		{ tool: "rg", reason: "boom" },
		{ tool: "rg", exitCode: 101, reason: "panic" },
	],
	"search-tool-missing": [{ tool: "fd" }],
	"search-tool-not-started": [{ tool: "rg", reason: "spawn EACCES" }],
	"search-fallback-needs-base64": [{}],
	"target-lacks-coreutils": [{ reason: "stat: unrecognized option" }, { reason: "" }],
	"unexpected-stat": [{ reason: "?? line" }],
	"transport-failed": [{ reason: "connect ECONNREFUSED" }],
	"shell-unreachable": [
		{ label: "podman container app", reason: "no such container", tool: "podman" },
		{ label: "E2B sandbox x", reason: "gone" },
	],
	"no-working-shell": [{ label: "podman container app", exitCode: 127 }],
	"shell-lost": [{ label: "podman container app", reason: "EOF" }],
	"runner-lost": [{ label: "pod ns/p", reason: "EOF" }],
	"sandbox-lost": [{}],
	"sandbox-unavailable": [
		{ why: "not-installed", tool: "bwrap" },
		{ why: "cannot-run", tool: "bwrap", reason: "EACCES" },
		{ why: "timed-out", timeoutMs: 10000 },
		{ why: "no-bind-fd", reason: "Unknown option --ro-bind-fd" },
		{ why: "no-namespaces", reason: "setting up uid map: Permission denied" },
		{ why: "failed", reason: "" },
	],
	"backend-closed": [{ label: "podman container app" }],
	"ssh-closed": [{}],
	"connection-lost": [{ host: "ssh://me@box:22", reason: "ECONNRESET" }],
	"ssh-session-not-started": [{ host: "ssh://me@box:22", reason: "channel open failure" }],
	"host-lacks-programs": [{ host: "me@box:22", programs: ["flock", "findmnt"] }],
	"host-runner-lost": [
		{ running: true, reason: "EOF" },
		{ running: false, reason: "EOF" },
	],
	"command-not-started": [{ terminal: true }, { terminal: false }],
	"handles-need-python": [{ host: "me@box:22" }, { label: "pod ns/p", reason: "python3: not found" }],
	"terminal-needs-python": [{ tool: "python3" }],
	"no-process-handles": [{ label: "modal" }],
};

/** Words that read whole: no hole where an extra was missing, no doubled punctuation. */
function expectWhole(words: string, name: string): void {
	expect(words, name).not.toMatch(/undefined|null|NaN|\[object|\(\)|\.\.(?!\.)|;;/);
	expect(words.length, name).toBeGreaterThan(10);
}

describe("the path fact table", () => {
	it("has a sample for every fact, and no sample for a fact it does not have", () => {
		expect(Object.keys(PATH_SAMPLES).sort()).toEqual(Object.keys(PATH_FACT_WORDS).sort());
	});

	it.each(Object.keys(PATH_FACT_WORDS) as PathFact[])(
		"%s: a catalogued code, its retry class, words naming the path",
		(fact) => {
			const { code } = PATH_FACT_WORDS[fact];
			expect(ERROR_CATALOGUE).toHaveProperty(code);
			const e = pathFact(fact, "/w/src/a.ts", PATH_SAMPLES[fact]);
			expect(e.code).toBe(code);
			expect(e.retry).toBe(ERROR_CATALOGUE[code]);
			expect(e.path).toBe("/w/src/a.ts");
			expect(e.message).toContain("/w/src/a.ts");
			expectWhole(e.message, fact);
			// Worded for the model's spelling, the path stays canonical and the words change only there.
			const shown = e.withShownPath("./src/link.ts");
			expect(shown.message).toBe(pathFactMessage(fact, "./src/link.ts", PATH_SAMPLES[fact]));
			expect(shown.message).not.toContain("/w/src/a.ts");
			expect(shown.path).toBe("/w/src/a.ts");
			expect(shown.code).toBe(code);
			expect(inModelsWords(e, [{ input: "./src/link.ts", canonical: "/w/src/a.ts" }])).toEqual(shown);
		},
	);

	it("names the holders of a busy file by pid and command, at most four, or another process", () => {
		expect(whoHolds(holders)).toBe("pid 41 (python3), pid 42");
		expect(whoHolds([])).toBe("another process");
		const many = Array.from({ length: 6 }, (_, i) => ({ pid: 100 + i, command: "sh" }));
		expect(whoHolds(many)).toBe("pid 100 (sh), pid 101 (sh), pid 102 (sh), pid 103 (sh)");
		const e = pathFact("open-for-writing", "/w/app.log", { holders });
		expect(e.details).toEqual({ holders });
	});
});

describe("the backend fact table", () => {
	it("has samples for every fact, and none for a fact it does not have", () => {
		expect(Object.keys(BACKEND_SAMPLES).sort()).toEqual(Object.keys(BACKEND_FACT_WORDS).sort());
	});

	it("shares no fact name with the path table (a name means one thing)", () => {
		const both = Object.keys(BACKEND_FACT_WORDS).filter((f) => f in PATH_FACT_WORDS);
		expect(both).toEqual([]);
	});

	it.each(Object.keys(BACKEND_FACT_WORDS) as BackendFact[])(
		"%s: a catalogued code, its retry class, whole words",
		(fact) => {
			const { code } = BACKEND_FACT_WORDS[fact];
			expect(ERROR_CATALOGUE).toHaveProperty(code);
			const seen = new Set<string>();
			for (const extras of BACKEND_SAMPLES[fact]) {
				const e = backendFact(fact, extras, { path: "/w/src" });
				expect(e.code).toBe(code);
				expect(e.retry).toBe(ERROR_CATALOGUE[code]);
				expect(e.path).toBe("/w/src");
				expect(e.message).toBe(backendFactMessage(fact, extras));
				expectWhole(e.message, `${fact} ${JSON.stringify(extras)}`);
				// The extras reach hosts as details, not only as words.
				expect(e.details ?? {}).toEqual(extras);
				seen.add(e.message);
			}
			// Each sample takes its own branch of the words.
			expect(seen.size).toBe(BACKEND_SAMPLES[fact].length);
		},
	);

	it("quotes what a program said, and the pattern as given", () => {
		expect(
			backendFactMessage("pattern-invalid", {
				kind: "glob",
				pattern: "a[",
				reason: "unclosed character class",
			}),
		).toBe('Invalid glob "a[": unclosed character class');
		expect(backendFactMessage("search-tool-failed", { tool: "fd", reason: "walk error" })).toBe(
			"fd failed: walk error",
		);
		expect(backendFactMessage("pattern-too-large", { measure: "compiled-bytes", limit: 100 })).toBe(
			"Pattern too large: its compiled form exceeds 100 bytes. Use a shorter pattern, smaller repetition counts (x{n}), or literal: true.",
		);
	});
});
