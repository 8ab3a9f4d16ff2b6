/**
 * `keel serve` through the real binary, once bin/keel.js dispatches `serve` to runServe. Until the
 * CLI is wired this suite is skipped; the launcher-based suites cover runServe meanwhile.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { call, connectStdio, expectOk, makeDir, REPO, removeDir, type StdioConnection } from "./helpers.js";

const CLI = join(REPO, "dist", "adapters", "cli.js");
const WIRED = existsSync(CLI) && readFileSync(CLI, "utf8").includes("runServe");
if (!WIRED) console.warn("skipping `keel serve` CLI tests: dist/adapters/cli.js does not call runServe yet");

describe.skipIf(!WIRED)("keel serve (bin/keel.js)", () => {
	let dir: string;
	let conn: StdioConnection | undefined;
	beforeEach(async () => {
		dir = await makeDir("cli", { "a.txt": "alpha\n" });
	});
	afterEach(async () => {
		await conn?.close();
		conn = undefined;
		await removeDir(dir);
	});

	it("serves MCP over stdio with the CLI's options", async () => {
		conn = await connectStdio(["--root", dir, "--profile", "unified"], {
			command: [process.execPath, join(REPO, "bin", "keel.js"), "serve"],
		});
		const { tools } = await conn.client.listTools();
		expect(tools.map((t) => t.name)).toContain("file");
		expect(expectOk(await call(conn.client, "read", { path: "a.txt" }))).toContain("alpha");
	});
});
