/**
 * `process`: the session's process handles (procs/table.ts), started by `bash` with `background`,
 * `yield` or `tty`. One tool for all of them: list, read from a cursor, wait for exit or a
 * pattern, write to stdin, signal, kill.
 */
import { KeelError } from "../boundary/errors.js";
import {
	boolean,
	integer,
	number,
	object,
	oneOf,
	optional,
	string,
	withUnpublishedRange,
} from "../boundary/schema.js";
import { DEFAULT_MAX_BYTES } from "../boundary/truncate.js";
import type { ProcessInfo, ReadResult } from "../procs/types.js";
import type { ToolHost } from "../tool-host.js";
import { RANGES } from "./ranges.js";
import { type ArgsOf, defineTool, type ToolResult, text } from "./types.js";

/** The terminal size a `tty` command gets. */
export const TERMINAL_SIZE = { cols: 120, rows: 40 };
/** How long `wait` waits when no timeout is given. */
const DEFAULT_WAIT_MS = 30_000;
const SIGNALS = new Set([
	"SIGINT",
	"SIGTERM",
	"SIGHUP",
	"SIGQUIT",
	"SIGUSR1",
	"SIGUSR2",
	"SIGSTOP",
	"SIGCONT",
	"SIGKILL",
	"SIGWINCH",
]);

export function describeInfo(p: ProcessInfo): string {
	const state =
		p.state === "running"
			? "running"
			: p.exitCode !== null
				? `${p.state} (exit code ${p.exitCode})`
				: `${p.state}${p.signal ? ` (${p.signal})` : ""}`;
	return `process ${p.id}${p.pid ? ` (pid ${p.pid})` : ""}: ${state}, ${Math.round(p.ageMs / 1000)} s, ${p.outputBytes} bytes of output: ${p.command}`;
}

/** A process read's details: the handle's state, and the cursor to read on from. */
export interface ProcessReadDetails {
	process: ProcessInfo;
	/** Where the next read starts. */
	cursor: number;
	/** Where this read started. */
	from: number;
	/** Output past `cursor` is already there: read again. */
	more: boolean;
	/** The terminal's screen was returned instead of the stream. */
	screen?: true;
	/** Bytes no longer kept, skipped before `from`. */
	dropped?: { bytes: number; why: string };
	/** The file holding the whole output so far. */
	fullOutputPath?: string;
}

/** process list's details: the session's handles. */
export interface ProcessListDetails {
	/** Every handle of the session, in the order they were started. */
	processes: ProcessInfo[];
}

/** process kill's details: the handle as the kill left it. */
export interface ProcessKillDetails {
	/** The handle's state after the kill. */
	process: ProcessInfo;
}

/**
 * process's result details: list gives the handles, kill the handle it ended; read, wait, write
 * and signal give what they read (ProcessReadDetails).
 */
export type ProcessDetails = ProcessListDetails | ProcessReadDetails | ProcessKillDetails;

/** A read as the model sees it: the text, then one status line with the cursor to go on from. */
export function renderRead(r: ReadResult, extra?: string): ToolResult<ProcessReadDetails> {
	const notes: string[] = [];
	if (r.dropped)
		notes.push(`[${r.dropped.bytes} bytes before cursor ${r.from} were dropped: ${r.dropped.why}]`);
	const body = r.screen ? `[screen]\n${r.text}` : r.text;
	const status = `[${describeInfo(r.info)}; cursor ${r.next}${r.more ? ", more output: read again" : ""}${extra ? `; ${extra}` : ""}]`;
	return {
		content: [text([...notes, body, status].filter((s) => s.length > 0).join("\n"))],
		details: {
			process: r.info,
			cursor: r.next,
			from: r.from,
			more: r.more,
			...(r.screen ? { screen: true as const } : {}),
			...(r.dropped ? { dropped: r.dropped } : {}),
			...(r.spillPath ? { fullOutputPath: r.spillPath } : {}),
		},
	};
}

/** Start `command` as a handle in the workspace, with the session's command prefix. */
export function startHandle(
	host: ToolHost,
	command: string,
	opts: { cwd?: string; tty?: boolean; timeoutMs?: number },
): Promise<number> {
	return host.processes.start({
		command: host.commandPrefix ? `${host.commandPrefix}\n${command}` : command,
		cwd: opts.cwd ?? host.workspace,
		...(opts.tty ? { terminal: TERMINAL_SIZE } : {}),
		...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
	});
}

export function compilePattern(pattern: string): RegExp {
	try {
		return new RegExp(pattern, "m");
	} catch (e) {
		throw new KeelError(
			"INVALID_PATTERN",
			`pattern is not a valid regular expression: ${(e as Error).message}`,
		);
	}
}

/** process's arguments: the schema's type. */
export type ProcessArgs = ArgsOf<typeof processTool>;

export const processTool = defineTool({
	name: "process",
	label: "process",
	description:
		"Processes from bash background/yield/tty: list; read output since cursor (default: last read); wait for exit or a regex pattern (timeout s, default 30); write chars (eof: close stdin); signal; kill (whole group).",
	parameters: object({
		action: oneOf(["list", "read", "wait", "write", "signal", "kill"]),
		id: optional(withUnpublishedRange(integer(), { minimum: 1, maximum: 2 ** 31 })),
		cursor: optional(withUnpublishedRange(integer(), { minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
		pattern: optional(string()),
		timeout: optional(withUnpublishedRange(number(), RANGES.waitSeconds)),
		chars: optional(string()),
		eof: optional(boolean()),
		signal: optional(string({ description: "e.g. SIGINT" })),
	}),
	annotations: { readOnly: false, destructive: true, idempotent: false },
	async execute(args, { host, signal, onUpdate }): Promise<ToolResult<ProcessDetails>> {
		const table = host.processes;
		if (args.action === "list") {
			const all = table.list();
			return {
				content: [text(all.length ? all.map(describeInfo).join("\n") : "No processes.")],
				details: { processes: all },
			};
		}
		if (args.id === undefined) throw new KeelError("INVALID_ARGS", `action ${args.action} needs an id.`);
		const id = args.id;
		switch (args.action) {
			case "read":
				return renderRead(await table.read(id, { cursor: args.cursor, maxBytes: DEFAULT_MAX_BYTES }));
			case "wait": {
				const r = await table.wait(id, {
					...(args.pattern !== undefined ? { pattern: compilePattern(args.pattern) } : {}),
					timeoutMs: args.timeout === undefined ? DEFAULT_WAIT_MS : args.timeout * 1000,
					cursor: args.cursor,
					maxBytes: DEFAULT_MAX_BYTES,
					signal,
					// Output that arrives during the wait, as partial results (MCP: progress notifications).
					...(onUpdate ? { onOutput: (t: string) => onUpdate({ content: [text(t)] }) } : {}),
				});
				const how =
					r.matched !== undefined
						? `matched ${JSON.stringify(r.matched)}`
						: r.timedOut
							? "wait timed out"
							: undefined;
				return renderRead(r, how);
			}
			case "write":
				if (args.chars === undefined && !args.eof)
					throw new KeelError("INVALID_ARGS", "write needs chars (or eof: true).");
				await table.write(id, args.chars ?? "", args.eof === true);
				return renderRead(await table.wait(id, { timeoutMs: 250, maxBytes: DEFAULT_MAX_BYTES, signal }));
			case "signal": {
				const name = (args.signal ?? "SIGINT").toUpperCase();
				const sig = name.startsWith("SIG") ? name : `SIG${name}`;
				if (!SIGNALS.has(sig))
					throw new KeelError(
						"INVALID_ARGS",
						`signal must be one of ${[...SIGNALS].join(", ")} (got ${args.signal}).`,
					);
				table.signal(id, sig as NodeJS.Signals);
				return renderRead(await table.wait(id, { timeoutMs: 250, maxBytes: DEFAULT_MAX_BYTES, signal }));
			}
			case "kill": {
				const info = await table.kill(id);
				return { content: [text(describeInfo(info))], details: { process: info } };
			}
		}
	},
});
