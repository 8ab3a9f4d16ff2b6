/**
 * The shell functions keel defines once in each persistent remote shell (bash --noprofile --norc,
 * or sh): src/backend/remote/host/shell_lib.sh and the sh library host_lib.sh. POSIX sh plus GNU-style coreutils (stat -c,
 * sha256sum, realpath -e, mkfifo, setsid).
 *
 * Records (see framing.ts) are `\037<marker><body>\n`:
 *   helper requests  stdout: output, then `r <status>`
 *   jobs (k_run M MODE CWD WORDS...): c command line; a argv; b argv with stdin from a base64
 *                    here-document on fd 9; f and g: a and b without the FIFO relays (keel's own
 *                    programs, which leave no background children)
 *                    stderr: `p <pgid> <start|-> <relay> [<relay>]`, `x <status>`, `d` (last);
 *                    `n` = no such cwd
 *                    stdout: output, then `e` (last)
 * A job's output goes through its own FIFO and relay (`cat`), so a background child that keeps
 * the output open can be cut off by killing the relay without touching the shell's stream.
 */
import { hostProgram, joinHostFiles, readHostFile, readHostLine } from "../remote/host-programs.js";
import { shq } from "../shell-quote.js";

/** Sent at the start of every helper shell: its own steps, then the sh library it shares with the exec scripts. */
const shellLib = hostProgram(() => joinHostFiles(["shell_lib.sh", "host_lib.sh"]));

/** What a new channel runs (start_shell.sh): bash without rc files when the host has it, else sh. */
export const startShell = hostProgram(() => readHostLine("start_shell.sh"));

/** Before a python3 program: the C locale, and exit 127 when the host has no python3. */
const startPython = hostProgram(() => readHostFile("start_python.sh"));

/** `path` as the remote PATH (tests: a host without rg/fd), or nothing. */
const setPath = (path: string | undefined) => (path === undefined ? "" : `export PATH=${shq(path)}\n`);

/** The init text for a new shell; `path` replaces the remote PATH (tests: a host without rg/fd). */
export function shellInit(path?: string): string {
	return `${setPath(path)}${shellLib()}\n`;
}

/**
 * Sent to a fresh startShell channel: become a long-lived python3 program (the file helper, the
 * command runner) run isolated (-I -S) with `flags`, or exit 127 when the host has no python3.
 */
export function pythonInit(program: string, path: string | undefined, flags: readonly string[] = []): string {
	const argv = ["python3", "-I", "-S", ...flags, "-c"].join(" ");
	return `${setPath(path)}${startPython()}exec ${argv} ${shq(program)}\n`;
}
