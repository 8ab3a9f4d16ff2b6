/**
 * The tier table (test/tiers.ts) stays true as test files come and go, and nothing is dropped from
 * CI: every suite's globs name existing test files (a typo would silently move a suite into the
 * fast tier), every test file is in exactly one tier, vitest itself lists the fast tier's files for
 * `npm test` and every file for test:all, CI runs test:all, and the contract files declare every
 * backend exactly when the `backends` suite is on.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { BACKENDS, contractBackends } from "../contract/backends.js";
import { chosenSuites, includedSuites, SUITES, skippedSuites, tierOf, uninstalledSuites } from "../tiers.js";

const REPO = resolve(import.meta.dirname, "../..");

function testFiles(): string[] {
	const entries = readdirSync(join(REPO, "test"), { recursive: true, withFileTypes: true });
	return entries
		.filter((e) => e.isFile() && e.name.endsWith(".test.ts"))
		.map((e) => relative(REPO, join(e.parentPath, e.name)))
		.sort();
}

/** `vitest list` in the repository with this environment (and no KEEL_TEST_* but the ones given). */
async function vitestList(
	env: Record<string, string>,
	args: string[],
): Promise<{ name?: string; file: string }[]> {
	const clean = { ...process.env };
	delete clean.KEEL_TEST_TIER;
	delete clean.KEEL_TEST_SUITES;
	const { stdout } = await promisify(execFile)(
		process.execPath,
		[join(REPO, "node_modules/vitest/vitest.mjs"), "list", "--json", ...args],
		{ cwd: REPO, env: { ...clean, ...env }, maxBuffer: 16 << 20, timeout: 50_000 },
	);
	return JSON.parse(stdout);
}

/** The files vitest would run with this environment and no file named: what the config excludes. */
async function listedFiles(env: Record<string, string>): Promise<string[]> {
	return (await vitestList(env, ["--filesOnly"])).map((f) => relative(REPO, f.file)).sort();
}

describe("test tiers", () => {
	const files = testFiles();
	const names = SUITES.map((s) => s.name);

	it.each(SUITES.flatMap((s) => s.files.map((glob) => [s.name, glob])))(
		"suite %s: %s names a test file",
		(_, glob) => {
			const matches = picomatch(glob);
			expect(files.filter((f) => matches(f))).not.toEqual([]);
		},
	);

	it("puts every test file in exactly one tier: the fast tier or one suite", () => {
		const claimedTwice = files.filter((f) => {
			try {
				tierOf(f);
				return false;
			} catch {
				return true;
			}
		});
		expect(claimedTwice).toEqual([]);
		expect(new Set(SUITES.map((s) => s.name)).size).toBe(SUITES.length);
		expect(names).not.toContain("fast");
	});

	it("vitest lists the fast tier for npm test, and every file for test:all in CI", async () => {
		const [fast, all, withSsh] = await Promise.all([
			listedFiles({}),
			// CI installs every package set, so there no suite is left out for a missing one.
			listedFiles({ KEEL_TEST_TIER: "all", CI: "true" }),
			listedFiles({ KEEL_TEST_SUITES: "ssh" }),
		]);
		expect(fast).toEqual(files.filter((f) => tierOf(f) === "fast"));
		expect(all).toEqual(files);
		expect(withSsh).toEqual(files.filter((f) => ["fast", "ssh"].includes(tierOf(f))));
	}, 60_000);

	it("CI runs test:all, which sets the tier to all; npm test runs the fast tier", () => {
		const scripts = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).scripts;
		expect(scripts["test:all"]).toMatch(/KEEL_TEST_TIER=all vitest run/);
		expect(scripts.test).not.toMatch(/KEEL_TEST_(TIER|SUITES)/);
		expect(readFileSync(join(REPO, ".ci/run"), "utf8")).toMatch(/^npm run test:all\b/m);
	});

	it("includes no suite in the fast tier, every one in test:all or for a named file, and the named ones", () => {
		expect(skippedSuites({}).map((s) => s.name)).toEqual(names);
		expect(includedSuites({ KEEL_TEST_TIER: "all" }).map((s) => s.name)).toEqual(names);
		expect(includedSuites({}, ["run", "test/backends/ssh.test.ts"]).map((s) => s.name)).toEqual(names);
		expect(includedSuites({}, ["run", "test/contract"])).toEqual([]);
		expect(includedSuites({ KEEL_TEST_SUITES: "ssh, bwrap" }).map((s) => s.name)).toEqual(["ssh", "bwrap"]);
		expect(() => chosenSuites({ KEEL_TEST_SUITES: "sshh" })).toThrow(/unknown suites: sshh/);
	});

	it("leaves out a suite whose package set is missing, locally only, saying how to install it", () => {
		const missing = uninstalledSuites({}, { frameworks: false, charts: true });
		expect(missing.map((s) => s.name)).toEqual(["frameworks"]);
		expect(missing[0].enable).toMatch(/npm run install:frameworks/);
		expect(uninstalledSuites({}, { frameworks: true, charts: false }).map((s) => s.enable)).toEqual([
			expect.stringMatching(/npm run install:bench/),
		]);
		expect(uninstalledSuites({ CI: "true" }, { frameworks: false, charts: false })).toEqual([]);
	});

	it("the contract files run local in the fast tier and every backend with the backends suite", () => {
		expect(names).toContain("backends");
		expect(contractBackends([]).map((f) => f.name)).toEqual(["local"]);
		expect(contractBackends(["ssh", "bwrap"]).map((f) => f.name)).toEqual(["local"]);
		expect(contractBackends(includedSuites({ KEEL_TEST_TIER: "all" }).map((s) => s.name))).toEqual(BACKENDS);
		expect(BACKENDS.length).toBeGreaterThan(1);
	});
});
