/**
 * keel's exec backend over an AI SDK sandbox (`Experimental_SandboxSession`, passed to
 * generateText/streamText as `experimental_sandbox`), so a sandbox provider written for the AI SDK
 * gets keel's files, commands and search. Typed structurally: no dependency on the `ai` package.
 *
 * The session's `run` takes one shell command line and returns whole strings, with no stdin. So
 * each transport call is one `run` of `sh -c WRAPPER keel SOURCE ARGV...` (every word quoted;
 * WRAPPER is src/backend/remote/host/ai_sdk_wrapper.sh): stdin goes in base64 through an
 * environment variable (larger inputs are first appended to a temp file on the target in chunks,
 * one `run` each), and stdout comes back in base64, so binary bytes survive a text-only channel.
 * Output arrives when the command ends, not as it is written. Abort is the session's
 * `abortSignal` (what it kills is the provider's choice). No long-lived process with
 * stdin: `process` is absent and python is unavailable on this backend.
 */
import { randomBytes } from "node:crypto";
import { createExecBackend, type ExecSearchEngine } from "../exec/index.js";
import type { ExecTransport } from "../exec/transport.js";
import { hostProgram, readHostFile } from "../remote/host-programs.js";
import { shq } from "../shell-quote.js";
import type { Backend } from "../types.js";
import { stageInputScript } from "./sdk-process.js";

/** What keel uses of the AI SDK's Experimental_SandboxSession. */
export interface AiSdkSandboxSession {
	readonly description?: string;
	/** Run a command to its end. */
	run(options: {
		command: string;
		workingDirectory?: string;
		env?: Record<string, string>;
		abortSignal?: AbortSignal;
	}): PromiseLike<{ exitCode: number; stdout: string; stderr: string }>;
}

/** base64 characters per environment variable (a multiple of 4; well under ARG_MAX). */
const CHUNK = 96 * 1024;

/**
 * $1: where stdin comes from ("-" none, "env" KEEL_IN, else a temp file, removed after); then argv.
 * The program's status comes out on fd 4 while its stdout goes through base64 -w0 to fd 3.
 */
export const aiSdkWrapperScript = hostProgram(() => readHostFile("ai_sdk_wrapper.sh"));

export function aiSdkSandboxTransport(session: AiSdkSandboxSession): ExecTransport {
	const run = (command: string, env: Record<string, string> | undefined, signal?: AbortSignal) =>
		Promise.resolve(session.run({ command, env, abortSignal: signal }));
	return async (argv, opts) => {
		if (opts.stdin !== undefined && !(opts.stdin instanceof Uint8Array)) {
			throw new Error("this AI SDK sandbox cannot stream stdin to a running program");
		}
		const b64 = opts.stdin ? Buffer.from(opts.stdin).toString("base64") : "";
		let source = opts.stdin ? "env" : "-";
		let env: Record<string, string> | undefined = b64 ? { KEEL_IN: b64 } : undefined;
		if (b64.length > CHUNK) {
			source = `/tmp/.keel-in-${randomBytes(12).toString("hex")}`;
			env = undefined;
			for (let at = 0; at < b64.length; at += CHUNK) {
				const r = await run(
					["sh", "-c", stageInputScript(), "sh", source].map(shq).join(" "),
					{ KEEL_IN: b64.slice(at, at + CHUNK) },
					opts.signal,
				);
				if (r.exitCode !== 0) throw new Error(`cannot stage stdin on the sandbox: ${r.stderr.trim()}`);
			}
		}
		const command = ["sh", "-c", aiSdkWrapperScript(), "keel", source, ...argv].map(shq).join(" ");
		const r = await run(command, env, opts.signal);
		if (opts.signal?.aborted) return { exitCode: null };
		const out = Buffer.from(r.stdout.trim(), "base64");
		if (out.length > 0) opts.onData?.(out, "stdout");
		if (r.stderr) opts.onData?.(Buffer.from(r.stderr, "utf8"), "stderr");
		return { exitCode: r.exitCode };
	};
}

/** The exec backend over an AI SDK sandbox; no `process` (python unavailable). */
export function createAiSdkSandboxBackend(
	session: AiSdkSandboxSession,
	opts: { searchEngine?: ExecSearchEngine } = {},
): Backend {
	const backend = createExecBackend({
		transport: aiSdkSandboxTransport(session),
		kind: "ai-sdk-sandbox",
		searchEngine: opts.searchEngine,
	});
	return { ...backend, process: undefined };
}
