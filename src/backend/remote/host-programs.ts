/**
 * The programs keel runs outside its own process (host/*.sh, host/*.py: on a remote host, in a
 * container or sandbox SDK, inside the bwrap sandbox, and the local watchdog) are real files, read
 * from the package at run time (it ships src/, so they are found from src/backend/remote and from
 * dist/backend/remote alike) and sent as text: nothing is installed where they run.
 *
 * Nothing is read at import: a module that sends a program holds a hostProgram, which builds the
 * text on its first use and keeps it.
 *
 * A program made of several files is joined here, in a stated order. A program with parameters
 * has `@@NAME@@` placeholders, filled by fillPlaceholders: every placeholder must get a value,
 * and a value is a plain word (digits, letters, `%`, `.`, space), never shell or Python syntax.
 * The one exception is a whole program placed between single quotes (`'@@NAME@@'`), which must
 * not contain a single quote itself (quotedPrograms).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Every file of host/ that keel sends; the lint test checks that none is left out. */
export const HOST_FILES = [
	"bwrap_server.py",
	"watchdog.sh",
	"sdk_wrapper.sh",
	"sdk_relay.py",
	"ai_sdk_wrapper.sh",
	"find_python.sh",
	"start_shell.sh",
	"start_python.sh",
	"in_dir.sh",
	"search_in_dir.sh",
	"stage_input.sh",
	"child_limits.sh",
	"host_lib.sh",
	"shell_lib.sh",
	"durable.py",
	"file_helper_core.py",
	"file_helper_look.py",
	"file_helper.py",
	"runner_head.py",
	"runner_procs.py",
	"runner_live.py",
	"runner.py",
	"exec_probe.sh",
	"exec_realpath.sh",
	"exec_lstat.sh",
	"exec_stat.sh",
	"exec_readlink.sh",
	"exec_read_checks.sh",
	"exec_read_file.sh",
	"exec_read_current.sh",
	"exec_readdir.sh",
	"exec_mkdirp.sh",
	"exec_hash_file.sh",
	"exec_write.sh",
	"exec_replace.py",
	"exec_unlink.sh",
	"exec_sweep_temps.sh",
	"exec_kill.sh",
	"exec_run.sh",
	"exec_list_tree.sh",
	"exec_fetch_files.sh",
	"checkpoint_ignore.py",
	"checkpoint_store.py",
	"checkpoint_scan.py",
	"checkpoint.py",
] as const;

export type HostFile = (typeof HOST_FILES)[number];

/**
 * The host/ directory: src/backend/remote/host/ in the nearest directory above this module that
 * has one (the package root from src/ or dist/; a test's private build links the repository's src/
 * beside it, at whatever depth its modules sit).
 */
export const HOST_DIR = findHostDir(dirname(fileURLToPath(import.meta.url)));

function findHostDir(from: string): string {
	for (let dir = from; ; dir = dirname(dir)) {
		const candidate = join(dir, "src", "backend", "remote", "host");
		if (existsSync(join(candidate, "README.md"))) return `${candidate}/`;
		if (dirname(dir) === dir) return `${join(from, "..", "..", "..", "src", "backend", "remote", "host")}/`;
	}
}

/** One file's text, read now. */
export function readHostFile(name: HostFile): string {
	return readFileSync(`${HOST_DIR}${name}`, "utf8");
}

/**
 * A one-line program, sent as a word of a command line (some through the login shell of a remote
 * host): the file's line without its newline.
 */
export function readHostLine(name: HostFile): string {
	const text = readHostFile(name);
	const line = text.endsWith("\n") ? text.slice(0, -1) : text;
	if (line.includes("\n")) throw new Error(`host program ${name} must be one line`);
	return line;
}

/**
 * A program's text, built by `build` (from readHostFile, joinHostFiles, fillPlaceholders) on the
 * first call and the same value on every later one. The memo is filled once and never changes:
 * the files ship with the package and are not edited while keel runs.
 */
export function hostProgram<T>(build: () => T): () => T {
	let built: { value: T } | undefined;
	return () => {
		built ??= { value: build() };
		return built.value;
	};
}

/** Python programs made of several files: joined in this order, a blank line between. */
export function joinHostFiles(names: readonly HostFile[]): string {
	return names.map(readHostFile).join("\n");
}

const PLACEHOLDER = /@@([A-Z][A-Z0-9_]*)@@/g;
const PLAIN_WORD = /^[A-Za-z0-9%. ]*$/;

/** The placeholder names a text holds, in order of first use. */
export function placeholdersOf(text: string): string[] {
	return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]))];
}

/**
 * `text` with each `@@NAME@@` replaced by `values[NAME]` (plain words) or, for a placeholder
 * written `'@@NAME@@'`, by `quotedPrograms[NAME]` (a program that must hold no single quote).
 * Throws when a placeholder has no value, a value is not a plain word, or a quoted program
 * holds a quote or stands outside quotes: a program is never sent half filled.
 */
export function fillPlaceholders(
	text: string,
	values: Readonly<Record<string, string>>,
	quotedPrograms: Readonly<Record<string, string>> = {},
): string {
	for (const [name, program] of Object.entries(quotedPrograms)) {
		if (program.includes("'")) throw new Error(`host program ${name} must not contain a single quote`);
		if (text.split(`@@${name}@@`).length !== text.split(`'@@${name}@@'`).length) {
			throw new Error(`host program ${name} must be placed between single quotes`);
		}
	}
	return text.replace(PLACEHOLDER, (_, name: string) => {
		const program = quotedPrograms[name];
		if (program !== undefined) return program;
		const value = values[name];
		if (value === undefined) throw new Error(`host program placeholder @@${name}@@ has no value`);
		if (!PLAIN_WORD.test(value))
			throw new Error(`host program placeholder @@${name}@@: ${JSON.stringify(value)}`);
		return value;
	});
}
