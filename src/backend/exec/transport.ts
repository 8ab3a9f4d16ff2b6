/**
 * The one function an exec-capable sandbox has to provide. `docker exec`,
 * `kubectl exec`, `ssh host --` or a cloud sandbox SDK become a keel backend by implementing it.
 *
 * Contract:
 *  - `argv[0]` is a program looked up on the target's PATH; the arguments arrive unchanged (a
 *    transport that goes through a remote shell, like ssh, must quote them);
 *  - `stdin`, when given, is delivered whole and then closed; otherwise stdin is empty;
 *  - output is handed to `onData` as it arrives, bytes unchanged, stdout and stderr told apart;
 *  - the promise resolves with the exit status once the program has exited and its output was
 *    delivered (exitCode null when it was killed or the status is unknown);
 *  - when `signal` aborts, the call ends promptly (resolve with null, or reject); keel kills the
 *    remote process group itself with a second call, so a transport need not (but may) kill;
 *  - it rejects when the target cannot be reached or the program cannot be started.
 */
import { backendFact } from "../../boundary/backend-facts.js";
import { KeelError } from "../../boundary/errors.js";

export type OutputStream = "stdout" | "stderr";

export interface TransportOptions {
	stdin?: Uint8Array | NodeJS.ReadableStream;
	signal?: AbortSignal;
	onData?: (chunk: Buffer, stream: OutputStream) => void;
}

/** Runs one argv where the backend's files are (a container's exec, a sandbox SDK), streaming its output. */
export type ExecTransport = (argv: string[], opts: TransportOptions) => Promise<{ exitCode: number | null }>;

export interface ScriptResult {
	exitCode: number | null;
	stdout: Buffer;
	stderr: string;
}

/** Keeps at most this much stderr from a helper script (error messages only). */
const STDERR_CAP = 16 * 1024;

/**
 * Run a POSIX sh script on the target with positional arguments (never interpolated into the
 * script text, so paths need no quoting) and collect its output.
 */
export async function runScript(
	transport: ExecTransport,
	script: string,
	args: readonly string[],
	opts: { stdin?: Uint8Array; signal?: AbortSignal } = {},
): Promise<ScriptResult> {
	const out: Buffer[] = [];
	let stderr = "";
	let result: { exitCode: number | null };
	try {
		result = await transport(["sh", "-c", script, "keel", ...args], {
			stdin: opts.stdin,
			signal: opts.signal,
			onData: (chunk, stream) => {
				if (stream === "stdout") out.push(chunk);
				else if (stderr.length < STDERR_CAP) stderr += chunk.toString("utf8");
			},
		});
	} catch (e) {
		throw unreachable(e);
	}
	return { exitCode: result.exitCode, stdout: Buffer.concat(out), stderr };
}

/** A transport failure (target unreachable, program missing) as BACKEND_UNAVAILABLE. */
export function unreachable(e: unknown): KeelError {
	if (e instanceof KeelError) return e;
	return backendFact("transport-failed", { reason: (e as Error)?.message ?? String(e) }, { cause: e });
}
