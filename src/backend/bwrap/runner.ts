/**
 * Runs argv inside one configured bubblewrap sandbox. The sandbox options are built and probed on
 * first use and then cached by this object (never module-wide); a failed probe is remembered too,
 * so every later call fails fast with the same BACKEND_UNAVAILABLE.
 */

import { type GroupRunRequest, runInGroup } from "../run-group.js";
import type { ExecResult } from "../types.js";
import { probeBwrap } from "./probe.js";
import { buildSandbox, type Sandbox, type SandboxOptions, sandboxEnv } from "./sandbox.js";

export interface SandboxRunnerOptions extends SandboxOptions {
	/** The bwrap program (default: "bwrap", looked up on PATH). */
	bwrap?: string;
	/** Environment for sandboxed commands (default: process.env). */
	env?: NodeJS.ProcessEnv;
}

export interface SandboxRunRequest extends Omit<GroupRunRequest, "argv" | "cwd" | "env"> {
	/** Directory inside the sandbox (must be within a bind). */
	cwd: string;
	/** Replaces the configured environment for this call. */
	env?: NodeJS.ProcessEnv;
}

export interface SandboxRunner {
	/** Build and probe the sandbox; throws BACKEND_UNAVAILABLE (with the fix) when bwrap cannot run. */
	ready(): Promise<Sandbox>;
	run(argv: readonly string[], req: SandboxRunRequest): Promise<ExecResult>;
	/** bwrap's argv and environment for running `argv` in `cwd`; only after ready() resolved. */
	wrap(
		argv: readonly string[],
		cwd: string,
		env?: NodeJS.ProcessEnv,
	): { argv: string[]; env: NodeJS.ProcessEnv };
}

export function createSandboxRunner(opts: SandboxRunnerOptions): SandboxRunner {
	const bwrap = opts.bwrap ?? "bwrap";
	let prepared: Promise<Sandbox> | undefined;
	let built: Sandbox | undefined;
	const ready = () => {
		prepared ??= buildSandbox(opts).then(async (sandbox) => {
			await probeBwrap(bwrap, sandbox);
			built = sandbox;
			return sandbox;
		});
		return prepared;
	};
	const wrapIn = (sandbox: Sandbox, argv: readonly string[], cwd: string, env?: NodeJS.ProcessEnv) => ({
		argv: [bwrap, ...sandbox.args, "--chdir", cwd, "--", ...argv],
		env: sandboxEnv(env ?? opts.env ?? process.env, sandbox),
	});
	return {
		ready,
		async run(argv, req) {
			return runInGroup({ ...req, ...wrapIn(await ready(), argv, req.cwd, req.env) });
		},
		wrap(argv, cwd, env) {
			if (!built) throw new Error("the bwrap sandbox is not ready: call ready() first");
			return wrapIn(built, argv, cwd, env);
		},
	};
}
