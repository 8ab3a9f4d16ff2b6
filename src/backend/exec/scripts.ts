/**
 * The POSIX sh scripts behind the exec backend's file operations (src/backend/remote/host/exec_*,
 * each read and filled on its first use). Each operation is one transport call: `sh -c SCRIPT keel ARGS...`, paths
 * passed as arguments (never spliced into the text).
 *
 * Needs GNU coreutils and findutils on the target: `stat -c` with `%.9Y` (nanoseconds; without
 * them identity falls back to whole seconds and the hash carries the check), `realpath -e -z`,
 * `readlink -z`, `ln -T`, `mv -T`, `dd conv=excl`, `sync FILE`, `find -printf`, `sha256sum`.
 * busybox has `stat -c` without precision, no `-z`, no `ln -T` and no `conv=excl`: the probe
 * (probeScript below) refuses such a target rather than run with weaker guarantees.
 */
import {
	fillPlaceholders,
	type HostFile,
	hostProgram,
	joinHostFiles,
	readHostFile,
} from "../remote/host-programs.js";
import { EXIT } from "./errors.js";
import { replacePy } from "./replace-py.js";

/** The values of the scripts' placeholders: their exit codes (EXIT_<NAME>) and the stat format. */
export function execPlaceholders(fmt?: string): Record<string, string> {
	const values: Record<string, string> = fmt === undefined ? {} : { FMT: fmt };
	for (const [name, code] of Object.entries(EXIT)) values[`EXIT_${name}`] = String(code);
	return values;
}

/** Host files joined in this order, one script: a library's functions first, then the call. */
export const joined =
	(...names: HostFile[]) =>
	(): string =>
		joinHostFiles(names);

/** A script that takes no stat format. */
const fixed = (...names: HostFile[]) =>
	hostProgram(() => fillPlaceholders(joined(...names)(), execPlaceholders()));

/**
 * A script that takes the stat format: `text` read and filled on the first call, for both formats a
 * target can have (statFormat: precise or not), so a later call costs no filling. PRECISE is "1" or
 * "0" with it.
 */
export function perFormat(
	text: () => string,
	quotedPrograms: () => Readonly<Record<string, string>> = () => ({}),
): (fmt: string) => string {
	const filledByFormat = hostProgram(() => {
		const [source, quoted] = [text(), quotedPrograms()];
		return new Map(
			[true, false].map((precise) => {
				const fmt = statFormat(precise);
				const values = { ...execPlaceholders(fmt), PRECISE: precise ? "1" : "0" };
				return [fmt, fillPlaceholders(source, values, quoted)] as const;
			}),
		);
	});
	return (fmt) => {
		const script = filledByFormat().get(fmt);
		if (script === undefined) throw new Error(`exec scripts: unknown stat format ${JSON.stringify(fmt)}`);
		return script;
	};
}

/** stat(1) format of a FileStat: raw mode (hex), size, dev, ino, mtime, ctime. */
export function statFormat(precise: boolean): string {
	return precise ? "%f %s %d %i %.9Y %.9Z" : "%f %s %d %i %Y %Z";
}

/**
 * Prints "ok", whether stat has nanoseconds and the shell, then on a second line the python3 that
 * can copy extended attributes (empty when none: /usr/bin/python3 first, for its start-up cost,
 * then PATH's); fails when a needed tool is missing or too weak.
 */
export const probeScript = fixed("exec_probe.sh");

export const realpathScript = fixed("exec_realpath.sh");

export const lstatScript = perFormat(() => readHostFile("exec_lstat.sh"));

export const statScript = perFormat(() => readHostFile("exec_stat.sh"));

export const readlinkScript = fixed("exec_readlink.sh");

/**
 * readFile PATH [DEV INO]: refuses a link at the last component; with DEV INO the opened file must
 * be that one (fstat of the open descriptor, so a swap after the check is caught).
 */
export const readFileScript = fixed("exec_read_checks.sh", "exec_read_file.sh");

/** readdir DIR [DEV INO]: "TYPE-LETTER NAME\\0" per entry; DIR must be DEV INO before and after. */
export const readdirScript = fixed("exec_readdir.sh");

export const mkdirpScript = fixed("exec_mkdirp.sh");

/** The sh library the persistent shell loads too (host_lib.sh): the commit, unlink, sweep and kill steps. */
const withLib = (name: HostFile) => joined("host_lib.sh", name);
const filledWrite = perFormat(withLib("exec_write.sh"), () => ({ REPLACE_PY: replacePy() }));

/**
 * The durable commit, run remotely:
 *   TARGET TEMP MODE EXPECT WANT_HASH WANT_ID NEW_HASH SOURCE SOURCE_ID PYTHON [ANCESTORS...]
 * EXPECT is absent | cas | none. The temp file is created exclusively (dd conv=excl) beside the
 * target, filled from stdin (or from SOURCE, which must still be SOURCE_ID), checked against
 * NEW_HASH (a transport that died mid-stream leaves a short temp: never committed), chmod'ed,
 * fsynced; then `ln -T` (no-clobber create), or the library's compare-and-swap (k_cas: hash + identity +
 * `mv -T`, or `mv -T` alone); then the directory is fsynced and the new stat printed. ANCESTORS (deepest first) are
 * given when missing parents may be created; a failed commit removes the ones it made. With
 * PYTHON (the probed python3), a replace of a regular file ends in exec_replace.py instead
 * (replace-py.ts), which also keeps the extended attributes; without it the sh tail keeps the
 * owner (or refuses) and refuses an unwritable file, but drops the attributes.
 */
export function writeScript(fmt: string, precise: boolean): string {
	if (fmt !== statFormat(precise)) throw new Error("exec scripts: the stat format and precision disagree");
	return filledWrite(fmt);
}

/** SHA-256 of a file (not through a link at the last component). */
export const hashFileScript = fixed("exec_hash_file.sh");

/** unlink PATH DIR [WANT_ID]: a file or link, never a directory; with WANT_ID it must still be that. */
export const unlinkScript = perFormat(withLib("exec_unlink.sh"));

/** Remove keel temp files in DIR older than MINUTES (k_sweep), each named with a NUL after it. */
export const sweepScript = fixed("host_lib.sh", "exec_sweep_temps.sh");

/** Kill the process group PGID (k_kill): a command's abort or timeout, from a call of its own. */
export const killScript = fixed("host_lib.sh", "exec_kill.sh");
