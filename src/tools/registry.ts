/** Tool palettes by profile (REQUIREMENTS T4). */
import { applyPatchTool } from "./apply-patch.js";
import { bashTool, bashWithBackgroundTool } from "./bash.js";
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
import type { ToolDefinition } from "./types.js";
import { writeTool } from "./write.js";

export type Profile = "pi" | "unified" | "codex";
export const PROFILES: readonly Profile[] = ["pi", "unified", "codex"];

/**
 * The tools of a profile: `pi` is pi's seven; `unified` has one file tool, apply_patch and Python;
 * `codex` has the shapes Codex's models know (apply_patch, shell, exec_command, write_stdin,
 * read_file, list_dir) plus keel's grep and find.
 */
export function toolsForProfile(profile: Profile): ToolDefinition[] {
	const pi = [readTool, writeTool, editTool, bashTool, grepTool, findTool, lsTool] as ToolDefinition[];
	if (profile === "pi") return pi;
	if (profile === "codex")
		return [
			applyPatchTool,
			shellTool,
			execCommandTool,
			writeStdinTool,
			readFileTool,
			listDirTool,
			grepTool,
			findTool,
		] as ToolDefinition[];
	return [
		unifiedReadTool,
		fileTool,
		applyPatchTool,
		bashWithBackgroundTool,
		processTool,
		grepTool,
		findTool,
		lsTool,
		pythonTool,
		pythonJobsTool,
	] as ToolDefinition[];
}
