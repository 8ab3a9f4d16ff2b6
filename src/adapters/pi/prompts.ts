/**
 * System-prompt lines for keel's tools. pi does not carry a built-in's promptSnippet or
 * promptGuidelines over to an override, so keel supplies its own; each guideline names its tool,
 * because pi lists guidelines flat.
 */

export interface PromptMeta {
	promptSnippet?: string;
	promptGuidelines?: string[];
}

const READ_FIRST =
	"keel refuses to change a file that was not read in this session or changed since ([NOT_READ], [STALE_READ]): read it again, then retry.";

export const PROMPTS: Record<string, PromptMeta> = {
	read: { promptSnippet: "Read a text file (page with offset/limit) or an image" },
	write: {
		promptSnippet: "Create a file, or replace one you have read",
		promptGuidelines: [`Use write only for new files or full rewrites; ${READ_FIRST}`],
	},
	edit: {
		promptSnippet: "Replace exact text in a file you have read",
		promptGuidelines: [
			`Use edit for targeted changes, oldText copied exactly from a fresh read; ${READ_FIRST}`,
		],
	},
	file: {
		promptSnippet: "Change files: edit, write or delete, several files in one call",
		promptGuidelines: [
			'Use file for every file change: {type:"edit"} for targeted replacements, {type:"write"} for a new file or a full rewrite, {type:"delete"} to remove a file or symlink; put related changes in one file call.',
			`Read a file before a file edit, overwrite or delete; ${READ_FIRST}`,
			'In file edits prefer exact oldText; use matchMode "normalized" only for whitespace or quote drift and "lineRange" only with line numbers from a fresh read.',
			"When a file call fails with a payloadRef, retry with that payloadRef and the corrected path instead of resending the content; to copy content a file result named with a contentRef, pass the contentRef.",
			"Do not change files through bash (redirection, sed -i, rm) when the file tool can do it.",
		],
	},
	bash: {
		promptSnippet: "Run a shell command in the workspace (output is truncated; the full output is saved)",
	},
	grep: { promptSnippet: "Search file contents by regex or literal text (respects .gitignore)" },
	find: { promptSnippet: "Find files by glob pattern (respects .gitignore)" },
	ls: { promptSnippet: "List a directory" },
	apply_patch: {
		promptSnippet: "Change files with a patch (*** Begin Patch … *** End Patch): add, delete, update, move",
		promptGuidelines: [
			"apply_patch applies the whole patch or nothing; give each hunk about 3 unchanged context lines, and read a file before adding over it or moving onto it.",
		],
	},
	shell: { promptSnippet: 'Run a command given as an argv (use ["bash", "-lc", script] for shell syntax)' },
	read_file: { promptSnippet: "Read a text file by lines (offset/limit) or an image" },
	list_dir: { promptSnippet: "List a directory" },
	python: { promptSnippet: "Run Python code in a persistent per-session interpreter" },
	python_jobs: { promptSnippet: "List, wait for or cancel background Python jobs" },
	process: { promptSnippet: "Read, wait for, write to, signal or kill commands started in the background" },
	exec_command: { promptSnippet: "Run a shell command; a long one returns a session_id for write_stdin" },
	write_stdin: { promptSnippet: "Write to (or poll) a running exec_command session" },
};
