/**
 * The environment a sandboxed command gets: a short list of variables that say
 * how to run programs and print text, plus the ones the user names; nothing else of the host's
 * (API keys, tokens, SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, XDG_RUNTIME_DIR...). docs/SAFETY.md
 * lists them.
 */
import { posix } from "node:path";

/** Passed through when set on the host. HOME and TMPDIR are moved into the sandbox when outside every bind. */
export const SANDBOX_ENV_NAMES: readonly string[] = [
	"PATH",
	"HOME",
	"TMPDIR",
	"USER",
	"LOGNAME",
	"SHELL",
	"LANG",
	"LANGUAGE",
	"TERM",
	"COLORTERM",
	"NO_COLOR",
	"FORCE_COLOR",
	"COLUMNS",
	"LINES",
	"TZ",
];
/** Locale variables: every LC_* (LC_ALL, LC_CTYPE, ...). */
const LOCALE = /^LC_[A-Z_]+$/;

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

function isInside(parent: string, child: string): boolean {
	return child === parent || child.startsWith(parent === "/" ? "/" : `${parent}/`);
}

/**
 * The sandbox's environment from `source`: the default names, LC_*, and `passEnv` (names the user
 * gave). HOME and TMPDIR that point outside every bind would not exist inside, so they become /tmp
 * (the private tmpfs); PATH defaults to the system directories.
 */
export function sandboxEnv(
	source: NodeJS.ProcessEnv,
	bound: readonly string[],
	passEnv: readonly string[] = [],
): NodeJS.ProcessEnv {
	const out: NodeJS.ProcessEnv = {};
	const names = new Set([...SANDBOX_ENV_NAMES, ...passEnv]);
	for (const [k, v] of Object.entries(source)) {
		if (v !== undefined && (names.has(k) || LOCALE.test(k))) out[k] = v;
	}
	out.PATH ??= DEFAULT_PATH;
	for (const key of ["HOME", "TMPDIR"]) {
		if (passEnv.includes(key)) continue;
		const v = out[key];
		if (v === undefined ? key === "HOME" : !bound.some((b) => isInside(b, posix.resolve(v))))
			out[key] = "/tmp";
	}
	return out;
}

/** A variable name the CLI and settings accept for passEnv. */
export function isEnvName(name: string): boolean {
	return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}
