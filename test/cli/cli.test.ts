import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { REPO, type Run, type RunOptions, runKeel } from "../fixtures/keel-cli.js";

const PNG_1x1 = Buffer.from(
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
	"base64",
);

function keel(args: string[], opts: RunOptions = {}): Promise<Run> {
	return runKeel(base, args, opts);
}

/** Exactly one line of JSON on stdout, parsed. */
function oneJsonLine(r: Run): Record<string, any> {
	expect(
		r.stdout.endsWith("\n"),
		`stdout must end with a newline: ${JSON.stringify(r.stdout.slice(0, 300))}`,
	).toBe(true);
	const lines = r.stdout.slice(0, -1).split("\n");
	expect(lines.length, `expected one stdout line, got: ${JSON.stringify(r.stdout.slice(0, 500))}`).toBe(1);
	return JSON.parse(lines[0]);
}

function jsonLines(r: Run): Array<Record<string, any>> {
	expect(r.stdout.endsWith("\n")).toBe(true);
	return r.stdout
		.slice(0, -1)
		.split("\n")
		.map((l) => JSON.parse(l));
}

/** A usage error: exit 2, a message on stderr, and stdout either empty or one JSON error line. */
function expectUsageError(r: Run, mentions?: string): void {
	expect({ code: r.code, stdout: r.stdout.slice(0, 300) }).toMatchObject({ code: 2 });
	expect(r.stderr.length + r.stdout.length).toBeGreaterThan(0);
	if (r.stdout !== "")
		expect(oneJsonLine(r)).toMatchObject({ ok: false, error: { code: expect.any(String) } });
	if (mentions) expect(r.stderr + r.stdout).toContain(mentions);
}

let base: string;
let root: string;
let other: string;
let ro: string;

beforeAll(() => {
	if (!existsSync(join(REPO, "dist", "adapters", "cli.js"))) {
		throw new Error("The CLI needs the build: run `npx tsc -p tsconfig.build.json` first.");
	}
});

beforeEach(async () => {
	base = await mkdtemp(join(tmpdir(), "keel-cli-"));
	root = join(base, "root");
	other = join(base, "other");
	ro = join(base, "ro");
	await mkdir(join(root, "sub"), { recursive: true });
	await mkdir(other);
	await mkdir(ro);
	await writeFile(join(root, "a.txt"), "alpha\nbeta\ngamma\n");
	await writeFile(join(root, "sub", "b.txt"), "in sub\n");
	await writeFile(join(root, "image.png"), PNG_1x1);
	await writeFile(join(other, "o.txt"), "other root\n");
	await writeFile(join(ro, "r.txt"), "read only\n");
});

afterEach(async () => {
	await rm(base, { recursive: true, force: true });
});

describe("keel call", () => {
	it("an ok call prints one JSON line and exits 0", async () => {
		const r = await keel(["call", "read", '{"path":"a.txt"}', "--root", root]);
		expect(r.code).toBe(0);
		const out = oneJsonLine(r);
		expect(out).toMatchObject({ ok: true, content: "alpha\nbeta\ngamma" });
		expect(typeof out.elapsedMs).toBe("number");
		expect(r.stderr).toBe("");
	});

	it("details come through", async () => {
		const r = await keel([
			"call",
			"edit",
			'{"path":"a.txt","edits":[{"oldText":"beta","newText":"BETA"}]}',
			"--root",
			root,
		]);
		expect(r.code).toBe(0);
		expect(oneJsonLine(r)).toMatchObject({
			ok: true,
			content: "Successfully replaced 1 block(s) in a.txt.",
			details: { diff: " 1 alpha\n-2 beta\n+2 BETA\n 3 gamma", firstChangedLine: 2 },
		});
		expect(await readFile(join(root, "a.txt"), "utf8")).toBe("alpha\nBETA\ngamma\n");
	});

	it("non-ASCII arguments and output survive the round trip", async () => {
		const content = "héllo 😀\nzwei\tzeilen\n";
		const w = await keel(["call", "write", JSON.stringify({ path: "u.txt", content }), "--root", root]);
		expect(w.code).toBe(0);
		expect(await readFile(join(root, "u.txt"), "utf8")).toBe(content);
		const r = await keel(["call", "read", '{"path":"u.txt"}', "--root", root]);
		expect(oneJsonLine(r)).toMatchObject({ ok: true, content: "héllo 😀\nzwei\tzeilen" });
	});

	it("an image comes back as an image part", async () => {
		const r = await keel(["call", "read", '{"path":"image.png"}', "--root", root]);
		expect(r.code).toBe(0);
		const out = oneJsonLine(r);
		expect(out.ok).toBe(true);
		expect(out.images).toEqual([{ type: "image", mimeType: "image/png", data: PNG_1x1.toString("base64") }]);
	});

	it("a tool error prints the structured error and exits 1", async () => {
		const r = await keel(["call", "read", '{"path":"missing.txt"}', "--root", root]);
		expect(r.code).toBe(1);
		const out = oneJsonLine(r);
		expect(out).toMatchObject({ ok: false, error: { code: "NOT_FOUND", retry: "retarget" } });
		expect(out.error.message.length).toBeGreaterThan(0);
	});

	it("a failing command is a tool error with its exit code", async () => {
		const r = await keel(["call", "bash", '{"command":"echo no; exit 4"}', "--root", root]);
		expect(r.code).toBe(1);
		expect(oneJsonLine(r)).toMatchObject({
			ok: false,
			error: {
				code: "COMMAND_FAILED",
				message: "no\n\nCommand exited with code 4",
				details: { exitCode: 4 },
			},
		});
	});

	it("arguments that do not fit the schema are a tool error (exit 1)", async () => {
		const r = await keel(["call", "read", '{"path":"a.txt","bogus":1}', "--root", root]);
		expect(r.code).toBe(1);
		expect(oneJsonLine(r)).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
	});

	it("omitted JSON_ARGS means {}", async () => {
		const ls = await keel(["call", "ls", "--root", root]);
		expect(ls.code).toBe(0);
		expect(oneJsonLine(ls)).toMatchObject({ ok: true, content: "a.txt\nimage.png\nsub/" });
		const read = await keel(["call", "read", "--root", root]);
		expect(read.code).toBe(1);
		expect(oneJsonLine(read)).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
	});

	for (const bad of ["{path:a.txt}", "{", "", "not json", '{"path":"a.txt"} trailing']) {
		it(`invalid JSON args ${JSON.stringify(bad)}: exit 2 with a JSON error on stdout`, async () => {
			const r = await keel(["call", "read", bad, "--root", root]);
			expect(r.code).toBe(2);
			expect(oneJsonLine(r)).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
		});
	}

	it("JSON args that are not an object: a tool error", async () => {
		for (const args of ["[]", "null", "42", '"a.txt"']) {
			const r = await keel(["call", "read", args, "--root", root]);
			expect(r.code).toBe(1);
			expect(oneJsonLine(r)).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
		}
	});

	it("an unknown tool: exit 2 with UNKNOWN_TOOL", async () => {
		const r = await keel(["call", "cat", '{"path":"a.txt"}', "--root", root]);
		expect(r.code).toBe(2);
		expect(oneJsonLine(r)).toMatchObject({ ok: false, error: { code: "UNKNOWN_TOOL" } });
	});

	it("a tool outside the profile is unknown", async () => {
		const r = await keel([
			"call",
			"write",
			'{"path":"x.txt","content":"x"}',
			"--root",
			root,
			"--profile",
			"unified",
		]);
		expect(r.code).toBe(2);
		expect(oneJsonLine(r)).toMatchObject({ ok: false, error: { code: "UNKNOWN_TOOL" } });
		expect(existsSync(join(root, "x.txt"))).toBe(false);
	});

	it("--profile pi and --backend local are accepted", async () => {
		const r = await keel([
			"call",
			"read",
			'{"path":"a.txt"}',
			"--root",
			root,
			"--profile",
			"pi",
			"--backend",
			"local",
		]);
		expect(r.code).toBe(0);
		expect(oneJsonLine(r)).toMatchObject({ ok: true });
	});

	it("SIGINT aborts the running call: ABORTED, exit 1", { timeout: 20_000 }, async () => {
		const r = await keel(["call", "bash", '{"command":"touch started; sleep 30"}', "--root", root], {
			during: async (child) => {
				for (let i = 0; i < 400 && !existsSync(join(root, "started")); i++)
					await new Promise((res) => setTimeout(res, 25));
				child.kill("SIGINT");
			},
		});
		expect(r.code).toBe(1);
		expect(oneJsonLine(r)).toMatchObject({ ok: false, error: { code: "ABORTED" } });
	});
});

describe("usage errors exit 2", () => {
	it("unknown command", async () => {
		expectUsageError(await keel(["frobnicate"]), "frobnicate");
	});

	it("no command at all", async () => {
		expectUsageError(await keel([]));
	});

	it("missing tool name", async () => {
		expectUsageError(await keel(["call", "--root", root]));
	});

	it("unknown option", async () => {
		expectUsageError(
			await keel(["call", "read", '{"path":"a.txt"}', "--root", root, "--frobnicate"]),
			"frobnicate",
		);
	});

	it("an option without its value", async () => {
		expectUsageError(await keel(["call", "read", '{"path":"a.txt"}', "--root"]));
	});

	it("bad --profile", async () => {
		expectUsageError(
			await keel(["call", "read", '{"path":"a.txt"}', "--root", root, "--profile", "bogus"]),
			"bogus",
		);
	});

	it("--backend bwrap runs commands in the sandbox; --network needs bwrap", async () => {
		const r = await keel([
			"call",
			"bash",
			'{"command":"ls /root; echo done"}',
			"--root",
			root,
			"--backend",
			"bwrap",
		]);
		expect(r.code).toBe(0);
		expect(JSON.parse(r.stdout)).toMatchObject({
			ok: true,
			content: expect.stringContaining("cannot access '/root'"),
		});
		expectUsageError(
			await keel(["call", "read", '{"path":"a.txt"}', "--root", root, "--network"]),
			"network",
		);
	});

	it("an unknown backend", async () => {
		expectUsageError(
			await keel(["call", "read", '{"path":"a.txt"}', "--root", root, "--backend", "ftp://x"]),
		);
	});

	it("an extra positional argument", async () => {
		expectUsageError(await keel(["call", "read", '{"path":"a.txt"}', "extra", "--root", root]), "extra");
	});

	it("a --root that does not exist", async () => {
		const r = await keel(["call", "read", '{"path":"a.txt"}', "--root", join(base, "nope")]);
		expectUsageError(r);
	});

	it("batch with a positional argument", async () => {
		expectUsageError(await keel(["batch", "extra", "--root", root]), "extra");
	});
});

describe("roots", () => {
	it("--root is respected whatever the cwd", async () => {
		const r = await keel(["call", "read", '{"path":"b.txt"}', "--root", join(root, "sub")], { cwd: other });
		expect(oneJsonLine(r)).toMatchObject({ ok: true, content: "in sub" });
		const outside = await keel(["call", "read", '{"path":"../a.txt"}', "--root", join(root, "sub")], {
			cwd: root,
		});
		expect(outside.code).toBe(1);
		expect(oneJsonLine(outside)).toMatchObject({ ok: false, error: { code: "PATH_OUTSIDE_ROOTS" } });
	});

	it("--root defaults to the current directory", async () => {
		const r = await keel(["call", "read", '{"path":"a.txt"}'], { cwd: root });
		expect(r.code).toBe(0);
		expect(oneJsonLine(r)).toMatchObject({ ok: true, content: "alpha\nbeta\ngamma" });
		const w = await keel(["call", "write", '{"path":"here.txt","content":"cwd"}'], {
			cwd: join(root, "sub"),
		});
		expect(w.code).toBe(0);
		expect(await readFile(join(root, "sub", "here.txt"), "utf8")).toBe("cwd");
		const pwd = await keel(["call", "bash", '{"command":"pwd"}'], { cwd: join(root, "sub") });
		expect(oneJsonLine(pwd)).toMatchObject({ ok: true, content: join(root, "sub") });
	});

	it("a relative --root resolves against the cwd", async () => {
		const r = await keel(["call", "read", '{"path":"b.txt"}', "--root", "sub"], { cwd: root });
		expect(oneJsonLine(r)).toMatchObject({ ok: true, content: "in sub" });
	});

	it("--allow adds a read-write root", async () => {
		const target = join(other, "new.txt");
		const denied = await keel([
			"call",
			"write",
			JSON.stringify({ path: target, content: "x" }),
			"--root",
			root,
		]);
		expect(denied.code).toBe(1);
		expect(oneJsonLine(denied)).toMatchObject({ ok: false, error: { code: "PATH_OUTSIDE_ROOTS" } });
		expect(existsSync(target)).toBe(false);

		const allowed = await keel([
			"call",
			"write",
			JSON.stringify({ path: target, content: "x" }),
			"--root",
			root,
			"--allow",
			other,
		]);
		expect(allowed.code).toBe(0);
		expect(await readFile(target, "utf8")).toBe("x");
		const read = await keel([
			"call",
			"read",
			JSON.stringify({ path: join(other, "o.txt") }),
			"--root",
			root,
			"--allow",
			other,
		]);
		expect(oneJsonLine(read)).toMatchObject({ ok: true, content: "other root" });
	});

	it("--allow is repeatable", async () => {
		const args = ["--root", root, "--allow", other, "--allow", ro];
		const a = await keel([
			"call",
			"write",
			JSON.stringify({ path: join(other, "1.txt"), content: "1" }),
			...args,
		]);
		const b = await keel([
			"call",
			"write",
			JSON.stringify({ path: join(ro, "2.txt"), content: "2" }),
			...args,
		]);
		expect([a.code, b.code]).toEqual([0, 0]);
		expect(await readFile(join(ro, "2.txt"), "utf8")).toBe("2");
	});

	it("--allow-read adds a read-only root", async () => {
		const denied = await keel(["call", "read", JSON.stringify({ path: join(ro, "r.txt") }), "--root", root]);
		expect(oneJsonLine(denied)).toMatchObject({ ok: false, error: { code: "PATH_OUTSIDE_ROOTS" } });
		const args = ["--root", root, "--allow-read", ro];
		const read = await keel(["call", "read", JSON.stringify({ path: join(ro, "r.txt") }), ...args]);
		expect(read.code).toBe(0);
		expect(oneJsonLine(read)).toMatchObject({ ok: true, content: "read only" });
		const write = await keel([
			"call",
			"write",
			JSON.stringify({ path: join(ro, "r.txt"), content: "x" }),
			...args,
		]);
		expect(write.code).toBe(1);
		expect(oneJsonLine(write)).toMatchObject({ ok: false, error: { code: "PATH_READ_ONLY" } });
		expect(await readFile(join(ro, "r.txt"), "utf8")).toBe("read only\n");
	});

	it("--allow-protected permits writing .git/config", async () => {
		await mkdir(join(root, ".git"));
		const body = JSON.stringify({ path: ".git/config", content: "[core]\n" });
		const denied = await keel(["call", "write", body, "--root", root]);
		expect(oneJsonLine(denied)).toMatchObject({ ok: false, error: { code: "PATH_PROTECTED" } });
		const allowed = await keel(["call", "write", body, "--root", root, "--allow-protected"]);
		expect(allowed.code).toBe(0);
	});
});

describe("keel batch", () => {
	it("answers every line, in order, in one session", async () => {
		const lines = [
			{ tool: "write", args: { path: "f.txt", content: "one\ntwo\n" } },
			{ tool: "read", args: { path: "f.txt" } },
			"{not json",
			{ tool: "read", args: { path: "missing.txt" } },
			{ tool: "edit", args: { path: "f.txt", edits: [{ oldText: "two", newText: "TWO" }] } },
			{ args: { path: "f.txt" } },
			{ tool: "nope", args: {} },
			{ tool: "read", args: { path: "f.txt" } },
			{ tool: "ls" },
		].map((l) => (typeof l === "string" ? l : JSON.stringify(l)));
		const r = await keel(["batch", "--root", root], { input: `${lines.join("\n")}\n` });
		const out = jsonLines(r);
		expect(out).toHaveLength(lines.length);
		expect(out[0]).toMatchObject({ ok: true, content: "Successfully wrote 8 bytes to f.txt" });
		expect(out[1]).toMatchObject({ ok: true, content: "one\ntwo" });
		expect(out[2]).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
		expect(out[3]).toMatchObject({ ok: false, error: { code: "NOT_FOUND" } });
		expect(out[4]).toMatchObject({ ok: true, details: { firstChangedLine: 2 } });
		expect(out[5]).toMatchObject({ ok: false, error: { code: "INVALID_ARGS" } });
		expect(out[6]).toMatchObject({ ok: false, error: { code: "UNKNOWN_TOOL" } });
		expect(out[7]).toMatchObject({ ok: true, content: "one\nTWO" });
		expect(out[8]).toMatchObject({ ok: true, content: "a.txt\nf.txt\nimage.png\nsub/" });
		// Some lines failed: a tool error overall.
		expect(r.code).toBe(1);
	});

	it("exits 0 when every line succeeds, and handles a last line without a newline", async () => {
		const input = [
			JSON.stringify({ tool: "write", args: { path: "g.txt", content: "x" } }),
			JSON.stringify({ tool: "read", args: { path: "g.txt" } }),
		].join("\n");
		const r = await keel(["batch", "--root", root], { input });
		expect(r.code).toBe(0);
		expect(jsonLines(r).map((l) => l.ok)).toEqual([true, true]);
	});

	it("handles CRLF input lines", async () => {
		const input = `${JSON.stringify({ tool: "read", args: { path: "a.txt" } })}\r\n${JSON.stringify({ tool: "ls", args: { path: "sub" } })}\r\n`;
		const r = await keel(["batch", "--root", root], { input });
		expect(r.code).toBe(0);
		expect(jsonLines(r)).toMatchObject([
			{ ok: true, content: "alpha\nbeta\ngamma" },
			{ ok: true, content: "b.txt" },
		]);
	});

	it("empty input: no output, exit 0", async () => {
		const r = await keel(["batch", "--root", root], { input: "" });
		expect(r.code).toBe(0);
		expect(r.stdout).toBe("");
	});

	it("respects the same options as call", async () => {
		const input = `${JSON.stringify({ tool: "read", args: { path: join(ro, "r.txt") } })}\n`;
		const denied = await keel(["batch", "--root", root], { input });
		expect(jsonLines(denied)[0]).toMatchObject({ ok: false, error: { code: "PATH_OUTSIDE_ROOTS" } });
		const allowed = await keel(["batch", "--root", root, "--allow-read", ro], { input });
		expect(jsonLines(allowed)[0]).toMatchObject({ ok: true, content: "read only" });
		expectUsageError(await keel(["batch", "--root", root, "--profile", "bogus"], { input }));
		expectUsageError(await keel(["batch", "--root", root, "--backend", "nope"], { input }));
	});

	it("a bash line keeps the exec bit of a file written by a previous line", async () => {
		await writeFile(join(root, "run.sh"), "#!/bin/sh\necho v1\n");
		await chmod(join(root, "run.sh"), 0o755);
		const input = [
			JSON.stringify({ tool: "read", args: { path: "run.sh" } }),
			JSON.stringify({ tool: "write", args: { path: "run.sh", content: "#!/bin/sh\necho v2\n" } }),
			JSON.stringify({ tool: "bash", args: { command: "./run.sh" } }),
		].join("\n");
		const r = await keel(["batch", "--root", root], { input: `${input}\n` });
		expect(jsonLines(r)).toMatchObject([{ ok: true }, { ok: true }, { ok: true, content: "v2" }]);
	});
});
