/**
 * One run of a workspace checker through the session's backend: the command with the changed
 * files put in, its output read up to a bound, its errors parsed and placed (those outside every
 * root only counted), and a run that did not work made a status, never a failure of the change.
 * Apart from the diagnostics, which decide when a checker runs and what its errors mean.
 */
import { posix } from "node:path";
import type { ExecOps } from "../backend/types.js";
import { isWithin } from "../safety/canonical-paths.js";
import { type Checker, checksPath } from "./checkers.js";
import { parseDiagnostics, type RawDiagnostic } from "./parse.js";

/** A checker's output read at most (the rest is drained and dropped). */
export const MAX_OUTPUT_BYTES = 1024 * 1024;

/** A diagnostic at a canonical path inside a root. */
export interface Placed extends RawDiagnostic {
	at: string;
}

export type Run =
	| { status: "ok"; errors: Placed[]; outsideRoots: number; outputCut: boolean }
	| { status: "timeout" | "failed"; reason: string };
export type OkRun = Extract<Run, { status: "ok" }>;

/** Where a checker runs: the session's commands, its workspace root and roots, its command prefix. */
export interface CheckerHost {
	exec: ExecOps;
	workspace: string;
	roots: readonly string[];
	commandPrefix?: string;
}

const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** One run of `checker` on the files as they are now (`changes`: the changed files, by the model's and canonical path). */
export async function runChecker(
	host: CheckerHost,
	checker: Checker,
	changes: readonly { path: string; key: string }[],
	signal?: AbortSignal,
): Promise<Run> {
	const files = changes
		.filter((ch) => checksPath(checker, ch.path))
		.map((ch) => {
			const rel = posix.relative(host.workspace, ch.key);
			// "./" keeps a name that starts with "-" from reading as an option.
			return quote(isWithin(host.workspace, ch.key) ? `./${rel}` : ch.key);
		})
		.join(" ");
	const command = checker.command.replaceAll("{files}", files);
	const chunks: Buffer[] = [];
	let size = 0;
	let outputCut = false;
	// A checker never fails the change: a backend that cannot run it is a status like any other.
	const result = await host.exec
		.run({
			command: host.commandPrefix ? `${host.commandPrefix}\n${command}` : command,
			cwd: host.workspace,
			timeoutMs: checker.timeoutMs,
			signal,
			onData: (chunk) => {
				if (size >= MAX_OUTPUT_BYTES) {
					outputCut = true;
					return;
				}
				const part = chunk.subarray(0, MAX_OUTPUT_BYTES - size);
				if (part.length < chunk.length) outputCut = true;
				chunks.push(part);
				size += part.length;
			},
		})
		.catch(() => undefined);
	if (!result) return { status: "failed", reason: "could not be started through the backend" };
	const seconds = `${Math.round(checker.timeoutMs / 100) / 10} s`;
	if (result.timedOut) return { status: "timeout", reason: `did not finish within ${seconds}` };
	if (result.aborted) return { status: "failed", reason: "the call was aborted" };
	if (result.exitCode === null)
		return { status: "failed", reason: `killed by ${result.signal ?? "a signal"}` };
	const raw = parseDiagnostics(Buffer.concat(chunks).toString("utf8"));
	if (raw.length === 0 && result.exitCode !== 0)
		return {
			status: "failed",
			reason:
				result.exitCode === 127 || result.exitCode === 126
					? `could not start (exit ${result.exitCode}: not found or not executable)`
					: `exited with code ${result.exitCode} and printed no error keel could read`,
		};
	const errors: Placed[] = [];
	let outsideRoots = 0;
	for (const d of raw) {
		const at = posix.resolve(host.workspace, d.file);
		if (host.roots.some((r) => isWithin(r, at))) errors.push({ ...d, at });
		else outsideRoots++;
	}
	return { status: "ok", errors, outsideRoots, outputCut };
}
