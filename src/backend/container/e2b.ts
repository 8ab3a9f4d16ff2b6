/**
 * keel on an E2B sandbox (`e2b` npm package, typed against 2.51.0; not imported: you pass your
 * own `Sandbox`). E2B's primitive is `sandbox.commands.run(cmd, { background: true, stdin: true,
 * onStdout, onStderr })`: a handle with `sendStdin`, `closeStdin`, `kill` (SIGKILL) and `wait()`.
 * `cmd` is one command line, run by `/bin/bash -l -c`; output arrives as decoded strings, so keel
 * runs its programs under sdk-process.ts's base64 WRAPPER (a text launcher). The handle keeps
 * stdin open, so the backend runs on persistent shells (one `sendStdin` per operation) and python
 * works; `timeoutMs: 0` (E2B: "0 disables the timeout") keeps those shells past E2B's 60 s default.
 */
import { shq } from "../shell-quote.js";
import { type SdkBackend, type SdkBackendOptions, sdkBackend } from "./sdk-backend.js";
import type { SdkLauncher } from "./sdk-process.js";

/** What keel uses of E2B's `CommandHandle`. */
export interface E2bCommandHandle {
	readonly pid: number;
	/** Write to the command's stdin. */
	sendStdin(data: string | Uint8Array): Promise<void>;
	/** Close the command's stdin. */
	closeStdin(): Promise<void>;
	/** Kill the command. */
	kill(): Promise<boolean>;
	/** Rejects with a CommandExitError (carrying exitCode) when the command exits non-zero. */
	wait(): Promise<{ exitCode: number }>;
}

/** What keel uses of E2B's `Sandbox`. */
export interface E2bSandbox {
	readonly sandboxId?: string;
	commands: {
		/** Start a command in the background. */
		run(
			cmd: string,
			opts: {
				background: true;
				stdin?: boolean;
				envs?: Record<string, string>;
				timeoutMs?: number;
				onStdout?: (data: string) => void;
				onStderr?: (data: string) => void;
			},
		): Promise<E2bCommandHandle>;
	};
}

/** How keel starts its host helper in an E2B sandbox. */
export function e2bLauncher(sandbox: E2bSandbox): SdkLauncher {
	return {
		label: `E2B sandbox${sandbox.sandboxId ? ` ${sandbox.sandboxId}` : ""}`,
		encoding: "text",
		stdin: true,
		async start(argv, out, opts) {
			const handle = await sandbox.commands.run(argv.map(shq).join(" "), {
				background: true,
				stdin: opts.stdin,
				envs: opts.env,
				timeoutMs: 0,
				onStdout: (d) => out.stdout(d),
				onStderr: (d) => out.stderr(d),
			});
			return {
				write: (data) => handle.sendStdin(data),
				closeStdin: () => handle.closeStdin(),
				kill: async () => {
					await handle.kill();
				},
				done: handle.wait().then(
					(r) => r.exitCode,
					(e: { exitCode?: unknown }) => (typeof e?.exitCode === "number" ? e.exitCode : null),
				),
			};
		},
	};
}

/** keel's backend on an E2B sandbox: persistent shells, files, commands, search, python. */
export function createE2bBackend(sandbox: E2bSandbox, opts: SdkBackendOptions = {}): SdkBackend {
	return sdkBackend(e2bLauncher(sandbox), { kind: "e2b", ...opts });
}

export type { SdkBackend, SdkBackendOptions } from "./sdk-backend.js";
