/**
 * Real agent CLIs (Claude Code, Codex) run against keel's MCP server, each driven by a scripted
 * model on 127.0.0.1. They are installed by .ci/run into a cache outside the clone
 * (KEEL_CLIENTS_DIR, default ~/.cache/keel-clients); without them the tests are skipped.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { BIN } from "../fixtures/keel-cli.js";

const CLIENTS = process.env.KEEL_CLIENTS_DIR ?? join(homedir(), ".cache", "keel-clients");
export const CLAUDE = join(CLIENTS, "node_modules", ".bin", "claude");
export const CODEX = join(CLIENTS, "node_modules", ".bin", "codex");

export function missing(bin: string): string | undefined {
	if (existsSync(bin)) return undefined;
	const why = `${bin} is not installed (.ci/run installs it; or set KEEL_CLIENTS_DIR)`;
	if (process.env.CI) throw new Error(why);
	console.warn(`skipping: ${why}`);
	return why;
}

export interface Served {
	/** How the client starts or reaches keel. */
	stdio?: { command: string; args: string[] };
	http?: { url: string; headers?: Record<string, string> };
}

/** keel serve over stdio for `root` with extra CLI options. */
export const keelStdio = (root: string, extra: string[] = []): Served => ({
	stdio: { command: process.execPath, args: [BIN, "serve", "--root", root, ...extra] },
});

export interface ClientRun {
	code: number | null;
	stdout: string;
	stderr: string;
}

function run(bin: string, args: string[], cwd: string, env: Record<string, string>): Promise<ClientRun> {
	return new Promise((resolve, reject) => {
		const child = spawn(bin, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => {
			stdout += d;
		});
		child.stderr.setEncoding("utf8").on("data", (d: string) => {
			stderr += d;
		});
		const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
		child.on("error", reject);
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout, stderr });
		});
	});
}

/** Runs a client in its own HOME, removed afterwards (each run leaves its config and caches there). */
async function inHome(home: string, client: () => Promise<ClientRun>): Promise<ClientRun> {
	try {
		return await client();
	} finally {
		await rm(home, { recursive: true, force: true });
	}
}

const baseEnv = (home: string): Record<string, string> => ({
	PATH: process.env.PATH ?? "/usr/bin:/bin",
	HOME: home,
	LANG: "C.UTF-8",
	TMPDIR: tmpdir(),
});

/** `claude -p` with keel as its only MCP server, talking to the scripted model at `modelUrl`. */
export async function runClaude(cwd: string, modelUrl: string, keel: Served): Promise<ClientRun> {
	const home = await mkdtemp(join(tmpdir(), "keel-claude-home-"));
	const server = keel.stdio
		? { command: keel.stdio.command, args: keel.stdio.args }
		: { type: "http", url: keel.http?.url, ...(keel.http?.headers ? { headers: keel.http.headers } : {}) };
	const config = join(home, "mcp.json");
	await writeFile(config, JSON.stringify({ mcpServers: { keel: server } }));
	return inHome(home, () =>
		run(
			CLAUDE,
			[
				"-p",
				"Use keel's tools as scripted.",
				"--mcp-config",
				config,
				"--strict-mcp-config",
				"--allowedTools",
				"mcp__keel",
				"--output-format",
				"json",
			],
			cwd,
			{
				...baseEnv(home),
				ANTHROPIC_BASE_URL: modelUrl,
				ANTHROPIC_API_KEY: "sk-scripted",
				// MCP tools offered directly, not behind Claude Code's tool search; no traffic elsewhere.
				ENABLE_TOOL_SEARCH: "false",
				MCP_TIMEOUT: "60000",
				CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
				DISABLE_AUTOUPDATER: "1",
			},
		),
	);
}

const toml = (v: unknown) => JSON.stringify(v);

/** `codex exec` with keel as its MCP server and the scripted model as its provider. */
export async function runCodex(cwd: string, modelUrl: string, keel: Served): Promise<ClientRun> {
	const home = await mkdtemp(join(tmpdir(), "keel-codex-home-"));
	const codexHome = join(home, ".codex");
	await mkdir(codexHome);
	const server = keel.stdio
		? `command = ${toml(keel.stdio.command)}\nargs = ${toml(keel.stdio.args)}`
		: `url = ${toml(keel.http?.url)}${
				keel.http?.headers
					? `\nhttp_headers = { ${Object.entries(keel.http.headers)
							.map(([k, v]) => `${toml(k)} = ${toml(v)}`)
							.join(", ")} }`
					: ""
			}`;
	await writeFile(
		join(codexHome, "config.toml"),
		[
			'model = "scripted"',
			'model_provider = "scripted"',
			'approval_policy = "never"',
			'sandbox_mode = "danger-full-access"',
			"[model_providers.scripted]",
			'name = "scripted"',
			`base_url = ${toml(`${modelUrl}/v1`)}`,
			'wire_api = "responses"',
			'env_key = "SCRIPTED_API_KEY"',
			"[mcp_servers.keel]",
			server,
			// The first turn waits for keel's tools (Codex otherwise starts without a slow server).
			"required = true",
			"startup_timeout_sec = 60",
			"",
		].join("\n"),
	);
	return inHome(home, () =>
		run(CODEX, ["exec", "--skip-git-repo-check", "--json", "Use keel's tools as scripted."], cwd, {
			...baseEnv(home),
			CODEX_HOME: codexHome,
			SCRIPTED_API_KEY: "scripted",
		}),
	);
}

/** `keel serve --http 0` for `root` with a fixed bearer token; resolves once it names its URL. */
export function startKeelHttp(root: string, extra: string[] = []): Promise<Served & { close(): void }> {
	const token = `keel-test-${process.pid}-${Date.now()}`;
	const child = spawn(process.execPath, [BIN, "serve", "--root", root, "--http", "0", ...extra], {
		env: { ...process.env, KEEL_MCP_TOKEN: token },
		stdio: ["ignore", "ignore", "pipe"],
	});
	return new Promise((resolve, reject) => {
		let stderr = "";
		child.stderr.setEncoding("utf8").on("data", (d: string) => {
			stderr += d;
			const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
			if (m)
				resolve({
					http: { url: m[1], headers: { Authorization: `Bearer ${token}` } },
					close: () => child.kill("SIGTERM"),
				});
		});
		child.on("exit", (code) => reject(new Error(`keel serve exited (${code}): ${stderr}`)));
	});
}
