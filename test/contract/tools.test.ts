/** Contract: every tool, through Session.call, on every backend. */
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { expectCode, expectOk, forEachBackend, show } from "./harness.js";

forEachBackend((x) => {
	it("bash runs in the workspace, reports exit codes and stderr", async () => {
		const s = await x().open();
		expect(expectOk(await s.call("bash", { command: "pwd" })).trim()).toBe(x().root);
		const failed = await s.call("bash", { command: "echo out; echo err >&2; exit 3" });
		expectCode(failed, "COMMAND_FAILED");
		if (!failed.ok) {
			expect(failed.error.details?.exitCode).toBe(3);
			expect(failed.error.message).toContain("out");
			expect(failed.error.message).toContain("err");
		}
	});

	it("write, read and edit (pi profile)", async () => {
		const { root } = x();
		const s = await x().open();
		expectOk(await s.call("write", { path: "a.txt", content: "hello\nworld\n" }));
		expect(expectOk(await s.call("read", { path: "a.txt" }))).toBe("hello\nworld\n".slice(0, -1));
		expectOk(await s.call("edit", { path: "a.txt", edits: [{ oldText: "world", newText: "there" }] }));
		expect(await readFile(join(root, "a.txt"), "utf8")).toBe("hello\nthere\n");
		expectOk(await s.call("write", { path: "d1/d2/new.txt", content: "deep\n" }));
		expect(await readFile(join(root, "d1/d2/new.txt"), "utf8")).toBe("deep\n");
		const paged = expectOk(await s.call("read", { path: "a.txt", offset: 2, limit: 1 }));
		expect(paged).toBe("there");
	});

	it("ls lists files, directories, dotfiles and links to directories", async () => {
		const { root } = x();
		await mkdir(join(root, "sub"));
		await writeFile(join(root, "f.txt"), "f\n");
		await writeFile(join(root, ".hidden"), "h\n");
		await x().made.makeSymlink("sub", join(root, "subl"));
		const out = expectOk(await (await x().open()).call("ls", {}));
		expect(out.split("\n")).toEqual([".hidden", "f.txt", "sub/", "subl/"]);
	});

	it("find and grep honour .gitignore inside a repository, include hidden files, skip .git", async () => {
		const { root } = x();
		await mkdir(join(root, ".git"));
		await mkdir(join(root, "src"));
		await mkdir(join(root, "ignored"));
		await Promise.all([
			writeFile(join(root, ".git/HEAD"), "needle in git\n"),
			writeFile(join(root, ".gitignore"), "ignored/\n*.log\n"),
			writeFile(join(root, "src/a.ts"), "needle one\n"),
			writeFile(join(root, "src/b.ts"), "before\nneedle two\nafter\n"),
			writeFile(join(root, "ignored/c.ts"), "needle three\n"),
			writeFile(join(root, "app.log"), "needle log\n"),
			writeFile(join(root, ".hidden.ts"), "needle hidden\n"),
			writeFile(join(root, "bin.dat"), Buffer.from("needle\0binary\n")),
		]);
		const s = await x().open();
		expect(expectOk(await s.call("find", { pattern: "*.ts" })).split("\n")).toEqual([
			".hidden.ts",
			"src/a.ts",
			"src/b.ts",
		]);
		expect(expectOk(await s.call("find", { pattern: "src/*" })).split("\n")).toEqual([
			"src/a.ts",
			"src/b.ts",
		]);
		expect(expectOk(await s.call("grep", { pattern: "needle" })).split("\n")).toEqual([
			".hidden.ts:1: needle hidden",
			"src/a.ts:1: needle one",
			"src/b.ts:2: needle two",
		]);
		const ctx = expectOk(
			await s.call("grep", { pattern: "NEEDLE T", ignoreCase: true, context: 1, glob: "*.ts" }),
		);
		expect(ctx.split("\n")).toEqual(["src/b.ts-1- before", "src/b.ts:2: needle two", "src/b.ts-3- after"]);
		const limited = expectOk(await s.call("grep", { pattern: "needle", limit: 1 }));
		expect(limited).toContain("1 matches limit reached");
		// A file named explicitly is searched even when ignored.
		expect(expectOk(await s.call("grep", { pattern: "needle", path: "app.log" }))).toBe(
			"app.log:1: needle log",
		);
		expectCode(await s.call("grep", { pattern: "(", path: "src" }), "INVALID_PATTERN");
		expectCode(await s.call("find", { pattern: "*", path: "missing" }), "NOT_FOUND");
	});

	it("file tool (unified profile): write, edit and delete in one batch", async () => {
		const { root } = x();
		await writeFile(join(root, "e.txt"), "one\ntwo\n");
		await writeFile(join(root, "d.txt"), "bye\n");
		const s = await x().open({ profile: "unified" });
		expect(s.tools.map((t) => t.name)).toContain("file");
		const r = await s.call("file", {
			queries: [
				{ type: "write", path: "n.txt", content: "new\n" },
				{ type: "edit", path: "e.txt", edits: [{ oldText: "two", newText: "zwei" }] },
				{ type: "delete", path: "d.txt" },
			],
		});
		expectOk(r);
		expect(await readFile(join(root, "n.txt"), "utf8")).toBe("new\n");
		expect(await readFile(join(root, "e.txt"), "utf8")).toBe("one\nzwei\n");
		await expect(stat(join(root, "d.txt"))).rejects.toThrow();
	});

	it("file tool deletes a link, not its target; edits keep mode and CRLF", async () => {
		const { root } = x();
		await writeFile(join(root, "target.txt"), "keep\n");
		await x().made.makeSymlink("target.txt", join(root, "link.txt"));
		await writeFile(join(root, "run.sh"), "#!/bin/sh\r\necho a\r\n", { mode: 0o755 });
		const s = await x().open({ profile: "unified" });
		expectOk(await s.call("file", { queries: [{ type: "delete", path: "link.txt" }] }));
		expect(await readFile(join(root, "target.txt"), "utf8")).toBe("keep\n");
		const r = await s.call("file", {
			queries: [{ type: "edit", path: "run.sh", edits: [{ oldText: "echo a", newText: "echo b\necho c" }] }],
		});
		expectOk(r);
		expect(await readFile(join(root, "run.sh"), "utf8")).toBe("#!/bin/sh\r\necho b\r\necho c\r\n");
		expect((await stat(join(root, "run.sh"))).mode & 0o777).toBe(0o755);
	});

	it("read refuses binaries and directories with the right codes", async () => {
		const { root } = x();
		await writeFile(join(root, "b.bin"), Buffer.from([0, 1, 2, 3, 0, 255]));
		await mkdir(join(root, "dir"));
		const s = await x().open();
		expectCode(await s.call("read", { path: "b.bin" }), "BINARY_FILE");
		expectCode(await s.call("read", { path: "dir" }), "IS_DIRECTORY");
		expectCode(await s.call("read", { path: "nope.txt" }), "NOT_FOUND");
		const r = await s.call("ls", { path: "b.bin" });
		expect(r.ok, show(r)).toBe(false);
	});

	it("a link inside the root is followed; writes through it keep the link", async () => {
		const { root } = x();
		await writeFile(join(root, "real.txt"), "real\n");
		await x().made.makeSymlink("real.txt", join(root, "in.txt"));
		const s = await x().open();
		expect(expectOk(await s.call("read", { path: "in.txt" }))).toBe("real");
		expectOk(await s.call("edit", { path: "in.txt", edits: [{ oldText: "real", newText: "edited" }] }));
		expect(await readFile(join(root, "real.txt"), "utf8")).toBe("edited\n");
	});
});
