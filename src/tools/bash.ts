/**
 * `bash` (pi-compatible): run a command in the workspace. Output streams to onUpdate, is capped as
 * it arrives (tail kept, full text spilled to a file), and abort or timeout kills the process group.
 */

import type { ExecResult } from "../backend/types.js";
import { KeelError } from "../boundary/errors.js";
import { fullOutputNote, OutputSink, type OutputSnapshot } from "../boundary/output-sink.js";
import {
	type Accepted,
	boolean,
	number,
	object,
	optional,
	type Schema,
	string,
	withUnpublishedRange,
} from "../boundary/schema.js";
import {
	DEFAULT_MAX_BYTES,
	DEFAULT_MAX_LINES,
	formatSize,
	type TruncationResult,
} from "../boundary/truncate.js";
import { refusalFor } from "./bash-policy.js";
import { type ProcessReadDetails, renderRead, startHandle } from "./process.js";
import { RANGES } from "./ranges.js";
import { defineTool, type ToolResult, text } from "./types.js";

const BASE_PROPS = {
	command: string({ description: "Bash command to execute" }),
	timeout: optional(
		withUnpublishedRange(
			number({ description: "Timeout in seconds (optional, no default timeout)" }),
			RANGES.timeoutSeconds,
		),
	),
};
/** pi's schema exactly (the pi profile); the unified profile adds the process-handle options. */
const schema = object(BASE_PROPS);
const backgroundSchema = object({
	...BASE_PROPS,
	background: optional(boolean({ description: "Return at once with a process id (see process)" })),
	yield: optional(
		withUnpublishedRange(
			number({ description: "Seconds to wait before returning a process id instead" }),
			RANGES.waitSeconds,
		),
	),
	tty: optional(boolean({ description: "Run in a terminal (REPLs, full-screen programs)" })),
});

const UPDATE_EVERY_MS = 100;

/** Linux's MAX_ARG_STRLEN (32 pages) less the NUL: the command travels as one argument of `bash -c`. */
const MAX_COMMAND_BYTES = 128 * 1024 - 1;

/**
 * bash's result details. A command that exits non-zero is a failed call, not a result: its error
 * is COMMAND_FAILED with `details.exitCode` (null when a signal killed it).
 */
export type BashDetails = Partial<ProcessReadDetails> & {
	/** Set when the output shown was cut to its last lines or bytes. */
	truncation?: TruncationResult;
	/** The file holding the whole output, when it was cut. */
	fullOutputPath?: string;
	/** Why the whole output could not be saved, when it could not. */
	spillError?: string;
};

function describe(snapshot: OutputSnapshot, empty: string): { text: string; details?: BashDetails } {
	const t = snapshot.truncation;
	let out = snapshot.content || empty;
	if (!t.truncated) return { text: out };
	const first = t.totalLines - t.outputLines + 1;
	const where = fullOutputNote(snapshot);
	if (t.lastLinePartial)
		out += `\n\n[Showing last ${formatSize(t.outputBytes)} of line ${t.totalLines}. ${where}]`;
	else if (t.truncatedBy === "lines")
		out += `\n\n[Showing lines ${first}-${t.totalLines} of ${t.totalLines}. ${where}]`;
	else
		out += `\n\n[Showing lines ${first}-${t.totalLines} of ${t.totalLines} (${formatSize(DEFAULT_MAX_BYTES)} limit). ${where}]`;
	return {
		text: out,
		details: { truncation: t, fullOutputPath: snapshot.fullOutputPath, spillError: snapshot.spillError },
	};
}

/** bash's arguments (the unified profile's; pi's schema has command and timeout only). */
export type BashArgs = Accepted<typeof backgroundSchema>;

const DESCRIPTION = `Run a bash command in the workspace root; returns stdout and stderr, truncated to the last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (the full output is saved to a file). timeout: seconds, optional.`;

const bashDefinition = <A extends BashArgs>(parameters: Schema<A>, withBackground: boolean) =>
	defineTool<A, BashDetails, "bash">({
		name: "bash",
		label: "bash",
		description: withBackground
			? `${DESCRIPTION} Unless background/yield/tty, what it starts ends with it.`
			: DESCRIPTION,
		parameters,
		annotations: { readOnly: false, destructive: true, idempotent: false },
		async execute(args: BashArgs, { host, signal, onUpdate }): Promise<ToolResult<BashDetails>> {
			if (args.command.trim().length === 0) throw new KeelError("INVALID_ARGS", "command must not be empty.");
			if (args.command.includes("\0"))
				throw new KeelError("INVALID_ARGS", "command must not contain a NUL byte.");
			const commandBytes = Buffer.byteLength(args.command, "utf8");
			if (commandBytes > MAX_COMMAND_BYTES) {
				throw new KeelError(
					"INVALID_ARGS",
					`command is ${commandBytes} bytes; a command can be at most ${MAX_COMMAND_BYTES} bytes (the system's limit for one argument). Write the script to a file and run it (e.g. bash script.sh), or pass large data in a file.`,
				);
			}
			if (args.timeout !== undefined && !(Number.isFinite(args.timeout) && args.timeout > 0)) {
				throw new KeelError(
					"INVALID_ARGS",
					`timeout must be a positive number of seconds (got ${args.timeout}).`,
				);
			}
			const refusal = await refusalFor(args.command);
			if (refusal) throw new KeelError("COMMAND_REFUSED", refusal);
			if (args.background || args.tty || args.yield !== undefined) {
				const id = await startHandle(host, args.command, {
					tty: args.tty,
					...(args.timeout !== undefined ? { timeoutMs: args.timeout * 1000 } : {}),
				});
				const waitMs = args.background ? 0 : (args.yield ?? 0) * 1000;
				const r = await host.processes.wait(id, {
					timeoutMs: waitMs,
					maxBytes: DEFAULT_MAX_BYTES,
					signal,
				});
				return renderRead(
					r,
					r.info.state === "running" ? "use process to read, wait, write or kill" : undefined,
				);
			}

			const sink = new OutputSink(host.spill, "bash");
			let timer: NodeJS.Timeout | undefined;
			let lastUpdate = 0;
			const emit = () => {
				timer = undefined;
				lastUpdate = host.clock();
				const s = sink.snapshot();
				onUpdate?.({ content: [text(s.content)], details: describe(s, "").details });
			};
			const onData = (chunk: Buffer) => {
				sink.append(chunk);
				if (!onUpdate || timer) return;
				const wait = UPDATE_EVERY_MS - (host.clock() - lastUpdate);
				timer = setTimeout(emit, Math.max(0, wait));
			};
			let result: ExecResult;
			try {
				result = await host.exec.run({
					// As pi: the configured prefix on its own line, then the command.
					command: host.commandPrefix ? `${host.commandPrefix}\n${args.command}` : args.command,
					cwd: host.workspace,
					timeoutMs: args.timeout === undefined ? undefined : args.timeout * 1000,
					signal,
					onData,
				});
			} finally {
				if (timer) clearTimeout(timer);
				sink.close();
			}
			const { text: out, details } = describe(sink.snapshot(), "(no output)");
			const withStatus = (status: string) => `${out === "(no output)" ? "" : `${out}\n\n`}${status}`;
			if (result.aborted) throw new KeelError("ABORTED", withStatus("Command aborted"), { details });
			if (result.timedOut) {
				throw new KeelError("TIMEOUT", withStatus(`Command timed out after ${args.timeout} seconds`), {
					details,
				});
			}
			if (result.exitCode !== 0) {
				const status =
					result.exitCode === null
						? `Command killed by ${result.signal}`
						: `Command exited with code ${result.exitCode}`;
				throw new KeelError("COMMAND_FAILED", withStatus(status), {
					details: { ...details, exitCode: result.exitCode },
				});
			}
			return { content: [text(out)], details };
		},
	});

/** pi's bash (the pi profile). */
export const bashTool = bashDefinition(schema, false);
/** bash with `background`, `yield` and `tty` (the unified profile). */
export const bashWithBackgroundTool = bashDefinition(backgroundSchema, true);
