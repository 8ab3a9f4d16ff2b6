/**
 * No dangling relative link or anchor in the docs: README.md, the top-level guides, docs/,
 * docs/decisions/, bench/results/, examples/README.md. The checker itself is tested first on
 * planted breakage, so a checker that finds nothing cannot pass for docs that are clean.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchors, danglingLinks, slug } from "./links.js";

const REPO = resolve(import.meta.dirname, "../..");

function docs(): string[] {
	const top = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "examples/README.md"].map((f) =>
		join(REPO, f),
	);
	const inDir = (d: string) =>
		existsSync(join(REPO, d))
			? readdirSync(join(REPO, d))
					.filter((f) => f.endsWith(".md"))
					.map((f) => join(REPO, d, f))
			: [];
	return [...top.filter(existsSync), ...inDir("docs"), ...inDir("docs/decisions"), ...inDir("bench/results")];
}

describe("markdown link checker", () => {
	const dir = mkdtempSync(join(tmpdir(), "keel-links-"));
	afterAll(() => rmSync(dir, { recursive: true, force: true }));

	it("makes GitHub's anchors", () => {
		expect(slug("Pinned paths on this machine")).toBe("pinned-paths-on-this-machine");
		expect(slug("The `file` tool (all at once)")).toBe("the-file-tool-all-at-once");
		expect(slug("grep's plans: ahead, beside")).toBe("greps-plans-ahead-beside");
		expect([...anchors("# A\n## A\n```\n# not a heading\n```\n### B.c")]).toEqual(["a", "a-1", "bc"]);
	});

	it("reports a missing file, a missing heading and an anchor into a non-markdown file", () => {
		writeFileSync(join(dir, "other.md"), "# Real heading\n");
		writeFileSync(join(dir, "data.json"), "{}");
		writeFileSync(
			join(dir, "doc.md"),
			[
				"# Top",
				"[ok](other.md#real-heading) [ok](#top) [web](https://example.com/x) `[code](nowhere.md)`",
				"[gone](missing.md) ![img](pics/none.png)",
				"[bad anchor](other.md#unreal) [self](#nope) [json](data.json#x)",
				"```",
				"[in a fence](fenced.md)",
				"```",
			].join("\n"),
		);
		const found = danglingLinks([join(dir, "doc.md")], dir).map((d) => `${d.line} ${d.target}: ${d.why}`);
		expect(found).toEqual([
			"3 missing.md: no such file",
			"3 pics/none.png: no such file",
			"4 other.md#unreal: no such heading",
			"4 #nope: no such heading",
			"4 data.json#x: an anchor into something that is not a markdown file",
		]);
	});
});

describe("docs", () => {
	const files = docs();
	it("has the docs it is meant to check", () => {
		expect(files.map((f) => f.slice(REPO.length + 1))).toEqual(
			expect.arrayContaining(["README.md", "docs/ARCHITECTURE.md", "docs/BENCHMARKS.md", "docs/SAFETY.md"]),
		);
	});
	it("has no dangling relative link or anchor", () => {
		expect(danglingLinks(files, REPO)).toEqual([]);
	});
});
