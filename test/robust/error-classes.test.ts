/**
 * Failures that retrying cannot fix say so: each is classed change-approach and names the reason,
 * instead of INTERNAL/IO_ERROR with "retry" or a search left to run out its budget. Real files, a
 * real sparse file, a real bind mount (skipped with a message when mounting is not allowed).
 */
import { execFileSync } from "node:child_process";
import { readFile, stat, truncate, writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { createLocalBackend } from "../../src/backend/local/index.js";
import type { ErrorCode } from "../../src/boundary/errors.js";
import type { CallResult, Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

const ws = useWorkspace({ prefix: "keel-classes-", session: false });

function open(): Promise<Session> {
	// A budget well under the 60 s default: a search that runs into it is what this file refuses.
	return ws().open({ backend: createLocalBackend({ searchBudgetMs: 20_000 }) });
}

function expectClass(r: CallResult, code: ErrorCode, why: RegExp): void {
	expect(r.ok, JSON.stringify(r)).toBe(false);
	if (r.ok) return;
	expect(r.error.code, JSON.stringify(r.error)).toBe(code);
	expect(r.error.retry).toBe("change-approach");
	expect(r.error.message).toMatch(why);
	expect(r.error.message).not.toMatch(/retry in a moment|retry it/);
}

describe("searches whose cost grows with the pattern are refused before they run", () => {
	const LINE = "x".repeat(200_000);
	it.each(["x{99999}", "x{50000}", "(?:x{300}){300}", "[a-z]{60000}"])(
		"grep %s over one 200 KB line",
		async (pattern) => {
			await writeFile(ws().path("long.txt"), `${LINE}\n`);
			const s = await open();
			expectClass(await s.call("grep", { pattern }), "INVALID_PATTERN", /too large/i);
		},
		60_000,
	);

	it("a pattern under the cap still searches the long line", async () => {
		await writeFile(ws().path("long.txt"), `${LINE}\n`);
		const s = await open();
		const r = await s.call("grep", { pattern: "x{100}y?$", path: "long.txt" });
		expect(r.ok, JSON.stringify(r)).toBe(true);
	});
});

describe("an edit of a file too large to hold is TOO_LARGE, and says why", () => {
	it.each([
		["edit", (path: string) => ({ path, edits: [{ oldText: "hello", newText: "bye" }] })],
		[
			"file",
			(path: string) => ({
				queries: [{ type: "edit", path, edits: [{ oldText: "hello", newText: "bye" }] }],
			}),
		],
	] as const)("%s of a 3 GiB sparse file", async (tool, args) => {
		const big = ws().path("sparse.txt");
		await writeFile(big, "hello\n");
		await truncate(big, 3 * 1024 ** 3);
		const s = await ws().open({ profile: tool === "file" ? "unified" : "pi" });
		expectClass(await s.call(tool, args("sparse.txt")), "TOO_LARGE", /holds the whole file in memory/);
		expect((await stat(big)).size).toBe(3 * 1024 ** 3);
	});
});

describe("a file mounted over its path cannot be replaced, and the error says so", () => {
	let mounted: string | undefined;
	afterEach(() => {
		if (mounted) execFileSync("umount", [mounted]);
		mounted = undefined;
	});

	it("edit of a bind-mounted single file", async (ctx) => {
		const source = ws().outside("source.txt");
		const target = ws().path("bound.txt");
		await writeFile(source, "mounted text\n");
		await writeFile(target, "under the mount\n");
		try {
			execFileSync("mount", ["--bind", source, target], { stdio: "ignore" });
			mounted = target;
		} catch {
			ctx.skip(); // no mount permission here: the case cannot be built
			return;
		}
		const s = await open();
		expect((await s.call("read", { path: "bound.txt" })).ok).toBe(true);
		const r = await s.call("edit", {
			path: "bound.txt",
			edits: [{ oldText: "mounted", newText: "changed" }],
		});
		expectClass(r, "PERMISSION_DENIED", /mount point/);
		expect(await readFile(source, "utf8")).toBe("mounted text\n");
	});
});

describe("a search over directories nested past the path length limit says so", () => {
	it("grep and find find the file or fail naming the limit, never find nothing", async () => {
		const segment = "d".repeat(200);
		// 30 levels of 200 characters: the file's path is over 6,000 bytes long (chdir by one level
		// at a time: no call ever names the whole path).
		const make = `import os\nfor _ in range(30):\n os.mkdir("${segment}")\n os.chdir("${segment}")\nopen("f.txt", "w").write("needle\\n")\n`;
		execFileSync("python3", ["-c", make], { cwd: ws().root });
		const s = await open();
		const results = [
			await s.call("grep", { pattern: "needle" }),
			await s.call("find", { pattern: "**/f.txt" }),
		];
		// rm -r (and fs.rm) name whole paths; Python's rmtree walks by descriptor.
		execFileSync("python3", ["-c", `import shutil\nshutil.rmtree("${segment}")`], { cwd: ws().root });
		// Either the file is found (a walk by descriptor reaches it) or the call fails naming the
		// limit: never an answer that there is nothing.
		for (const r of results) {
			const shown = JSON.stringify(r)
				.replace(/d{50,}/g, "D")
				.slice(0, 400);
			if (r.ok) {
				expect(r.content.map((c) => (c.type === "text" ? c.text : "")).join(""), shown).toContain("f.txt");
				continue;
			}
			expect(r.error.code, shown).toBe("PATH_INVALID");
			expect(r.error.retry).not.toBe("retry");
			expect(r.error.message).toMatch(/path length limit/);
		}
	});
});
