/**
 * Tools run on a hand-built ToolHost (test/fixtures/tool-host.ts: the real local backend over a
 * temp workspace, a real path guard and read state), with no Session.create: the seam between the
 * tools and the session holds, and the guarantees the tools keep come from the host they are given.
 */
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KeelError } from "../../src/boundary/errors.js";
import { lsTool } from "../../src/tools/ls.js";
import { readTool } from "../../src/tools/read.js";
import type { ToolResult } from "../../src/tools/types.js";
import { writeTool } from "../../src/tools/write.js";
import { type LocalToolHost, localToolHost } from "../fixtures/tool-host.js";

const textOf = (r: ToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** The KeelError code a call fails with (the test fails when it succeeds or throws anything else). */
async function codeOf(call: Promise<unknown>): Promise<string> {
	const e = await call.then(
		() => undefined,
		(err: unknown) => err,
	);
	expect(e, "the call should have failed").toBeInstanceOf(KeelError);
	return (e as KeelError).code;
}

describe("tools on a hand-built host", () => {
	let t: LocalToolHost;
	beforeEach(async () => {
		t = await localToolHost();
		await writeFile(join(t.outside, "secret.txt"), "outside-secret\n");
		await mkdir(join(t.root, "sub"));
		await writeFile(join(t.root, "a.txt"), "alpha\nbeta\n");
		// Planted by an attacker: a link in the workspace to a directory outside every root.
		await symlink(t.outside, join(t.root, "escape"));
	});
	afterEach(() => t.close());

	it("ls lists through the host's guard: a link out of the roots is not shown as a directory", async () => {
		const r = await lsTool.execute({}, { host: t.host });
		expect(textOf(r).split("\n")).toEqual(["a.txt", "escape", "sub/"]);
		expect(await codeOf(lsTool.execute({ path: "escape" }, { host: t.host }))).toBe("PATH_OUTSIDE_ROOTS");
	});

	it("read records the version it read in the host's read state, and refuses a path out of the roots", async () => {
		const r = await readTool.execute({ path: "a.txt" }, { host: t.host });
		expect(textOf(r)).toContain("alpha\nbeta");
		expect(t.host.readState.get(join(t.root, "a.txt"))).toBeDefined();

		const out = readTool.execute({ path: "escape/secret.txt" }, { host: t.host });
		const err = await out.catch((e: unknown) => e);
		expect(err).toBeInstanceOf(KeelError);
		expect((err as KeelError).code).toBe("PATH_OUTSIDE_ROOTS");
		expect(JSON.stringify(err)).not.toContain("outside-secret");
	});

	it("write overwrites only what this host read, unchanged since: a rival's write is never lost", async () => {
		const file = join(t.root, "a.txt");
		// Never read through this host: refused, the file as it was.
		expect(await codeOf(writeTool.execute({ path: "a.txt", content: "mine\n" }, { host: t.host }))).toBe(
			"NOT_READ",
		);
		expect(await readFile(file, "utf8")).toBe("alpha\nbeta\n");

		await readTool.execute({ path: "a.txt" }, { host: t.host });
		await writeFile(file, "rival\n"); // another writer, after the read
		expect(await codeOf(writeTool.execute({ path: "a.txt", content: "mine\n" }, { host: t.host }))).toBe(
			"STALE_READ",
		);
		expect(await readFile(file, "utf8")).toBe("rival\n");

		await readTool.execute({ path: "a.txt" }, { host: t.host });
		await writeTool.execute({ path: "a.txt", content: "mine\n" }, { host: t.host });
		expect(await readFile(file, "utf8")).toBe("mine\n");
	});
});
