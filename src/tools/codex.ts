/**
 * The `codex` profile's own schemas: the tool shapes Codex's models are trained
 * on, served by keel's engines. `shell` takes an argv (`command: string[]`), an optional `workdir`
 * and `timeout_ms`, and runs through keel's bash tool (its refusals, streaming, caps and process
 * group kill); `read_file` and `list_dir` take Codex's parameter names and run keel's read and ls.
 * Every path goes through the session's guard.
 */

import { shq } from "../backend/shell-quote.js";
import { KeelError } from "../boundary/errors.js";
import { array, integer, number, object, optional, string, withRange } from "../boundary/schema.js";
import { requireDir, statPath } from "../edit/snapshot.js";
import { bashTool } from "./bash.js";
import { lsTool } from "./ls.js";
import { RANGES } from "./ranges.js";
import { readTool } from "./read.js";
import { type ArgsOf, defineTool } from "./types.js";

/** shell's arguments: the schema's type. */
export type ShellArgs = ArgsOf<typeof shellTool>;

const SHELLS = new Set(["bash", "/bin/bash", "/usr/bin/bash", "sh", "/bin/sh", "/usr/bin/sh"]);

/** The command line keel's bash runs for an argv: `bash -lc SCRIPT` is the script itself. */
export function commandLine(argv: string[]): string {
	if (argv.length === 3 && SHELLS.has(argv[0]) && (argv[1] === "-c" || argv[1] === "-lc")) return argv[2];
	return argv.map(shq).join(" ");
}

export const shellTool = defineTool({
	name: "shell",
	label: "shell",
	description:
		'Run a command and return its output (stdout and stderr together, capped; the full output is spilled to a file when long). `command` is an argv; for shell syntax use ["bash", "-lc", "<script>"]. Set `workdir` (inside the workspace) rather than using cd. `timeout_ms` kills the command and its children after that many milliseconds.',
	parameters: object({
		command: array(string(), { minItems: 1, description: "The command to run, as an argv." }),
		workdir: optional(
			string({ description: "Directory to run the command in (default: the workspace root)." }),
		),
		timeout_ms: optional(withRange(number({ description: "Timeout in milliseconds." }), RANGES.timeoutMs)),
	}),
	annotations: { readOnly: false, destructive: true, idempotent: false },
	async execute(args, ctx) {
		if (args.command.some((w) => w.includes("\0")))
			throw new KeelError("INVALID_ARGS", "command must not contain a NUL byte.");
		if (args.timeout_ms !== undefined && !(Number.isFinite(args.timeout_ms) && args.timeout_ms > 0))
			throw new KeelError("INVALID_ARGS", `timeout_ms must be a positive number (got ${args.timeout_ms}).`);
		let line = commandLine(args.command);
		if (args.workdir !== undefined) {
			const dir = await ctx.host.resolvePath(args.workdir, "read");
			requireDir(await statPath(ctx.host, dir.canonical), dir.canonical, args.workdir);
			if (dir.canonical !== ctx.host.workspace) line = `cd ${shq(dir.canonical)} && ${line}`;
		}
		const timeout = args.timeout_ms === undefined ? undefined : args.timeout_ms / 1000;
		return bashTool.execute({ command: line, timeout }, ctx);
	},
});

/** read_file's arguments: the schema's type. */
export type ReadFileArgs = ArgsOf<typeof readFileTool>;

export const readFileTool = defineTool({
	name: "read_file",
	label: "read_file",
	description:
		"Read a text file (or an image) with line paging: `offset` is the 1-based first line, `limit` the number of lines. Long outputs are truncated with a note saying how to continue.",
	parameters: object({
		file_path: string({ description: "Path of the file (relative to the workspace root, or absolute)." }),
		offset: optional(withRange(integer({ description: "1-based line to start from." }), RANGES.lineNumber)),
		limit: optional(withRange(integer({ description: "Maximum number of lines." }), RANGES.lineCount)),
	}),
	annotations: { readOnly: true, destructive: false, idempotent: true },
	execute(args, ctx) {
		return readTool.execute({ path: args.file_path, offset: args.offset, limit: args.limit }, ctx);
	},
});

/** list_dir's arguments: the schema's type. */
export type ListDirArgs = ArgsOf<typeof listDirTool>;

export const listDirTool = defineTool({
	name: "list_dir",
	label: "list_dir",
	description: "List a directory's entries (directories end with /).",
	parameters: object({
		dir_path: string({ description: "Directory to list (relative to the workspace root, or absolute)." }),
		limit: optional(withRange(integer({ description: "Maximum number of entries." }), RANGES.resultCount)),
	}),
	annotations: { readOnly: true, destructive: false, idempotent: true },
	execute(args, ctx) {
		return lsTool.execute({ path: args.dir_path, limit: args.limit }, ctx);
	},
});
