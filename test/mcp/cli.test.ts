/**
 * `keel serve` through the real binary, once bin/keel.js dispatches `serve` to runServe. Until the
 * CLI is wired this suite is skipped; the launcher-based suites cover runServe meanwhile.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
	call,
	connectHttp,
	connectStdio,
	expectOk,
	makeDir,
	REPO,
	removeDir,
	type StdioConnection,
} from "./helpers.js";

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

	it("serve --http writes its token under $XDG_RUNTIME_DIR/keel and takes the serve options", async () => {
		const runtime = join(dir, "run-user");
		const env: NodeJS.ProcessEnv = { ...process.env, XDG_RUNTIME_DIR: runtime };
		delete env.KEEL_MCP_TOKEN;
		const child = spawn(
			process.execPath,
			[
				join(REPO, "bin", "keel.js"),
				"serve",
				"--root",
				dir,
				"--http",
				"0",
				"--max-sessions",
				"3",
				"--max-message-mib",
				"2",
			],
			{ stdio: ["ignore", "ignore", "pipe"], env },
		);
		try {
			let stderr = "";
			const file = await new Promise<string>((resolve, reject) => {
				child.stderr.on("data", (d: Buffer) => {
					stderr += d.toString();
					const m = /with the token in (\S+)/.exec(stderr);
					if (m) resolve(m[1]);
				});
				child.on("exit", () => reject(new Error(`serve exited: ${stderr}`)));
			});
			expect(file.startsWith(join(runtime, "keel", "mcp-http-"))).toBe(true);
			const url = /listening on (\S+)/.exec(stderr)![1];
			const conn = await connectHttp(url, { token: readFileSync(file, "utf8").trim() });
			expect(expectOk(await call(conn.client, "read", { path: "a.txt" }))).toContain("alpha");
			await conn.close();
		} finally {
			child.kill("SIGKILL");
		}
	});

	it("refuses serve options on other commands and bad values", () => {
		const run = (...args: string[]) =>
			spawnSync(process.execPath, [join(REPO, "bin", "keel.js"), ...args], { encoding: "utf8", cwd: dir });
		const other = run("call", "ls", "{}", "--token-file", "x");
		expect(other.status).toBe(2);
		expect(other.stderr).toContain("--token-file applies to serve only");
		const bad = run("serve", "--max-sessions", "0");
		expect(bad.status).toBe(2);
		expect(bad.stderr).toContain("--max-sessions needs a whole number above 0");
	});
});
