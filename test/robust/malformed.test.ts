/**
 * Malformed input gets a specific error that says what to change, and no internal
 * error text (Node's TypeError, spawn's errno string, a raw regex message) reaches the model.
 */
import { spawn } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { fromSystemError } from "../../src/boundary/system-errors.js";
import type { CallResult } from "../../src/session.js";
import { useWorkspace } from "../fixtures/workspace.js";

const ws = useWorkspace({
	prefix: "keel-malformed-",
	// The name a lone surrogate would collapse to: it must not be reachable through one.
	files: { "a.txt": "alpha\nbeta\n", "x\uFFFD.txt": "replacement-named\n" },
	session: false,
});

/** Text Node or V8 writes in their own errors. */
const INTERNAL_TEXT =
	/TypeError|ERR_[A-Z_]+|The "[a-z]+" argument|spawn E2BIG|Invalid regular expression|Cannot read propert|undefined/;

function failure(r: CallResult) {
	expect(r.ok, JSON.stringify(r).slice(0, 300)).toBe(false);
	if (r.ok) throw new Error("unreachable");
	expect(r.error.message).not.toMatch(INTERNAL_TEXT);
	return r.error;
}

describe("malformed arguments get the right error", () => {
	it("a 1 MB bash command is INVALID_ARGS saying to use a script file, and nothing runs", async () => {
		const s = await ws().open();
		const err = failure(await s.call("bash", { command: `touch ran; echo ${"x".repeat(1 << 20)}` }));
		expect(err.code).toBe("INVALID_ARGS");
		expect(err.message).toMatch(/at most 131071 bytes.*file/);
		expect(await readdir(ws().root)).not.toContain("ran");
	});

	it("empty, truncated and made-up payloadRef/contentRef are INVALID_ARGS, nothing written", async () => {
		const s = await ws().open({ profile: "unified" });
		const queries = [
			{ type: "write", path: "n.txt", payloadRef: "" },
			{ type: "write", path: "n.txt", payloadRef: "pl_" },
			{ type: "write", path: "n.txt", payloadRef: "pl_0123456789abcdef0123456" },
			{ type: "write", path: "n.txt", payloadRef: "../../etc/passwd" },
			{ type: "edit", path: "a.txt", payloadRef: "" },
			{ type: "edit", path: "a.txt", payloadRef: "toString" },
			{ type: "write", path: "n.txt", contentRef: "" },
			{ type: "write", path: "n.txt", contentRef: "__proto__" },
		];
		for (const q of queries) {
			const err = failure(await s.call("file", { queries: [q] }));
			expect(err.code, JSON.stringify(q)).toBe("INVALID_ARGS");
			expect(err.message).toMatch(/payloadRef|contentRef/);
		}
		// A well-shaped ref that was never issued is refused by the store, as before.
		const unknown = failure(
			await s.call("file", {
				queries: [{ type: "write", path: "n.txt", payloadRef: `pl_${"0".repeat(24)}` }],
			}),
		);
		expect(unknown.code).toBe("INVALID_ARGS");
		expect(await readdir(ws().root)).not.toContain("n.txt");
		expect(await readFile(ws().path("a.txt"), "utf8")).toBe("alpha\nbeta\n");
	});

	it("a lone surrogate in a path is refused by every tool instead of naming the U+FFFD file", async () => {
		const calls: Array<[string, string, Record<string, unknown>]> = [
			["pi", "read", { path: "x\uD800.txt" }],
			["pi", "write", { path: "x\uD800.txt", content: "clobbered" }],
			["pi", "edit", { path: "x\uDC00.txt", edits: [{ oldText: "replacement", newText: "lost" }] }],
			["pi", "ls", { path: "\uD800" }],
			["pi", "grep", { pattern: "replacement", path: "x\uD800.txt" }],
			["pi", "find", { pattern: "*", path: "\uDBFF" }],
			["unified", "file", { queries: [{ type: "delete", path: "x\uD800.txt" }] }],
			["unified", "file", { queries: [{ type: "write", path: "x\uD800.txt", content: "c" }] }],
			["unified", "python", { code: "1", cwd: "\uD800" }],
		];
		const sessions = {
			pi: await ws().open(),
			unified: await ws().open({ profile: "unified" }),
		};
		for (const [profile, tool, args] of calls) {
			const err = failure(await sessions[profile as "pi" | "unified"].call(tool, args));
			expect(["INVALID_ARGS", "PATH_INVALID"], `${tool} ${JSON.stringify(args)}`).toContain(err.code);
			expect(err.message).toMatch(/surrogate/);
		}
		expect(await readFile(ws().path("x\uFFFD.txt"), "utf8")).toBe("replacement-named\n");
		expect((await readdir(ws().root)).sort()).toEqual(["a.txt", "x\uFFFD.txt"]);
	});
});

describe("system and runtime errors are classified in keel's words", () => {
	async function realError(make: () => Promise<unknown> | unknown): Promise<unknown> {
		try {
			await make();
		} catch (e) {
			return e;
		}
		throw new Error("expected the operation to fail");
	}

	it("ENOSPC (a write to /dev/full) names the path and the fix, not the raw message", async () => {
		const e = await realError(() => writeFile("/dev/full", "x"));
		const k = fromSystemError(e, "out.txt");
		expect(k.code).toBe("IO_ERROR");
		expect(k.message).toBe("No space left on the device on out.txt; free some space, then retry.");
		expect(k.cause).toBe(e);
	});

	it("E2BIG from a real spawn is INVALID_ARGS saying to pass a file", async () => {
		// spawn throws E2BIG synchronously, before any process exists.
		const e = await realError(() => spawn("/bin/true", ["x".repeat(200_000)]));
		expect((e as NodeJS.ErrnoException).code).toBe("E2BIG");
		const k = fromSystemError(e);
		expect(k.code).toBe("INVALID_ARGS");
		expect(k.message).toMatch(/write large input to a file/);
		expect(k.message).not.toMatch(INTERNAL_TEXT);
	});

	it("a TypeError is INTERNAL, a too-long string TOO_LARGE, a regex failure INVALID_PATTERN", async () => {
		const typeError = await realError(() => Buffer.from(undefined as unknown as string));
		expect(fromSystemError(typeError)).toMatchObject({ code: "INTERNAL" });
		expect(fromSystemError(typeError).message).not.toMatch(INTERNAL_TEXT);
		const tooLong = await realError(() => "x".repeat(2 ** 30));
		expect(fromSystemError(tooLong, "big.txt")).toMatchObject({ code: "TOO_LARGE", path: "big.txt" });
		expect(fromSystemError(tooLong).message).toMatch(/too large/);
		const unterminated = ["("].join("");
		const regex = await realError(() => new RegExp(unterminated));
		expect(fromSystemError(regex)).toMatchObject({ code: "INVALID_PATTERN" });
		expect(fromSystemError(regex).message).not.toMatch(INTERNAL_TEXT);
		const unknownErrno = Object.assign(new Error("EWHATEVER: raw internals"), { code: "EWHATEVER" });
		expect(fromSystemError(unknownErrno).message).not.toContain("raw internals");
	});
});
