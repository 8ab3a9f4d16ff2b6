/** Tool palettes by profile (REQUIREMENTS T4). */
import { bashTool, bashWithBackgroundTool } from "./bash.js";
import { editTool } from "./edit.js";
import { fileTool } from "./file.js";
import { findTool } from "./find.js";
import { grepTool } from "./grep.js";
import { lsTool } from "./ls.js";
import { pythonJobsTool, pythonTool } from "./python.js";
import { readTool, unifiedReadTool } from "./read.js";
import type { ToolDefinition } from "./types.js";
import { writeTool } from "./write.js";

export type Profile = "pi" | "unified";
export const PROFILES: readonly Profile[] = ["pi", "unified"];

/** The tools of a profile: `pi` is pi's seven; `unified` has one file tool and Python. */
export function toolsForProfile(profile: Profile): ToolDefinition[] {
	const pi = [readTool, writeTool, editTool, bashTool, grepTool, findTool, lsTool] as ToolDefinition[];
	if (profile === "pi") return pi;
	return [
		unifiedReadTool,
		fileTool,
		bashWithBackgroundTool,
		grepTool,
		findTool,
		lsTool,
		pythonTool,
		pythonJobsTool,
	] as ToolDefinition[];
}
