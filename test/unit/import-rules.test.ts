/**
 * The layering of src/, read from the source: every import (static, dynamic, re-export, type-only)
 * of every module, checked against a table of rules. A rule names the importers it covers, the
 * modules they must not reach, and why; a failure names each offending file and import.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

/** Every .ts file under src/, as a path relative to src/ with forward slashes. */
function sourceFiles(dir = SRC): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
		const full = join(dir, e.name);
		if (e.isDirectory()) return sourceFiles(full);
		return e.isFile() && e.name.endsWith(".ts") ? [relative(SRC, full).split("\\").join("/")] : [];
	});
}

/** Strings in comments are not imports: block and line comments are blanked before the search. */
function withoutComments(code: string): string {
	return code.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

// `import x from "m"`, `import type { x } from "m"`, `export { x } from "m"`, `export * from "m"`,
// `import "m"` and `import("m")`: the specifier is the string after `from`, after a bare `import`,
// or inside `import(`.
const SPECIFIER = [
	/\b(?:import|export)\s+(?:type\s+)?[^;"'`]*?\bfrom\s*["']([^"']+)["']/g,
	/\bimport\s*["']([^"']+)["']/g,
	/\bimport\s*\(\s*["'`]([^"'`]+)["'`]\s*\)/g,
];

/** The relative imports of `file`, resolved to paths relative to src/ (a `.js` suffix names the `.ts`). */
function importsOf(file: string): string[] {
	const code = withoutComments(readFileSync(join(SRC, file), "utf8"));
	const found = new Set<string>();
	for (const pattern of SPECIFIER) for (const m of code.matchAll(pattern)) found.add(m[1]);
	return [...found]
		.filter((s) => s.startsWith("."))
		.map((s) =>
			relative(SRC, resolve(SRC, dirname(file), s))
				.split("\\")
				.join("/")
				.replace(/\.js$/, ".ts"),
		);
}

const under = (dir: string) => (path: string) => path.startsWith(`${dir}/`);
const is = (name: string) => (path: string) => path === name;
const any =
	(...tests: ((path: string) => boolean)[]) =>
	(path: string) =>
		tests.some((t) => t(path));

interface Rule {
	/** What the rule keeps, as the failure message says it. */
	says: string;
	importer: (path: string) => boolean;
	forbidden: (path: string) => boolean;
}

const isSessionModule = (path: string) => /^session[^/]*\.ts$/.test(path);

const RULES: Rule[] = [
	{
		says: "tools reach the session only through their ToolHost",
		importer: under("tools"),
		forbidden: is("session.ts"),
	},
	{
		says: "patch/ stands below the tools",
		importer: under("patch"),
		forbidden: under("tools"),
	},
	{
		says: "a backend knows nothing of tools, adapters or sessions",
		importer: under("backend"),
		forbidden: any(under("tools"), under("adapters"), isSessionModule),
	},
	{
		says: "only adapters and the library entry (index.ts) open sessions",
		importer: (path) => !under("adapters")(path) && path !== "index.ts",
		forbidden: is("session.ts"),
	},
];

const FILES = sourceFiles();
const IMPORTS = new Map(FILES.map((f) => [f, importsOf(f)]));

describe("import rules", () => {
	it("reads the imports it checks (the table cannot pass by seeing nothing)", () => {
		expect(FILES.length).toBeGreaterThan(100);
		// Each import form the rules must see, in a module known to use it.
		expect(IMPORTS.get("index.ts")).toContain("session.ts"); // export ... from, import ... from
		expect(IMPORTS.get("adapters/binding.ts")).toContain("boundary/schema.ts"); // import type
		const dynamic = FILES.filter((f) => /\bimport\s*\(\s*["'`]\./.test(readFileSync(join(SRC, f), "utf8")));
		expect(dynamic.length).toBeGreaterThan(0);
		for (const f of dynamic) expect(IMPORTS.get(f)?.length).toBeGreaterThan(0);
	});

	it.each(RULES.map((r) => [r.says, r] as const))("%s", (_says, rule) => {
		const broken = FILES.filter(rule.importer).flatMap((file) =>
			(IMPORTS.get(file) ?? []).filter(rule.forbidden).map((target) => `src/${file} imports src/${target}`),
		);
		expect(broken, `${rule.says}; these imports break the rule:\n${broken.join("\n")}`).toEqual([]);
	});
});

// A backend's `kind` is a name for messages; what it can do is said by its fields (spawnsHere,
// hostPrograms, localFiles, process). A comparison with a backend's name, or a set of names, is
// a capability test in disguise: a new backend, or a user's own, would silently get it wrong.
const BACKEND_NAMES = ["local", "bwrap", "ssh", "podman", "docker", "k8s", "exec", "e2b", "modal", "daytona"];
const NAME_TEST = new RegExp(
	`\\bkind\\s*[!=]==\\s*["'](?:${BACKEND_NAMES.join("|")})["']|\\.has\\(\\s*[\\w.]*backend[\\w.]*\\.kind\\s*\\)`,
);

describe("capabilities, not names", () => {
	it("finds a name test where one is written (the pattern is not blind)", () => {
		expect(NAME_TEST.test('const local = backend.kind === "local";')).toBe(true);
		expect(NAME_TEST.test("if (KINDS.has(opts.backend.kind)) x();")).toBe(true);
		expect(NAME_TEST.test('if (entry.kind === "dir") x();')).toBe(false);
	});

	it("no module tests a backend by its name", () => {
		const found = FILES.flatMap((file) =>
			withoutComments(readFileSync(join(SRC, file), "utf8"))
				.split("\n")
				.filter((line) => NAME_TEST.test(line))
				.map((line) => `src/${file}: ${line.trim()}`),
		);
		expect(found, `say it with a Backend field instead:\n${found.join("\n")}`).toEqual([]);
	});
});
