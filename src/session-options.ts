/**
 * SessionOptions checked before anything opens: an unknown option, profile or tool name is an
 * INVALID_ARGS error naming the valid ones, never a default. A typo must not widen what the model
 * can do (`profile: "Unified"` would otherwise give the default palette, `disabledTools: ["Bash"]`
 * would leave bash on). Names are case-sensitive.
 */
import { KeelError } from "./boundary/errors.js";
import type { CheckpointBudgets } from "./checkpoints/types.js";
import { checkersOf } from "./diagnostics/checkers.js";
import type { SessionOptions } from "./session-types.js";
import { checkpointsTool } from "./tools/checkpoints.js";
import { PROFILES, type Profile, toolsForProfile } from "./tools/registry.js";
import type { ToolDefinition } from "./tools/types.js";

/** Every option createSession takes; the type keeps it complete. */
const OPTION_NAMES: Record<keyof SessionOptions, true> = {
	root: true,
	allow: true,
	allowRead: true,
	backend: true,
	profile: true,
	disabledTools: true,
	allowProtected: true,
	protectedPaths: true,
	home: true,
	spillDir: true,
	clock: true,
	payloadLimits: true,
	probes: true,
	queues: true,
	stateDir: true,
	python: true,
	commandPrefix: true,
	check: true,
	diagnostics: true,
	processLimits: true,
	checkpoints: true,
};

/** Every keel tool name, in any profile. */
export function allToolNames(): string[] {
	return [
		...new Set([...PROFILES.flatMap((p) => toolsForProfile(p).map((t) => t.name)), checkpointsTool.name]),
	];
}

const fail = (message: string) => new KeelError("INVALID_ARGS", message);
const quoted = (names: readonly string[]) => names.join(", ");

/** `profile` as given, or an error naming the profiles. */
export function checkProfile(profile: unknown, where = "profile"): Profile {
	if (typeof profile === "string" && (PROFILES as readonly string[]).includes(profile))
		return profile as Profile;
	throw fail(
		`unknown ${where} ${JSON.stringify(profile)}: use one of ${quoted(PROFILES)} (names are case-sensitive)`,
	);
}

/** Names that are not keel tools, as an error naming the profile's tools; `where` names the setting. */
export function checkToolNames(names: readonly unknown[], profile: Profile, where = "disabledTools"): void {
	const known = new Set(allToolNames());
	const bad = names.find((n) => typeof n !== "string" || !known.has(n));
	if (bad === undefined) return;
	const palette = toolsForProfile(profile).map((t) => t.name);
	const others = [...known].filter((n) => !palette.includes(n));
	throw fail(
		`${where} names an unknown tool ${JSON.stringify(bad)} (names are case-sensitive): the ${profile} profile's tools are ${quoted(palette)}${others.length ? `; other profiles add ${quoted(others)}` : ""}`,
	);
}

function stringList(opts: Record<string, unknown>, key: string): void {
	const v = opts[key];
	if (v === undefined) return;
	if (!Array.isArray(v) || v.some((s) => typeof s !== "string"))
		throw fail(`session option ${key} must be an array of strings`);
}

/** Throws INVALID_ARGS when `opts` holds an option, profile or tool name keel does not know. */
export function checkSessionOptions(opts: unknown): asserts opts is SessionOptions | undefined {
	if (opts === undefined) return;
	if (opts === null || typeof opts !== "object" || Array.isArray(opts))
		throw fail("session options must be an object");
	const o = opts as Record<string, unknown>;
	const unknown = Object.keys(o).find((k) => !(k in OPTION_NAMES));
	if (unknown !== undefined)
		throw fail(
			`unknown session option ${JSON.stringify(unknown)}: the options are ${quoted(Object.keys(OPTION_NAMES))}`,
		);
	const profile = o.profile === undefined ? "pi" : checkProfile(o.profile);
	for (const key of ["root", "home", "spillDir", "stateDir", "commandPrefix"])
		if (o[key] !== undefined && typeof o[key] !== "string")
			throw fail(`session option ${key} must be a string`);
	for (const key of ["allow", "allowRead", "protectedPaths", "disabledTools"]) stringList(o, key);
	checkCheckpointOption(o.checkpoints);
	checkersOf(o.diagnostics);
	if (o.disabledTools !== undefined) checkToolNames(o.disabledTools as unknown[], profile);
	const b = o.backend as Record<string, unknown> | undefined;
	if (
		b !== undefined &&
		(b === null || typeof b !== "object" || typeof b.kind !== "string" || !b.fs || !b.exec)
	)
		throw fail(
			'session option backend must be a backend object (createLocalBackend(), createBwrapBackend(), createSshBackend(), ...); a spec such as "bwrap" is for the CLI\'s --backend and KEEL_BACKEND',
		);
}

/** Every checkpoint budget; the type keeps it complete. */
const BUDGETS: Record<keyof CheckpointBudgets, true> = {
	maxFileBytes: true,
	maxCheckpointBytes: true,
	maxStoreBytes: true,
	maxCheckpoints: true,
	maxEntries: true,
};
const BUDGET_NAMES = Object.keys(BUDGETS);

function checkCheckpointOption(v: unknown): void {
	if (v === undefined || typeof v === "boolean") return;
	if (v === null || typeof v !== "object" || Array.isArray(v))
		throw fail("session option checkpoints must be true, false or an object of budgets");
	for (const [k, n] of Object.entries(v)) {
		if (!BUDGET_NAMES.includes(k))
			throw fail(`unknown checkpoints budget ${JSON.stringify(k)}: the budgets are ${quoted(BUDGET_NAMES)}`);
		if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0)
			throw fail(`checkpoints budget ${k} must be a whole number of at least 0`);
	}
}

/** The tools a session with these options offers: the profile's palette less the disabled names. */
export function paletteFor(opts: SessionOptions): ToolDefinition[] {
	checkSessionOptions(opts);
	const disabled = new Set(opts.disabledTools ?? []);
	const profile = opts.profile ?? "pi";
	// The unified profile offers undo when the session keeps checkpoints (the others keep their
	// hosts' exact palettes; their hosts offer undo themselves, e.g. the pi extension's command).
	const extra = opts.checkpoints && profile === "unified" ? [checkpointsTool as ToolDefinition] : [];
	return [...toolsForProfile(profile), ...extra].filter((t) => !disabled.has(t.name));
}
