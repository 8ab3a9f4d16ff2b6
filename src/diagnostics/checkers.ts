/**
 * The project's own checkers a session runs after a change (diagnostics.ts): presets by name, or a
 * command of the workspace's own. SessionOptions.diagnostics is checked here before anything
 * opens; an unknown preset, field or bad value is an INVALID_ARGS error naming the valid ones, never
 * a default (a typo must not silently turn the checks off).
 */
import { KeelError } from "../boundary/errors.js";

/** A checker of the workspace's own. */
export interface CheckerSpec {
	/** A preset's name (its command and extensions are the defaults), or a name of your own. */
	name: string;
	/**
	 * Shell command run in the workspace root through the session's backend (on the remote host for
	 * ssh and containers, in the sandbox for bwrap). `{files}` is replaced by the changed files it
	 * checks, relative to the root and shell-quoted; without it the command checks the project.
	 */
	command?: string;
	/** Changes to files with these extensions (no dot) make it run. */
	extensions?: string[];
	/** How long one run may take before the edit's result goes without it (default 4000). */
	timeoutMs?: number;
}

/** A checker as a session runs it: every field known. */
export interface Checker {
	name: string;
	command: string;
	extensions: readonly string[];
	timeoutMs: number;
}

const TS_EXTENSIONS = ["ts", "tsx", "mts", "cts"];
const PY_EXTENSIONS = ["py", "pyi"];

export const DEFAULT_CHECKER_TIMEOUT_MS = 4000;
const MIN_TIMEOUT_MS = 100;
const MAX_TIMEOUT_MS = 60_000;

/** The presets, by name. Each prints one diagnostic a line in a format diagnostics-parse.ts reads. */
const PRESETS: Record<string, Omit<Checker, "name" | "timeoutMs">> = {
	// The project's own TypeScript when it has one; plain output (no colours, one line each).
	tsc: {
		command:
			'"$(if [ -x node_modules/.bin/tsc ]; then echo node_modules/.bin/tsc; else echo tsc; fi)" --noEmit --pretty false -p .',
		extensions: TS_EXTENSIONS,
	},
	// No caches written into the workspace (a checker's run is no change of the project's).
	ruff: {
		command: "ruff check --output-format concise --quiet --no-fix --no-cache {files}",
		extensions: PY_EXTENSIONS,
	},
	pyright: { command: "pyright {files}", extensions: PY_EXTENSIONS },
	mypy: {
		command: "mypy --no-error-summary --show-column-numbers --no-color-output --cache-dir=/dev/null {files}",
		extensions: PY_EXTENSIONS,
	},
	// Compiled bytecode goes to a temporary prefix, not into the workspace's __pycache__.
	py_compile: {
		// biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, expanded by the shell
		command: 'PYTHONPYCACHEPREFIX="${TMPDIR:-/tmp}/keel-pycache" python3 -m py_compile {files}',
		extensions: PY_EXTENSIONS,
	},
};

/** The preset names, for messages and docs. */
export const CHECKER_PRESETS: readonly string[] = Object.keys(PRESETS);

/** Every field of a CheckerSpec; the type keeps it complete. */
const SPEC_FIELDS: Record<keyof CheckerSpec, true> = {
	name: true,
	command: true,
	extensions: true,
	timeoutMs: true,
};
const FIELD_NAMES = Object.keys(SPEC_FIELDS);

const fail = (message: string) => new KeelError("INVALID_ARGS", message);

function checkerOf(entry: unknown, at: string): Checker {
	const spec: Record<string, unknown> =
		typeof entry === "string"
			? { name: entry }
			: entry !== null && typeof entry === "object" && !Array.isArray(entry)
				? (entry as Record<string, unknown>)
				: {};
	if (typeof entry !== "string" && spec !== entry)
		throw fail(
			`${at} must be a preset name (${CHECKER_PRESETS.join(", ")}) or an object with ${FIELD_NAMES.join(", ")}`,
		);
	const unknown = Object.keys(spec).find((k) => !FIELD_NAMES.includes(k));
	if (unknown !== undefined)
		throw fail(
			`${at} has an unknown field ${JSON.stringify(unknown)}: the fields are ${FIELD_NAMES.join(", ")}`,
		);
	const { name, command, extensions, timeoutMs } = spec;
	if (typeof name !== "string" || name === "") throw fail(`${at}.name must be a non-empty string`);
	const preset = PRESETS[name];
	if (!preset && command === undefined)
		throw fail(
			`unknown checker ${JSON.stringify(name)} in ${at}: the presets are ${CHECKER_PRESETS.join(", ")} (names are case-sensitive); another checker needs a command`,
		);
	if (command !== undefined && (typeof command !== "string" || command.trim() === ""))
		throw fail(`${at}.command must be a non-empty string`);
	if (
		extensions !== undefined &&
		(!Array.isArray(extensions) ||
			extensions.length === 0 ||
			extensions.some((e) => typeof e !== "string" || !/^[A-Za-z0-9_+-]+$/.test(e)))
	)
		throw fail(
			`${at}.extensions must be a non-empty array of extensions without the dot, such as ["ts", "tsx"]`,
		);
	if (
		timeoutMs !== undefined &&
		(typeof timeoutMs !== "number" ||
			!Number.isSafeInteger(timeoutMs) ||
			timeoutMs < MIN_TIMEOUT_MS ||
			timeoutMs > MAX_TIMEOUT_MS)
	)
		throw fail(`${at}.timeoutMs must be a whole number from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}`);
	const exts = (extensions as string[] | undefined) ?? preset?.extensions;
	if (!exts) throw fail(`${at}.extensions is needed for a checker that is not a preset`);
	return {
		name,
		command: (command as string | undefined) ?? (preset as { command: string }).command,
		extensions: exts.map((e) => e.toLowerCase()),
		timeoutMs: (timeoutMs as number | undefined) ?? DEFAULT_CHECKER_TIMEOUT_MS,
	};
}

/** SessionOptions.diagnostics as checkers; INVALID_ARGS naming the valid values when it is not one. */
export function checkersOf(value: unknown): Checker[] {
	if (value === undefined) return [];
	if (!Array.isArray(value))
		throw fail(
			`session option diagnostics must be an array of checkers: preset names (${CHECKER_PRESETS.join(", ")}) or objects with ${FIELD_NAMES.join(", ")}`,
		);
	const checkers = value.map((entry, i) => checkerOf(entry, `diagnostics[${i}]`));
	const names = checkers.map((c) => c.name);
	const twice = names.find((n, i) => names.indexOf(n) !== i);
	if (twice !== undefined) throw fail(`diagnostics names the checker ${JSON.stringify(twice)} twice`);
	return checkers;
}

/** Whether `checker` runs for a change of `path`. */
export function checksPath(checker: Checker, path: string): boolean {
	const base = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
	const dot = base.lastIndexOf(".");
	return dot > 0 && checker.extensions.includes(base.slice(dot + 1));
}

/** Whether `checker` is given the changed files (else it checks the whole project). */
export const perFile = (checker: Checker) => checker.command.includes("{files}");
