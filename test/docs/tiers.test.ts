/**
 * The tier table (test/tiers.ts) stays true as test files come and go: every suite's globs name
 * existing test files (a typo would silently move a suite into the fast tier), no file is claimed
 * by two suites, and unknown suite names are refused rather than ignored.
 */
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { chosenSuites, SUITES, skippedSuites } from "../tiers.js";

const REPO = resolve(import.meta.dirname, "../..");

function testFiles(): string[] {
	const entries = readdirSync(join(REPO, "test"), { recursive: true, withFileTypes: true });
	return entries
		.filter((e) => e.isFile() && e.name.endsWith(".test.ts"))
		.map((e) => relative(REPO, join(e.parentPath, e.name)))
		.sort();
}

describe("test tiers", () => {
	const files = testFiles();

	it.each(SUITES.flatMap((s) => s.files.map((glob) => [s.name, glob])))(
		"suite %s: %s names a test file",
		(_, glob) => {
			const matches = picomatch(glob);
			expect(files.filter((f) => matches(f))).not.toEqual([]);
		},
	);

	it("claims each file for at most one suite", () => {
		const claims = files.map((f) => [
			f,
			SUITES.filter((s) => s.files.some((g) => picomatch(g)(f))).map((s) => s.name),
		]);
		expect(claims.filter(([, names]) => names.length > 1)).toEqual([]);
	});

	it("leaves every suite out of the fast tier, none out of test:all, and adds the named ones", () => {
		expect(skippedSuites({}).map((s) => s.name)).toEqual(SUITES.map((s) => s.name));
		expect(skippedSuites({ KEEL_TEST_TIER: "all" })).toEqual([]);
		expect(skippedSuites({ KEEL_TEST_SUITES: "ssh, bwrap" }).map((s) => s.name)).not.toContain("ssh");
		expect(() => chosenSuites({ KEEL_TEST_SUITES: "sshh" })).toThrow(/unknown suites: sshh/);
	});
});
