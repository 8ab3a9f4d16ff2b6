/**
 * Backends speak facts, the boundary words them: read from the source, no module under
 * src/backend builds a KeelError with a message of its own, except the few listed below with the
 * reason they stay. A backend failure is a path fact (boundary/path-facts.ts) or a backend fact
 * (boundary/backend-facts.ts), or an errno-style error that boundary/system-errors.ts maps.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const BACKEND = resolve(dirname(fileURLToPath(import.meta.url)), "../../src/backend");

/** The modules allowed to build a KeelError themselves: how many times, and why. */
const ALLOWED: Record<string, { count: number; why: string }> = {
	"ssh/spec.ts": {
		count: 1,
		why: "a malformed ssh:// spec is a configuration error, thrown when the session is created",
	},
	"container/spec.ts": {
		count: 1,
		why: "a malformed container spec is a configuration error, thrown when the session is created",
	},
	"bwrap/sandbox.ts": {
		count: 4,
		why: "roots, read-only paths and binds that do not exist are the operator's bwrap configuration, which the model cannot fix",
	},
	"ssh/errors.ts": {
		count: 1,
		why: "unavailable(): the ssh connection's diagnostics (client config lines, host keys, authentication), written where the connection knows them",
	},
};

/** Every .ts file under src/backend, relative to it with forward slashes. */
function backendFiles(dir = BACKEND): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
		const full = join(dir, e.name);
		if (e.isDirectory()) return backendFiles(full);
		return e.isFile() && e.name.endsWith(".ts") ? [relative(BACKEND, full).split("\\").join("/")] : [];
	});
}

/** Comments are not code: block and line comments are blanked before the search. */
function withoutComments(code: string): string {
	return code.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** How many KeelErrors `code` builds (a subclass, a fact, is not one). */
function builtIn(code: string): number {
	return withoutComments(code).match(/\bnew\s+KeelError\s*\(/g)?.length ?? 0;
}

const FILES = backendFiles();
const BUILT = new Map(FILES.map((f) => [f, builtIn(readFileSync(join(BACKEND, f), "utf8"))]));

describe("backends speak facts", () => {
	it("reads the backend it checks, and sees a construction where one is written", () => {
		expect(FILES.length).toBeGreaterThan(50);
		expect(builtIn('throw new KeelError("IO_ERROR", "rg failed: " + text);')).toBe(1);
		expect(builtIn('throw new KeelError(\n\t"IO_ERROR",\n\t"x")')).toBe(1);
		expect(
			builtIn('// new KeelError("IO_ERROR", "in a comment")\nthrow backendFact("search-aborted");'),
		).toBe(0);
		expect(builtIn("if (e instanceof KeelError) throw e;")).toBe(0);
	});

	it("no backend module words its own KeelError beyond the allowed list", () => {
		const found = FILES.filter((f) => (BUILT.get(f) ?? 0) > (ALLOWED[f]?.count ?? 0)).map(
			(f) => `src/backend/${f}: ${BUILT.get(f)} KeelError(s) built, ${ALLOWED[f]?.count ?? 0} allowed`,
		);
		expect(
			found,
			`throw a fact instead (pathFact or backendFact, adding it to its table in src/boundary):\n${found.join("\n")}`,
		).toEqual([]);
	});

	it("the allowed list is current (a conversion shrinks it)", () => {
		for (const [file, { count }] of Object.entries(ALLOWED)) expect(BUILT.get(file), file).toBe(count);
	});
});
