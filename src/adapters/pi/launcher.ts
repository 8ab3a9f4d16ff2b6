/**
 * `keel agent [pi args]`: pi with its built-in tools suppressed before the
 * session exists (--no-builtin-tools) and keel's extension loaded, every other argument passed
 * through. pi is found through KEEL_PI_BIN, then node_modules/.bin/pi in keel's directory or any
 * parent (keel installed as a dependency), then PATH.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface AgentOptions {
	env?: NodeJS.ProcessEnv;
	stderr?: (line: string) => void;
}

export const PI_NOT_INSTALLED =
	"keel agent: pi is not installed. Install it (npm install -g @mariozechner/pi-coding-agent on Node 20, " +
	"or @earendil-works/pi-coding-agent on Node 22+), or set KEEL_PI_BIN to the pi executable.";

function executable(file: string): boolean {
	try {
		accessSync(file, constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

/** The pi executable, or undefined when there is none. */
export function findPi(env: NodeJS.ProcessEnv = process.env, from = dirname(fileURLToPath(import.meta.url))) {
	if (env.KEEL_PI_BIN) return executable(env.KEEL_PI_BIN) ? env.KEEL_PI_BIN : undefined;
	for (let dir = from; ; dir = dirname(dir)) {
		const candidate = join(dir, "node_modules", ".bin", "pi");
		if (executable(candidate)) return candidate;
		if (dirname(dir) === dir) break;
	}
	for (const dir of (env.PATH ?? "").split(delimiter)) {
		if (dir && executable(join(dir, "pi"))) return join(dir, "pi");
	}
	return undefined;
}

/** keel's extension beside this module: the build's .js, or the .ts when run from source. */
export function extensionPath(): string {
	const js = fileURLToPath(new URL("./extension.js", import.meta.url));
	return existsSync(js) ? js : fileURLToPath(new URL("./extension.ts", import.meta.url));
}

export function agentArgs(argv: readonly string[]): string[] {
	return ["--no-builtin-tools", "-e", extensionPath(), ...argv];
}

const FORWARDED = ["SIGTERM", "SIGHUP"] as const;
const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Run pi in this terminal and resolve to its exit code (2 when pi cannot be started). */
export function runAgent(argv: string[], opts: AgentOptions = {}): Promise<number> {
	const env = opts.env ?? process.env;
	const stderr = opts.stderr ?? ((line: string) => process.stderr.write(`${line}\n`));
	const bin = findPi(env);
	if (!bin) {
		stderr(PI_NOT_INSTALLED);
		return Promise.resolve(2);
	}
	return new Promise((resolveExit) => {
		const child = spawn(bin, agentArgs(argv), { stdio: "inherit", env });
		// Ctrl+C reaches pi from the terminal itself: keel only stays alive until pi is done.
		// SIGTERM and SIGHUP sent to keel alone are passed on.
		const ignore = () => {};
		const forward = (sig: NodeJS.Signals) => {
			child.kill(sig);
		};
		process.on("SIGINT", ignore);
		for (const s of FORWARDED) process.on(s, forward);
		let settled = false;
		const done = (code: number) => {
			if (settled) return;
			settled = true;
			process.off("SIGINT", ignore);
			for (const s of FORWARDED) process.off(s, forward);
			resolveExit(code);
		};
		child.once("error", (e: NodeJS.ErrnoException) => {
			stderr(e.code === "ENOENT" || e.code === "EACCES" ? PI_NOT_INSTALLED : `keel agent: ${e.message}`);
			done(2);
		});
		child.once("exit", (code, signal) => {
			done(code ?? 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 1) : 1));
		});
	});
}
