/**
 * Contract: the compact path battery on every backend. Links are made on the backend's
 * side; a refused call changes nothing outside and shows nothing from there.
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { expectCode, expectOk, forEachBackend, type Scratch, SECRET, show } from "./harness.js";

const TOOLS = ["read", "write", "edit", "ls", "find", "grep"] as const;

function argsFor(tool: (typeof TOOLS)[number], path: string): Record<string, unknown> {
	switch (tool) {
		case "read":
		case "ls":
			return { path };
		case "write":
			return { path, content: "PWNED\n" };
		case "edit":
			return { path, edits: [{ oldText: SECRET, newText: "PWNED" }] };
		case "find":
			return { pattern: "*", path };
		case "grep":
			return { pattern: SECRET, path };
	}
}

/** outside/secret.txt, a prefix sibling root2/, and links made on the backend's side. */
async function plant(x: Scratch): Promise<void> {
	const { root, outside, scratch, made } = x;
	await mkdir(join(outside, "deep"));
	await mkdir(join(scratch, "root2"));
	await mkdir(join(root, "sub"));
	await Promise.all([
		writeFile(join(outside, "secret.txt"), `${SECRET} outside\n`),
		writeFile(join(outside, "deep/secret.txt"), `${SECRET} deep\n`),
		writeFile(join(scratch, "root2/secret.txt"), `${SECRET} sibling\n`),
		writeFile(join(root, "sub/f.txt"), "inside\n"),
	]);
	await made.makeSymlink(join(outside, "secret.txt"), join(root, "lnk_abs"));
	await made.makeSymlink("../outside/secret.txt", join(root, "lnk_rel"));
	await made.makeSymlink(outside, join(root, "lnkdir"));
	await made.makeSymlink(join(outside, "ghost.txt"), join(root, "dangle"));
	await made.makeSymlink("../../outside", join(root, "sub/esc"));
	await made.makeSymlink("/", join(root, "rootlink"));
}

async function outsideState(x: Scratch): Promise<string> {
	const names = (await readdir(x.outside, { recursive: true })).sort();
	const contents = await Promise.all(
		names.map((n) =>
			readFile(join(x.outside, n), "utf8").then(
				(c) => `${n}=${c}`,
				() => n,
			),
		),
	);
	return contents.join("|");
}

forEachBackend((x) => {
	it("escape attempts are refused by every path tool and change nothing outside", async () => {
		await plant(x());
		const { outside } = x();
		const before = await outsideState(x());
		const s = await x().open();
		const escapes = [
			"../outside/secret.txt",
			`${outside}/secret.txt`,
			"sub/../../outside/secret.txt",
			"../root2/secret.txt",
			"lnk_abs",
			"lnk_rel",
			"lnkdir/secret.txt",
			"lnkdir/deep",
			"sub/esc/secret.txt",
			"rootlink/etc/passwd",
			"dangle",
			"lnkdir/new.txt",
		];
		for (const path of escapes) {
			for (const tool of TOOLS) {
				const r = await s.call(tool, argsFor(tool, path));
				expect(r.ok, `${tool} ${path}: ${show(r)}`).toBe(false);
				expectCode(r, "PATH_OUTSIDE_ROOTS");
			}
		}
		for (const tool of ["ls", "find", "grep"] as const) {
			expectCode(await s.call(tool, argsFor(tool, "lnkdir")), "PATH_OUTSIDE_ROOTS");
			expectCode(await s.call(tool, argsFor(tool, "..")), "PATH_OUTSIDE_ROOTS");
		}
		expect(await outsideState(x())).toBe(before);
	});

	it("unified file tool refuses the same escapes, and deleting an outside link's target is impossible", async () => {
		await plant(x());
		const before = await outsideState(x());
		const s = await x().open({ profile: "unified" });
		for (const path of ["../outside/secret.txt", "lnk_abs/x", "dangle", "lnkdir/new.txt"]) {
			expectCode(
				await s.call("file", { queries: [{ type: "write", path, content: "PWNED\n" }] }),
				"PATH_OUTSIDE_ROOTS",
			);
		}
		expectCode(
			await s.call("file", { queries: [{ type: "delete", path: "lnkdir/secret.txt" }] }),
			"PATH_OUTSIDE_ROOTS",
		);
		// Deleting the link itself is allowed: the target stays.
		expectOk(await s.call("file", { queries: [{ type: "delete", path: "lnk_abs" }] }));
		expect(await outsideState(x())).toBe(before);
	});

	it("grep and find over the root never follow links out of it", async () => {
		await plant(x());
		const s = await x().open();
		const g = await s.call("grep", { pattern: SECRET });
		expect(expectOk(g)).toBe("No matches found");
		const f = expectOk(await s.call("find", { pattern: "*secret*" }));
		expect(f).toBe("No files found matching pattern");
	});

	it("look-alikes inside the root are allowed", async () => {
		const { root, made } = x();
		await mkdir(join(root, "a..b"));
		await mkdir(join(root, "dir with spaces"));
		await mkdir(join(root, "ünï"));
		await mkdir(join(root, "sub"));
		await Promise.all([
			writeFile(join(root, "..x"), "dots\n"),
			writeFile(join(root, "a..b/c"), "c\n"),
			writeFile(join(root, "dir with spaces/f n.txt"), "spaces\n"),
			writeFile(join(root, "ünï/日本 ✓.txt"), "unicode\n"),
			writeFile(join(root, "sub/g.txt"), "linked parent\n"),
		]);
		await made.makeSymlink("sub", join(root, "indir"));
		const s = await x().open();
		expect(expectOk(await s.call("read", { path: "..x" }))).toBe("dots");
		expect(expectOk(await s.call("read", { path: "a..b/c" }))).toBe("c");
		expect(expectOk(await s.call("read", { path: "dir with spaces/f n.txt" }))).toBe("spaces");
		expect(expectOk(await s.call("read", { path: "ünï/日本 ✓.txt" }))).toBe("unicode");
		expect(expectOk(await s.call("read", { path: "indir/g.txt" }))).toBe("linked parent");
		expect(expectOk(await s.call("read", { path: `${root}/sub/../..x` }))).toBe("dots");
		expectOk(await s.call("write", { path: "x..y", content: "new\n" }));
		expectOk(await s.call("write", { path: "indir/h.txt", content: "via link\n" }));
		expect(await readFile(join(root, "sub/h.txt"), "utf8")).toBe("via link\n");
		expect(expectOk(await s.call("ls", { path: "ünï" }))).toBe("日本 ✓.txt");
	});
});
