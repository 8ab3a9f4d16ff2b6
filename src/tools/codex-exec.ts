/**
 * The codex profile's `exec_command` and `write_stdin`: the argument names and behaviour Codex's
 * models know (cmd, workdir, tty, yield_time_ms, max_output_tokens; session_id, chars), served by
 * the session's process table. A command that ends within its yield time answers with its exit
 * code; one still running answers with a session_id that write_stdin writes to and polls.
 */
import { KeelError } from "../boundary/errors.js";
import { boolean, integer, number, object, optional, string, withRange } from "../boundary/schema.js";
import { requireDir, statPath } from "../edit/snapshot.js";
import type { ProcessInfo, ReadResult } from "../procs/types.js";
import type { ToolHost } from "../tool-host.js";
import { refusalFor } from "./bash-policy.js";
import { startHandle } from "./process.js";
import { type ArgsOf, defineTool, type ToolResult, text } from "./types.js";

const DEFAULT_EXEC_YIELD_MS = 10_000;
const DEFAULT_WRITE_YIELD_MS = 250;
const DEFAULT_POLL_YIELD_MS = 5_000;
const MIN_YIELD_MS = 250;
const MAX_YIELD_MS = 30_000;
const MAX_POLL_YIELD_MS = 300_000;
const DEFAULT_MAX_TOKENS = 10_000;
/** What a token stands for when output is cut to a token budget. */
const BYTES_PER_TOKEN = 4;
/** The most output one answer carries, whatever the budget asks. */
const MAX_ANSWER_BYTES = 1024 * 1024;

const clampYield = (ms: number, max: number) => Math.min(max, Math.max(MIN_YIELD_MS, ms));

/** Output over the budget keeps its head and tail, the middle replaced by a note. */
function fitTokens(s: string, maxTokens: number): { text: string; tokens: number } {
	const tokens = Math.ceil(Buffer.byteLength(s, "utf8") / BYTES_PER_TOKEN);
	const budget = maxTokens * BYTES_PER_TOKEN;
	if (Buffer.byteLength(s, "utf8") <= budget) return { text: s, tokens };
	const half = Math.floor(budget / 2);
	const head = s.slice(0, half);
	const tail = s.slice(s.length - half);
	return { text: `${head}\n…${tokens - maxTokens} tokens cut…\n${tail}`, tokens };
}

/** exec_command's and write_stdin's result details: the session id while it runs, else its exit code. */
export interface ExecDetails {
	/** Set while the process runs: pass it to write_stdin. */
	session_id?: number;
	/** Set once it ended: null when a signal ended it. */
	exit_code?: number | null;
	process: ProcessInfo;
	/** The file holding the whole output so far, when there is one. */
	fullOutputPath?: string;
}

function answer(r: ReadResult, started: number, host: ToolHost, maxTokens: number): ToolResult<ExecDetails> {
	const out = fitTokens(r.text, maxTokens);
	const lines = [`Wall time: ${((host.clock() - started) / 1000).toFixed(4)} seconds`];
	if (r.info.state === "running") lines.push(`Process running with session ID ${r.info.id}`);
	else if (r.info.exitCode !== null) lines.push(`Process exited with code ${r.info.exitCode}`);
	else lines.push(`Process ${r.info.state}${r.info.signal ? ` by ${r.info.signal}` : ""}`);
	lines.push(`Original token count: ${out.tokens}`, "Output:", out.text);
	return {
		content: [text(lines.join("\n"))],
		details: {
			...(r.info.state === "running" ? { session_id: r.info.id } : { exit_code: r.info.exitCode }),
			process: r.info,
			...(r.spillPath ? { fullOutputPath: r.spillPath } : {}),
		},
	};
}

/** exec_command's arguments: the schema's type. */
export type ExecCommandArgs = ArgsOf<typeof execCommandTool>;

const tokensRange = { minimum: 1, maximum: 1_000_000 };
const yieldRange = { minimum: 0, maximum: MAX_POLL_YIELD_MS, unit: "milliseconds" };

export const execCommandTool = defineTool({
	name: "exec_command",
	label: "exec_command",
	description:
		"Run a shell command; returns its output, or a session_id for write_stdin when it still runs after yield_time_ms.",
	parameters: object({
		cmd: string({ description: "Shell command line." }),
		workdir: optional(string({ description: "Directory to run in (default: the workspace root)." })),
		tty: optional(boolean({ description: "Run in a pseudo-terminal (interactive programs)." })),
		yield_time_ms: optional(
			withRange(
				number({
					description: "Milliseconds to wait before answering (default 10000; 250-30000).",
				}),
				yieldRange,
			),
		),
		max_output_tokens: optional(
			withRange(integer({ description: "Most output to return, in tokens (default 10000)." }), tokensRange),
		),
	}),
	annotations: { readOnly: false, destructive: true, idempotent: false },
	async execute(args, { host, signal }) {
		const started = host.clock();
		if (args.cmd.trim().length === 0) throw new KeelError("INVALID_ARGS", "cmd must not be empty.");
		if (args.cmd.includes("\0")) throw new KeelError("INVALID_ARGS", "cmd must not contain a NUL byte.");
		const refusal = await refusalFor(args.cmd);
		if (refusal) throw new KeelError("COMMAND_REFUSED", refusal);
		let cwd = host.workspace;
		if (args.workdir !== undefined) {
			const dir = await host.resolvePath(args.workdir, "read");
			requireDir(await statPath(host, dir.canonical), dir.canonical, args.workdir);
			cwd = dir.canonical;
		}
		const id = await startHandle(host, args.cmd, { cwd, tty: args.tty });
		const r = await host.processes.wait(id, {
			timeoutMs: clampYield(args.yield_time_ms ?? DEFAULT_EXEC_YIELD_MS, MAX_YIELD_MS),
			maxBytes: MAX_ANSWER_BYTES,
			signal,
		});
		return answer(r, started, host, args.max_output_tokens ?? DEFAULT_MAX_TOKENS);
	},
});

/** write_stdin's arguments: the schema's type. */
export type WriteStdinArgs = ArgsOf<typeof writeStdinTool>;

export const writeStdinTool = defineTool({
	name: "write_stdin",
	label: "write_stdin",
	description:
		"Write chars to a running exec_command session and return its new output; empty chars only polls.",
	parameters: object({
		session_id: withRange(integer({ description: "The session_id exec_command returned." }), {
			minimum: 1,
			maximum: 2 ** 31,
		}),
		chars: optional(string({ description: "Text for its stdin." })),
		yield_time_ms: optional(
			withRange(
				number({
					description: "Milliseconds to wait for output (default 250 after a write, 5000 for a poll).",
				}),
				yieldRange,
			),
		),
		max_output_tokens: optional(
			withRange(integer({ description: "Most output to return, in tokens (default 10000)." }), tokensRange),
		),
	}),
	annotations: { readOnly: false, destructive: true, idempotent: false },
	async execute(args, { host, signal }) {
		const started = host.clock();
		const chars = args.chars ?? "";
		const table = host.processes;
		if (chars.length > 0) await table.write(args.session_id, chars);
		const ms =
			chars.length > 0
				? clampYield(args.yield_time_ms ?? DEFAULT_WRITE_YIELD_MS, MAX_YIELD_MS)
				: clampYield(args.yield_time_ms ?? DEFAULT_POLL_YIELD_MS, MAX_POLL_YIELD_MS);
		const r = await table.wait(args.session_id, { timeoutMs: ms, maxBytes: MAX_ANSWER_BYTES, signal });
		return answer(r, started, host, args.max_output_tokens ?? DEFAULT_MAX_TOKENS);
	},
});
