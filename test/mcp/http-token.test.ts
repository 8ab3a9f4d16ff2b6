/**
 * `keel serve --http` as a process (runServe from the build): the token it generates into a private
 * file named on stderr, $KEEL_MCP_TOKEN and --token-file, and the token file's own safety against
 * planted links and loose directories.
 */
import { spawn, spawnSync } from "node:child_process";
import {
	chmodSync,
	existsSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TokenError, tokenDirectory, writeTokenFile } from "../../src/adapters/mcp/auth.js";
import {
	BUILT,
	call,
	connectHttp,
	expectOk,
	LAUNCHER,
	makeDir,
	NOT_BUILT,
	removeDir,
	TEST_TOKEN,
} from "./helpers.js";

/** Spawns the launcher with --http 0 and waits for its URL and token lines on stderr. */
async function serveProcess(args: string[], env: NodeJS.ProcessEnv = process.env) {
	const child = spawn(process.execPath, [LAUNCHER, ...args, "--http", "0"], {
		stdio: ["ignore", "ignore", "pipe"],
		env,
	});
	let stderr = "";
	const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
	const url = await new Promise<string>((resolve, reject) => {
		child.stderr.on("data", (d: Buffer) => {
			stderr += d.toString();
			const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)[^\n]*\n[^\n]*Bearer[^\n]*\n/.exec(stderr);
			if (m) resolve(m[1]);
		});
		child.on("exit", () => reject(new Error(`server exited: ${stderr}`)));
	});
	return { child, url, stderr: () => stderr, exited };
}

describe.skipIf(!BUILT)("runServe --http as a process", () => {
	let dir: string;
	beforeEach(async () => {
		dir = await makeDir("http-proc", { "a.txt": "alpha\n" });
	});
	afterEach(async () => {
		await removeDir(dir);
	});

	it("generates a token into a private file named on stderr, serves with it, removes it on SIGTERM", async () => {
		if (!BUILT) throw new Error(NOT_BUILT);
		const tokenDir = join(dir, "runtime", "keel");
		const env = { ...process.env };
		delete env.KEEL_MCP_TOKEN;
		const proc = await serveProcess(["--root", dir, "--token-dir", tokenDir], env);
		try {
			const file = /with the token in (\S+)/.exec(proc.stderr())?.[1];
			expect(file).toBe(join(tokenDir, `mcp-http-${new URL(proc.url).port}.token`));
			const st = lstatSync(file!);
			expect(st.isFile()).toBe(true);
			expect(st.mode & 0o777).toBe(0o600);
			expect(st.uid).toBe(process.getuid!());
			expect(lstatSync(tokenDir).mode & 0o777).toBe(0o700);
			const token = readFileSync(file!, "utf8").trim();
			expect(token.length).toBeGreaterThanOrEqual(32);
			expect(proc.stderr()).not.toContain(token);
			await expect(connectHttp(proc.url, { token: null })).rejects.toThrow(/401|Unauthorized/);
			const conn = await connectHttp(proc.url, { token });
			expect(expectOk(await call(conn.client, "read", { path: "a.txt" }))).toContain("alpha");
			await conn.close();
			proc.child.kill("SIGTERM");
			expect(await proc.exited).toBe(0);
			expect(existsSync(file!)).toBe(false);
		} finally {
			proc.child.kill("SIGKILL");
		}
	});

	it("takes the token from $KEEL_MCP_TOKEN or --token-file, and refuses a short one", async () => {
		if (!BUILT) throw new Error(NOT_BUILT);
		const fromEnv = await serveProcess(["--root", dir], { ...process.env, KEEL_MCP_TOKEN: TEST_TOKEN });
		try {
			expect(fromEnv.stderr()).toContain("token from $KEEL_MCP_TOKEN");
			const conn = await connectHttp(fromEnv.url);
			expect(expectOk(await call(conn.client, "ls", {}))).toContain("a.txt");
			await conn.close();
		} finally {
			fromEnv.child.kill("SIGKILL");
		}
		const tokenFile = join(dir, "my.token");
		writeFileSync(tokenFile, `${TEST_TOKEN}-file\n`);
		const fromFile = await serveProcess(["--root", dir, "--token-file", tokenFile]);
		try {
			await expect(connectHttp(fromFile.url)).rejects.toThrow(/401|Unauthorized/);
			const conn = await connectHttp(fromFile.url, { token: `${TEST_TOKEN}-file` });
			expect(expectOk(await call(conn.client, "ls", {}))).toContain("a.txt");
			await conn.close();
		} finally {
			fromFile.child.kill("SIGKILL");
		}
		writeFileSync(tokenFile, "short\n");
		const refused = spawnSync(
			process.execPath,
			[LAUNCHER, "--root", dir, "--http", "0", "--token-file", tokenFile],
			{
				encoding: "utf8",
			},
		);
		expect(refused.status).toBe(2);
		expect(refused.stderr).toContain("shorter than 16 characters");
	});
});

describe("the generated token's file", () => {
	let dir: string;
	beforeEach(async () => {
		dir = await makeDir("token-file");
	});
	afterEach(async () => {
		await removeDir(dir);
	});

	it("is never written through a planted link, and replaces a stale file", async () => {
		const tokenDir = join(dir, "keel");
		mkdirSync(tokenDir, { mode: 0o700 });
		const victim = join(dir, "victim.txt");
		writeFileSync(victim, "precious\n");
		symlinkSync(victim, join(tokenDir, "mcp-http-4242.token"));
		const path = await writeTokenFile("t".repeat(40), 4242, tokenDir);
		expect(readFileSync(victim, "utf8")).toBe("precious\n");
		expect(lstatSync(path).isSymbolicLink()).toBe(false);
		expect(lstatSync(path).mode & 0o777).toBe(0o600);
		expect(readFileSync(path, "utf8")).toBe(`${"t".repeat(40)}\n`);
		await writeTokenFile("u".repeat(40), 4242, tokenDir);
		expect(readFileSync(path, "utf8")).toBe(`${"u".repeat(40)}\n`);
	});

	it("refuses a directory that is a link, or open to others", async () => {
		const elsewhere = join(dir, "elsewhere");
		mkdirSync(elsewhere, { mode: 0o700 });
		symlinkSync(elsewhere, join(dir, "linked"));
		await expect(writeTokenFile("t".repeat(40), 1, join(dir, "linked"))).rejects.toThrow(TokenError);
		expect(readdirSync(elsewhere)).toEqual([]);
		const open = join(dir, "open");
		mkdirSync(open);
		chmodSync(open, 0o755);
		await expect(writeTokenFile("t".repeat(40), 1, open)).rejects.toThrow(/open to other users/);
		expect(readdirSync(open)).toEqual([]);
	});

	it("lives in $XDG_RUNTIME_DIR/keel, else ~/.config/keel", () => {
		expect(tokenDirectory({ XDG_RUNTIME_DIR: "/run/user/1000" }, "/home/u")).toBe("/run/user/1000/keel");
		expect(tokenDirectory({}, "/home/u")).toBe("/home/u/.config/keel");
	});
});
