/**
 * What a backend can report that is not a fact about a path, and the one table that words it.
 *
 * A backend fails with a fact from this closed set and structured extras (the pattern, the tool,
 * the target's label, what a program printed); it writes no message and no advice. The code, and
 * so the retry class, and the words come from BACKEND_FACT_WORDS. Facts about a path are in
 * path-facts.ts, worded there for the path the model wrote.
 */
import { type ErrorCode, KeelError } from "./errors.js";

/** Small structured extras a fact may carry (kept in the error's details). */
export interface BackendFactExtras {
	/** For pattern-invalid: which kind of pattern, and the pattern as given. */
	kind?: "regex" | "glob";
	pattern?: string;
	/** What a program or parser said went wrong (a search tool's stderr, a regex parser's error). */
	reason?: string;
	/** For pattern-too-large: what was measured, its size and the limit. */
	measure?: PatternMeasure;
	size?: number;
	limit?: number;
	/** For pattern-too-large: the pattern's length (the pattern itself may be too long to keep). */
	patternChars?: number;
	/** The program concerned (rg, fd, python3, a container launcher). */
	tool?: string;
	/** A program's exit status, when it is the fact. */
	exitCode?: number | null;
	/** Where the failure happened: a backend's label ("container app", "ssh host"), or its kind. */
	label?: string;
	/** An ssh target as user@host:port. */
	host?: string;
	/** For host-lacks-programs: the programs missing. */
	programs?: string[];
	/** For host-runner-lost: whether the command had started (it may or may not have finished). */
	running?: boolean;
	/** For command-not-started: whether the command asked for a pseudo-terminal. */
	terminal?: boolean;
	/** For sandbox-unavailable: why bubblewrap could not run. */
	why?: SandboxTrouble;
	/** For sandbox-unavailable (timed-out): how long the probe waited. */
	timeoutMs?: number;
	/** For a tool's failure: its standard error, whole. */
	stderr?: string;
}

/** What made a pattern too large. */
export type PatternMeasure = "characters" | "glob-characters" | "program" | "repeat" | "compiled-bytes";

/** Why bubblewrap cannot run a sandbox here. */
export type SandboxTrouble =
	| "not-installed"
	| "cannot-run"
	| "timed-out"
	| "no-bind-fd"
	| "no-namespaces"
	| "failed";

interface FactEntry {
	code: ErrorCode;
	/** The message for the model. */
	words: (extras: BackendFactExtras) => string;
}

const SMALLER_PATTERN = "Use a shorter pattern, smaller repetition counts (x{n}), or literal: true";

/** What exceeded the limit, in words. */
function patternSize(x: BackendFactExtras): string {
	switch (x.measure) {
		case "characters":
			return `${x.size} characters, over ${x.limit}`;
		case "glob-characters":
			return `glob of ${x.size} characters`;
		case "program":
			return `its compiled program has ${x.size} instructions, over ${x.limit}`;
		case "compiled-bytes":
			return `its compiled form exceeds ${x.limit} bytes`;
		default:
			return x.reason ?? "over the engine's limit";
	}
}

const BWRAP_INSTALL = "install it (apt-get install bubblewrap, dnf install bubblewrap or apk add bubblewrap)";
const USERNS_HINT =
	"allow unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1; on Ubuntu 23.10+ " +
	"sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap; in a " +
	"container, run it with a seccomp profile that allows unshare/clone, or install bwrap setuid)";

/** Why bubblewrap cannot run, and the fix. */
function sandboxTrouble(x: BackendFactExtras): string {
	const said = x.reason?.trim() ?? "";
	switch (x.why) {
		case "not-installed":
			return `bubblewrap is unavailable: ${x.tool} is not installed; ${BWRAP_INSTALL}.`;
		case "cannot-run":
			return `bubblewrap is unavailable: ${x.tool} cannot be run (${said}); ${BWRAP_INSTALL}.`;
		case "timed-out":
			return `bubblewrap did not start a sandbox within ${x.timeoutMs} ms.`;
		case "no-bind-fd":
			return `this bubblewrap cannot mount by descriptor (${said}), which keel needs to mount exactly what it checked; install bubblewrap 0.8 or newer.`;
		case "no-namespaces":
			return `bubblewrap cannot create its namespaces here (${said}); ${USERNS_HINT}.`;
		default:
			return `bubblewrap failed to start a sandbox: ${said || "no error output"}.`;
	}
}

/** Every fact a backend reports that is not about a path: its code (and so retry class) and words. */
export const BACKEND_FACT_WORDS = {
	/** A regex or glob the engine refuses; `reason` is the parser's or the search tool's words. */
	"pattern-invalid": {
		code: "INVALID_PATTERN",
		words: (x) =>
			x.kind && x.pattern !== undefined
				? `Invalid ${x.kind} ${JSON.stringify(x.pattern)}: ${x.reason}`
				: `Invalid pattern: ${x.reason}`,
	},
	/** A pattern past the engine's size limits (its length, its compiled size, a repetition count). */
	"pattern-too-large": {
		code: "INVALID_PATTERN",
		words: (x) =>
			`Pattern too large: ${patternSize(x)}. ${SMALLER_PATTERN}${x.measure === "compiled-bytes" ? "." : " with a shorter literal."}`,
	},
	"search-aborted": {
		code: "ABORTED",
		words: () => "Search aborted.",
	},
	/** A search tool failed in a way that is neither a bad pattern nor a missing path. */
	"search-tool-failed": {
		code: "IO_ERROR",
		words: (x) =>
			x.exitCode === undefined
				? `${x.tool} failed: ${x.reason}`
				: `${x.tool} ended unexpectedly (exit ${x.exitCode}): ${x.reason}`,
	},
	/** The backend has no such search tool (rg, fd). */
	"search-tool-missing": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) => `${x.tool} is not available on this backend; use the js search engine.`,
	},
	/** A search tool could not be started at all. */
	"search-tool-not-started": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) => `${x.tool} could not be started: ${x.reason}`,
	},
	/** The search fallback cannot read ignore files on the target without base64. */
	"search-fallback-needs-base64": {
		code: "BACKEND_UNAVAILABLE",
		words: () =>
			"The search fallback needs base64 (GNU coreutils) on the target; install coreutils there, or rg and fd.",
	},
	/** The exec target lacks the GNU tools its scripts use (busybox, say). */
	"target-lacks-coreutils": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) =>
			"The exec backend needs GNU coreutils and findutils on the target (stat -c with %.9Y, realpath -e -z, " +
			"ln -T, mv -T, dd conv=excl, find -printf, sha256sum); busybox lacks some of them: install " +
			`coreutils and findutils there.${x.reason ? ` (${x.reason})` : ""}`,
	},
	/** The target answered a stat in a form keel does not know. */
	"unexpected-stat": {
		code: "IO_ERROR",
		words: (x) => `Unexpected stat output from the exec backend: ${x.reason}`,
	},
	/** The exec backend's transport (the program that reaches the target) failed. */
	"transport-failed": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) =>
			`The exec backend's transport failed: ${x.reason}; check that the target is running and reachable.`,
	},
	/** A shell could not be run in a container at all. */
	"shell-unreachable": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) =>
			`Cannot run a shell in the ${x.label} (${x.reason}); check that it is running${x.tool ? ` and that ${x.tool} works here` : ""}.`,
	},
	/** The container's sh exits with an error. */
	"no-working-shell": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) => `The ${x.label} has no working sh (exit ${x.exitCode}).`,
	},
	/** The shell serving a container's calls ended mid-call. */
	"shell-lost": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) =>
			`Lost the shell in the ${x.label} (${x.reason}); an operation in flight may or may not have taken effect (a write is all or nothing): check before retrying. The next call opens a new shell.`,
	},
	/** The process that runs a target's commands ended while one started. */
	"runner-lost": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) =>
			`The command runner in the ${x.label} ended while the command started (${x.reason}); the next call starts a new one.`,
	},
	/** The bwrap sandbox ended (and its processes with it) while a command ran. */
	"sandbox-lost": {
		code: "BACKEND_UNAVAILABLE",
		words: () =>
			"The sandbox ended while the command ran (its processes were killed); the next command starts a new sandbox.",
	},
	/** bubblewrap cannot run our sandbox here; `why` says what failed. */
	"sandbox-unavailable": {
		code: "BACKEND_UNAVAILABLE",
		words: sandboxTrouble,
	},
	"backend-closed": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) => `The backend for the ${x.label} is closed.`,
	},
	/** The session closed its ssh backend; only a new session connects again. */
	"ssh-closed": {
		code: "BACKEND_UNAVAILABLE",
		words: () => "This SSH backend is closed; start a new session.",
	},
	/** The ssh connection dropped; the next call reconnects. */
	"connection-lost": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) =>
			`The SSH connection to ${x.host} was lost (${x.reason}); an operation in flight may or may not have taken effect (a write is all or nothing): check before retrying. The next call reconnects.`,
	},
	/** Connected, but SFTP or the shell could not be started for this account. */
	"ssh-session-not-started": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) =>
			`Connected to ${x.host}, but could not start SFTP and a shell there: ${x.reason}. Check that the account has a working shell, the sftp subsystem is enabled, and the shell's rc files print nothing.`,
	},
	/** The ssh host lacks programs keel's scripts run there. */
	"host-lacks-programs": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) =>
			`The host ${x.host} lacks ${x.programs?.join(", ")}, which keel's ssh backend runs there (GNU coreutils, util-linux, findutils, grep); install them on the host.`,
	},
	/** The ssh host's command runner ended while a command started or ran. */
	"host-runner-lost": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) =>
			x.running
				? `The command runner on the host ended while the command ran (${x.reason}); the command may or may not have finished. The next call starts a new runner.`
				: `The command runner on the host ended while the command started (${x.reason}); the next call starts a new runner.`,
	},
	/** The host could not start a command (before it ran). */
	"command-not-started": {
		code: "BACKEND_UNAVAILABLE",
		words: (x) => `The host could not start the command${x.terminal ? " in a pseudo-terminal" : ""}.`,
	},
	/** Process handles on a remote target run under python3, which is missing there. */
	"handles-need-python": {
		code: "UNSUPPORTED",
		words: (x) =>
			`Process handles ${x.host ? `on ${x.host}` : `in the ${x.label}`} need python3 (3.5 or later, Linux) ${x.host ? "on the host" : "there"}, which keel runs them under${x.reason ? ` (${x.reason})` : ""}; run the command in the foreground, or install python3 there.`,
	},
	/** A terminal in the bwrap sandbox needs a program that cannot run there. */
	"terminal-needs-python": {
		code: "UNSUPPORTED",
		words: (x) =>
			`A terminal (tty) on the bwrap backend needs ${x.tool} to run inside the sandbox, and it cannot run here: run the program with pipes (without tty).`,
	},
	/** The backend has no process handles at all. */
	"no-process-handles": {
		code: "UNSUPPORTED",
		words: (x) => `The ${x.label} backend cannot start processes.`,
	},
} as const satisfies Record<string, FactEntry>;

/** A fact a backend reports that is not about a path. */
export type BackendFact = keyof typeof BACKEND_FACT_WORDS;

/** The words for `fact`. */
export function backendFactMessage(fact: BackendFact, extras: BackendFactExtras = {}): string {
	return (BACKEND_FACT_WORDS[fact] as FactEntry).words(extras);
}

/** A KeelError that reports a backend fact: the table's code and words, the extras as details. */
export class BackendFactError extends KeelError {
	readonly fact: BackendFact;
	readonly extras: BackendFactExtras;

	constructor(
		fact: BackendFact,
		extras: BackendFactExtras = {},
		opts: { path?: string; cause?: unknown } = {},
	) {
		super(BACKEND_FACT_WORDS[fact].code, backendFactMessage(fact, extras), {
			path: opts.path,
			cause: opts.cause,
			details: Object.keys(extras).length > 0 ? { ...extras } : undefined,
		});
		this.fact = fact;
		this.extras = extras;
	}
}

/** `fact` with its extras (and the path it concerns, for hosts, when there is one): what a backend throws. */
export function backendFact(
	fact: BackendFact,
	extras: BackendFactExtras = {},
	opts: { path?: string; cause?: unknown } = {},
): BackendFactError {
	return new BackendFactError(fact, extras, opts);
}
