/**
 * keel on a Vercel Sandbox (`@vercel/sandbox`, typed against 3.5.0, the newest the registry serves
 * here; not imported: you pass your own `Sandbox`). Its primitive is `sandbox.runCommand({ cmd,
 * args, env, detached: true })` → Command: `logs()` an async iterator of { stream, data: string },
 * `wait()` → exitCode, `kill(signal)`. 3.5.0's RunCommandParams has no stdin (Vercel's changelog
 * announces `stdin: true` / `writeStdin()` for a later SDK), so there is no long-lived process to
 * talk to: each call is one command, stdin travels in base64 in KEEL_IN (at most 72 KiB: a larger
 * write fails with BACKEND_UNAVAILABLE), output in base64 through sdk-process.ts's WRAPPER. No
 * persistent shells, no python (`process` is absent). Abort kills the command with SIGKILL and
 * keel kills its group with a second command.
 */
import { type SdkBackend, type SdkBackendOptions, sdkBackend } from "./sdk-backend.js";
import type { SdkLauncher } from "./sdk-process.js";

/** What keel uses of Vercel's `Command`. */
export interface VercelCommand {
	/** The command's output as it comes. */
	logs(): AsyncIterable<{ stream: "stdout" | "stderr"; data: string }>;
	/** The exit code, once it ended. */
	wait(): Promise<{ exitCode: number | null }>;
	/** Kill the command. */
	kill(signal?: "SIGKILL"): Promise<void>;
}

/** What keel uses of Vercel's `Sandbox`. */
export interface VercelSandbox {
	readonly name?: string;
	/** Start a detached command. */
	runCommand(params: {
		cmd: string;
		args?: string[];
		env?: Record<string, string>;
		detached: true;
	}): Promise<VercelCommand>;
}

/** How keel starts its host helper in a Vercel sandbox. */
export function vercelLauncher(sandbox: VercelSandbox): SdkLauncher {
	return {
		label: `Vercel sandbox${sandbox.name ? ` ${sandbox.name}` : ""}`,
		encoding: "text",
		stdin: false,
		async start(argv, out, opts) {
			const cmd = await sandbox.runCommand({
				cmd: argv[0],
				args: argv.slice(1),
				env: opts.env,
				detached: true,
			});
			const drained = (async () => {
				for await (const line of cmd.logs()) {
					if (line.stream === "stdout") out.stdout(line.data);
					else if (line.stream === "stderr") out.stderr(line.data);
				}
			})();
			return {
				write: async () => {
					throw new Error("Vercel Sandbox 3.5 has no stdin for a running command");
				},
				closeStdin: async () => {},
				kill: () => cmd.kill("SIGKILL"),
				done: Promise.all([cmd.wait(), drained]).then(([r]) => r.exitCode),
			};
		},
	};
}

/** keel's backend on a Vercel Sandbox: files, commands, search; one command per call, no python. */
export function createVercelSandboxBackend(sandbox: VercelSandbox, opts: SdkBackendOptions = {}): SdkBackend {
	return sdkBackend(vercelLauncher(sandbox), { kind: "vercel-sandbox", ...opts });
}

export type { SdkBackend, SdkBackendOptions } from "./sdk-backend.js";
