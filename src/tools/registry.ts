/** Tool palettes by profile. */
import { KeelError } from "../boundary/errors.js";
import { applyPatchTool, unifiedApplyPatchTool } from "./apply-patch.js";
import { bashTool, bashWithBackgroundTool } from "./bash.js";
import type { checkpointsTool } from "./checkpoints.js";
import { listDirTool, readFileTool, shellTool } from "./codex.js";
import { execCommandTool, writeStdinTool } from "./codex-exec.js";
import { editTool } from "./edit.js";
import { fileTool } from "./file.js";
import { findTool } from "./find.js";
import { grepTool } from "./grep.js";
import { lsTool } from "./ls.js";
import { processTool } from "./process.js";
import { pythonJobsTool, pythonTool } from "./python.js";
import { readTool, unifiedReadTool } from "./read.js";
import { terse } from "./terse.js";
import type { ToolDefinition } from "./types.js";
import { writeTool } from "./write.js";

/**
 * The unified profile's shorter text for tools it shares with pi (pi's profile keeps pi's argument
 * text): what each argument means is said once, in the description.
 */
const unifiedText = {
	read: terse(
		unifiedReadTool,
		"Read a file: text, or an image (jpg, png, gif, webp) as an attachment. Text is cut at 2000 lines or 50KB; page with offset (1-based line) and limit until done.",
		{ hashline: unifiedReadTool.parameters.properties?.hashline?.description },
	),
	bash: terse(
		bashWithBackgroundTool,
		"Run a bash command in the workspace root; returns stdout and stderr, cut to the last 2000 lines or 50KB (full output saved to a file). timeout: seconds. background: answer at once with a process id (see process); yield: seconds to wait before that; tty: in a terminal. Otherwise what it starts ends with it.",
	),
	grep: terse(
		grepTool,
		"Search file contents for a regex (or literal text); returns matching lines with paths and line numbers. Respects .gitignore. glob: file filter ('*.ts'); context: lines around matches. Cut at limit (default 100) matches or 50KB, lines at 500 chars.",
	),
	find: terse(
		findTool,
		"Find files by glob ('**/*.json') under path; returns paths relative to it. Respects .gitignore. Cut at limit (default 1000) results or 50KB.",
	),
	ls: terse(
		lsTool,
		"List path (default: root), sorted, '/' after directories, dotfiles included; cut at limit (default 500) entries or 50KB.",
	),
};

/** A tool palette: pi's seven tools, the unified set (one file tool, apply_patch, Python), or Codex's shapes. */
export type Profile = "pi" | "unified" | "codex";
/** Every profile, by name. */
export const PROFILES: readonly Profile[] = ["pi", "unified", "codex"];

/** Each profile's tools, in the order they are offered (the types below are read from these). */
const PALETTES = {
	pi: [readTool, writeTool, editTool, bashTool, grepTool, findTool, lsTool],
	codex: [
		applyPatchTool,
		shellTool,
		execCommandTool,
		writeStdinTool,
		readFileTool,
		listDirTool,
		grepTool,
		findTool,
	],
	unified: [
		unifiedText.read,
		fileTool,
		unifiedApplyPatchTool,
		unifiedText.bash,
		processTool,
		unifiedText.grep,
		unifiedText.find,
		unifiedText.ls,
		pythonTool,
		pythonJobsTool,
	],
} as const;

/**
 * The tool definitions a profile can offer, as a union: the unified profile's include
 * `checkpoints`, offered when the session keeps checkpoints.
 */
export type ProfileTool<P extends Profile> =
	| (typeof PALETTES)[P][number]
	| (P extends "unified" ? typeof checkpointsTool : never);

/**
 * The tools of a profile: `pi` is pi's seven; `unified` has one file tool, apply_patch and Python;
 * `codex` has the shapes Codex's models know (apply_patch, shell, exec_command, write_stdin,
 * read_file, list_dir) plus keel's grep and find. Any other name is an error: an unknown profile
 * never gets a palette.
 */
export function toolsForProfile(profile: Profile): ToolDefinition[] {
	if (!Object.hasOwn(PALETTES, profile))
		throw new KeelError(
			"INVALID_ARGS",
			`unknown profile ${JSON.stringify(profile)}: use one of ${PROFILES.join(", ")} (names are case-sensitive)`,
		);
	return [...PALETTES[profile]];
}
