/**
 * End-to-end helpers: the pi installations under test, a temp workspace with HOME and pi's agent
 * dir inside it, a scripted pi run (json mode, offline, scripted-model.ts as the model), and
 * readers for the json event stream and the model's request log.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const SCRIPTED_MODEL = join(REPO, "test", "pi", "fixtures", "scripted-model.ts");
export const BUILT_EXTENSION = join(REPO, "dist", "adapters", "pi", "extension.js");
export const BUILT_LAUNCHER = join(REPO, "dist", "adapters", "pi", "launcher.js");
export const BUILT = existsSync(BUILT_EXTENSION) && existsSync(BUILT_LAUNCHER);
export const NOT_BUILT =
	"needs the build (npx tsc -p tsconfig.build.json): pi loads dist/adapters/pi/extension.js";

/** A pi installation: the node binary that runs it and its cli script. */
export interface PiInstall {
	label: string;
	node: string;
	cli: string;
}

function nodeVersion(node: string): number[] | undefined {
	try {
		const v = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
		return v.replace(/^v/, "").split(".").map(Number);
	} catch {
		return undefined;
	}
}

const atLeast = (v: number[] | undefined, want: number[]) => {
	if (!v) return false;
	for (let i = 0; i < want.length; i++) if ((v[i] ?? 0) !== want[i]) return (v[i] ?? 0) > want[i];
	return true;
};

/** pi 0.73.x, the dev dependency, on this Node (20). */
export function pi073(): PiInstall | string {
	const cli = join(REPO, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
	if (!existsSync(cli)) return "@mariozechner/pi-coding-agent is not installed";
	return { label: "pi 0.73", node: process.execPath, cli };
}

/**
 * pi 1.x (@earendil-works/pi-coding-agent) and a Node >= 22.19 to run it: from KEEL_PI1_DIR (an npm
 * prefix holding both, e.g. `npm i --prefix DIR node@22 @earendil-works/pi-coding-agent@1.6.0`) or
 * this repository's node_modules; Node from KEEL_NODE22, that prefix, or PATH.
 */
export function pi1(): PiInstall | string {
	const prefixes = [process.env.KEEL_PI1_DIR, REPO].filter((p): p is string => Boolean(p));
	let cli: string | undefined;
	for (const p of prefixes) {
		const c = join(p, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
		if (existsSync(c)) {
			cli = c;
			break;
		}
	}
	if (!cli) return "pi 1.x not found: set KEEL_PI1_DIR to an npm prefix with @earendil-works/pi-coding-agent";
	const nodes = [
		process.env.KEEL_NODE22,
		...prefixes.map((p) => join(p, "node_modules", "node", "bin", "node")),
		"node",
	].filter((p): p is string => Boolean(p));
	for (const node of nodes) {
		if (node !== "node" && !existsSync(node)) continue;
		if (atLeast(nodeVersion(node), [22, 19])) return { label: "pi 1.x", node, cli };
	}
	return "no Node >= 22.19 for pi 1.x: set KEEL_NODE22 or install node@22 into KEEL_PI1_DIR";
}

export interface Sandbox {
	dir: string;
	ws: string;
	home: string;
	agent: string;
	log: string;
}

/** A temp HOME, pi agent dir and workspace holding `files`. */
export async function sandbox(files: Record<string, string>): Promise<Sandbox> {
	const dir = await realpath(await mkdtemp(join(tmpdir(), "keel-pi-")));
	const s = {
		dir,
		ws: join(dir, "ws"),
		home: join(dir, "home"),
		agent: join(dir, "agent"),
		log: join(dir, "log.jsonl"),
	};
	for (const d of [s.ws, s.home, s.agent]) await mkdir(d, { recursive: true });
	for (const [rel, body] of Object.entries(files)) {
		await mkdir(dirname(join(s.ws, rel)), { recursive: true });
		await writeFile(join(s.ws, rel), body);
	}
	return s;
}

export const removeSandbox = (s: Sandbox) => rm(s.dir, { recursive: true, force: true });

export type Turn = { name: string; arguments: Record<string, unknown> }[] | string;

/** The environment of a scripted run: nothing from the real HOME, offline. */
export async function scriptEnv(s: Sandbox, turns: Turn[], extra: NodeJS.ProcessEnv = {}) {
	const script = join(s.dir, "script.json");
	await writeFile(script, JSON.stringify(turns));
	const env: NodeJS.ProcessEnv = {
		PATH: process.env.PATH,
		HOME: s.home,
		PI_CODING_AGENT_DIR: s.agent,
		PI_OFFLINE: "1",
		KEEL_PI_SCRIPT: script,
		KEEL_PI_LOG: s.log,
		...extra,
	};
	return env;
}

/** Arguments that select the scripted model, offline, with no session file. */
export const scriptArgs = (...rest: string[]) => [
	"--offline",
	"--no-session",
	"-e",
	SCRIPTED_MODEL,
	"--provider",
	"keel-script",
	"--model",
	"scripted",
	...rest,
];

export interface Run {
	code: number | null;
	stdout: string;
	stderr: string;
}

export function run(
	cmd: string,
	args: string[],
	opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
) {
	return new Promise<Run>((resolveRun, reject) => {
		const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.on("data", (d) => {
			stdout += d;
		});
		child.stderr.on("data", (d) => {
			stderr += d;
		});
		const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
		child.on("error", reject);
		child.on("close", (code) => {
			clearTimeout(timer);
			resolveRun({ code, stdout, stderr });
		});
	});
}

/** pi in json mode with keel's built extension and the scripted model. */
export function runPi(pi: PiInstall, s: Sandbox, env: NodeJS.ProcessEnv, ...args: string[]) {
	return run(pi.node, [pi.cli, "--mode", "json", ...scriptArgs("-e", BUILT_EXTENSION, ...args, "go")], {
		cwd: s.ws,
		env,
	});
}

export interface ToolEnd {
	toolName: string;
	isError: boolean;
	result: { content: { type: string; text?: string }[]; details?: any };
}

export function events(stdout: string): any[] {
	return stdout
		.split("\n")
		.filter((l) => l.startsWith("{"))
		.map((l) => JSON.parse(l));
}

export const toolEnds = (stdout: string): ToolEnd[] =>
	events(stdout).filter((e) => e.type === "tool_execution_end");

export const textOf = (t: ToolEnd) => t.result.content.map((c) => c.text ?? "").join("\n");

/** What the model was offered and shown, one entry per request. */
export async function modelLog(s: Sandbox): Promise<{ turn: number; tools: string[]; results: any[] }[]> {
	const raw = await readFile(s.log, "utf8").catch(() => "");
	return raw
		.split("\n")
		.filter(Boolean)
		.map((l) => JSON.parse(l));
}

/** An executable shell script (a stand-in pi, or a wrapper that runs a pi under a chosen node). */
export async function script(path: string, body: string): Promise<string> {
	await writeFile(path, `#!/bin/sh\n${body}\n`);
	await chmod(path, 0o755);
	return path;
}
