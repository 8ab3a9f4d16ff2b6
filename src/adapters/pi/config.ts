/**
 * keel's settings inside pi. Sources, first wins: pi flags (--keel-profile, --keel-root,
 * --keel-allow, --keel-allow-read, --keel-disable, --keel-backend, --keel-network, --keel-env,
 * --keel-identity, --keel-insecure-host-key, --keel-checkpoints, --keel-diagnostics), environment
 * (KEEL_PROFILE, KEEL_ROOT, KEEL_ALLOW, KEEL_ALLOW_READ, KEEL_DISABLE, KEEL_BACKEND, KEEL_NETWORK,
 * KEEL_ENV, KEEL_IDENTITY, KEEL_INSECURE_HOST_KEY, KEEL_CHECKPOINTS, KEEL_DIAGNOSTICS), the "keel"
 * object of the project's .pi/settings.json, then of the global settings.json in pi's agent dir
 * (keys: profile, root, allow, allowRead, disable, backend, network, env, identity,
 * insecureHostKey, checkpoints, diagnostics). Lists are comma separated (arrays in JSON); switches
 * are 1/true/yes/on or 0/false/no/off (booleans in JSON). The environment is read as the CLI reads it (../settings-env.ts).
 *
 * Any setting keel cannot use (an unknown profile, tool name or settings key, a switch that is not
 * one) is `error`: every keel tool call is refused with it until the user fixes it, and a warning
 * says so when the session starts. A typo never falls back to a default that offers more.
 *
 * The backend takes the CLI's grammar, through the CLI's parser (../backend-spec.ts): local (the
 * default), bwrap, or ssh://user@host[:port]/path, whose path becomes the root.
 *
 * A project's settings may choose the profile and disable tools, nothing else. A checked-out
 * repository is not trusted: it must not grant itself access outside the workspace (root, allow,
 * allowRead), nor decide where commands run or how contained they are (backend, network, identity,
 * insecureHostKey). Project settings rank above the global ones, so a repository that could set
 * `backend: "local"` would quietly take a user's global bwrap sandbox away, `network: true` would
 * reopen it, and an ssh:// spec would send the model's commands and files, with the user's keys, to
 * a host the repository picked.
 *
 * A backend setting that does not parse is not replaced by this machine: a user who asked for a
 * sandbox and silently got their own shell is worse off than one who sees every keel tool call
 * refused with the reason (and a warning when the session starts).
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { KeelError } from "../../boundary/errors.js";
import { CHECKER_PRESETS } from "../../diagnostics/checkers.js";
import { allToolNames, checkProfile } from "../../session-options.js";
import type { Profile } from "../../tools/registry.js";
import {
	type BackendChoice,
	type BackendFlags,
	type BackendOptionNames,
	BackendSpecError,
	chooseBackend,
} from "../backend-spec.js";
import {
	parseCheckerPresets,
	parseList,
	parseSwitch,
	parseText,
	SETTING_ENV,
	SWITCH_SETTINGS,
} from "../settings-env.js";

export const FLAGS = {
	profile: "keel-profile",
	root: "keel-root",
	allow: "keel-allow",
	allowRead: "keel-allow-read",
	disable: "keel-disable",
	backend: "keel-backend",
	network: "keel-network",
	env: "keel-env",
	identity: "keel-identity",
	insecureHostKey: "keel-insecure-host-key",
	checkpoints: "keel-checkpoints",
	diagnostics: "keel-diagnostics",
} as const;

export type FlagKey = keyof typeof FLAGS;

/** Flags that are switches (pi parses `--name` alone as true); the rest take a value. */
export const SWITCHES: ReadonlySet<FlagKey> = SWITCH_SETTINGS;

export const FLAG_HELP: Record<FlagKey, string> = {
	profile:
		"keel tool palette: pi (pi's tool names, keel's engine), unified (one file tool for every change, apply_patch, python) or codex (apply_patch, shell, read_file, list_dir, grep, find)",
	root: "keel workspace root (default: the session's cwd)",
	allow: "extra read-write roots for keel's tools, comma separated",
	allowRead: "extra read-only roots for keel's tools, comma separated",
	disable: "tool names to turn off, comma separated (keel's or pi's)",
	backend:
		"where keel's tools run: local (default), bwrap (commands in a bubblewrap sandbox), ssh://user@host[:port]/path, podman://NAME/path, docker://NAME/path or k8s://NAMESPACE/POD[/CONTAINER]/path (the path is the root)",
	network: "keel bwrap backend: keep the network (default: off)",
	env: "keel bwrap backend: host environment variables to pass into the sandbox, comma separated names (default: a minimal set)",
	identity: "keel ssh backend: private key file (default: ssh-agent, then ~/.ssh/id_*)",
	insecureHostKey: "keel ssh backend: skip host key checking against known_hosts",
	checkpoints:
		"keel: keep checkpoints of every change keel's tools make, bash included, for the /undo command (local and bwrap backends)",
	diagnostics: `keel: the project's checkers to run after each change, reporting the errors it introduced; comma separated presets (${CHECKER_PRESETS.join(", ")})`,
};

export { ENV_NAMES } from "../settings-env.js";

/** Keys a project's .pi/settings.json may set; every other key comes from the user alone. */
const PROJECT_KEYS: ReadonlySet<FlagKey> = new Set<FlagKey>(["profile", "disable"]);

/** backend-spec's messages in this extension's spelling. */
const OPTION_NAMES: BackendOptionNames = {
	backend: "--keel-backend",
	network: "--keel-network",
	env: "--keel-env",
	identity: "--keel-identity",
	insecureHostKey: "--keel-insecure-host-key",
};

/** Where keel's tools run, as configured: the options identify the session, `open` makes the backend. */
export interface BackendSetting {
	/** The spec as given ("local" when none was). */
	spec: string;
	network: boolean;
	/** Host variables passed into the bwrap sandbox by name. */
	env?: string[];
	/** Absolute path of the ssh private key, when one was given. */
	identity?: string;
	insecureHostKey: boolean;
	/** Opens the backend for a root and its allow lists; undefined for this machine. */
	open?: BackendChoice["open"];
	/** Why the setting is unusable: sessions refuse to open, so every tool call reports it. */
	error?: string;
}

export interface KeelPiConfig {
	profile: Profile;
	/** Workspace root, absolute. */
	root: string;
	allow: string[];
	allowRead: string[];
	disabled: string[];
	backend: BackendSetting;
	/** Checkpoints of every change keel's tools make, for /undo. */
	checkpoints: boolean;
	/** The workspace checkers to run after each change, by preset name (none when empty). */
	diagnostics: string[];
	/** pi's own `shellCommandPrefix` setting, run before every keel bash command as pi runs it. */
	commandPrefix?: string;
	/** Why the settings are unusable (an unknown profile, tool or key): every keel tool call is refused with it. */
	error?: string;
	/** Problems worth telling the user about (unusable or ignored settings). */
	warnings: string[];
}

export interface ConfigSources {
	cwd: string;
	flag: (name: string) => unknown;
	env: Record<string, string | undefined>;
	/** The "keel" objects of the project and global settings (undefined when absent). */
	projectSettings?: Record<string, unknown>;
	globalSettings?: Record<string, unknown>;
	/** pi's `shellCommandPrefix` (its project settings over its global ones, as pi merges them). */
	shellCommandPrefix?: string;
	/** Tool names pi has besides keel's (its built-ins, other extensions'), which --keel-disable may name. */
	otherTools?: readonly string[];
}

/** `~/x` in the user's home, anything else against `cwd`. */
const expandPath = (cwd: string, p: string) =>
	p.startsWith("~/") ? join(homedir(), p.slice(2)) : resolve(cwd, p);

/** The keys a settings.json "keel" object may hold. */
const SETTING_KEYS = Object.keys(FLAGS) as FlagKey[];

/** Resolve the configuration (pure: the caller gathers flags, env and settings). */
export function resolveConfig(src: ConfigSources): KeelPiConfig {
	const warnings: string[] = [];
	const errors: string[] = [];
	for (const [where, settings] of [
		["the project's .pi/settings.json", src.projectSettings],
		["pi's global settings.json", src.globalSettings],
	] as const) {
		const unknown = Object.keys(settings ?? {}).filter((k) => !(SETTING_KEYS as string[]).includes(k));
		if (unknown.length)
			errors.push(
				`unknown key ${unknown.map((k) => JSON.stringify(k)).join(", ")} in "keel" of ${where} (keys: ${SETTING_KEYS.join(", ")})`,
			);
	}
	const ignored = Object.keys(src.projectSettings ?? {}).filter(
		(k) => (SETTING_KEYS as string[]).includes(k) && !PROJECT_KEYS.has(k as FlagKey),
	);
	if (ignored.length)
		warnings.push(
			`the project's .pi/settings.json may set only ${[...PROJECT_KEYS].join(" and ")}; its ${ignored.join(", ")} ${ignored.length > 1 ? "are" : "is"} ignored`,
		);
	/** The first source that gives `key`, parsed; `where` names that source for error messages. */
	const pick = <T>(key: FlagKey, parse: (v: unknown, where: string) => T | undefined) => {
		const flag = src.flag(FLAGS[key]);
		if (flag === true && !SWITCHES.has(key)) errors.push(`--${FLAGS[key]} needs a value`);
		const sources: [unknown, string][] = [
			[flag, `--${FLAGS[key]}`],
			[src.env[SETTING_ENV[key]], SETTING_ENV[key]],
			[PROJECT_KEYS.has(key) ? src.projectSettings?.[key] : undefined, `keel ${key} in .pi/settings.json`],
			[src.globalSettings?.[key], `keel ${key} in pi's settings.json`],
		];
		for (const [value, where] of sources) {
			try {
				const parsed = parse(value, where);
				if (parsed !== undefined) return { value: parsed, where };
			} catch (e) {
				errors.push((e as Error).message);
				return undefined;
			}
		}
		return undefined;
	};
	const onOff = (key: FlagKey) => pick(key, parseSwitch)?.value ?? false;
	const profileSetting = pick("profile", parseText);
	let profile: Profile = "pi";
	try {
		profile = checkProfile(profileSetting?.value ?? "pi", profileSetting?.where);
	} catch (e) {
		errors.push((e as KeelError).message);
	}
	const disableSetting = pick("disable", parseList);
	const disabled = disableSetting?.value ?? [];
	const known = new Set([...allToolNames(), ...(src.otherTools ?? [])]);
	const unknownTool = disabled.find((n) => !known.has(n));
	if (unknownTool !== undefined)
		errors.push(
			`${disableSetting?.where} names an unknown tool ${JSON.stringify(unknownTool)} (names are case-sensitive; tools: ${[...known].join(", ")})`,
		);
	const { backend, root: remoteRoot } = resolveBackend(
		{
			backend: pick("backend", parseText)?.value,
			network: onOff("network"),
			env: pick("env", parseList)?.value,
			identity: pick("identity", parseText)?.value,
			insecureHostKey: onOff("insecureHostKey"),
		},
		src.cwd,
		warnings,
	);
	const rootSetting = pick("root", parseText)?.value;
	if (remoteRoot && rootSetting)
		warnings.push(
			`keel root "${rootSetting}" is ignored: an ssh backend works in its spec's path (${remoteRoot})`,
		);
	const root = remoteRoot ?? resolve(src.cwd, rootSetting ?? ".");
	const allow = (pick("allow", parseList)?.value ?? []).map((p) => resolve(root, p));
	const allowRead = (pick("allowRead", parseList)?.value ?? []).map((p) => resolve(root, p));
	const checkpoints = onOff("checkpoints");
	const diagnostics = pick("diagnostics", parseCheckerPresets)?.value ?? [];
	const error = errors.length ? errors.join("; ") : undefined;
	if (error) warnings.push(`keel settings: ${error}. keel's tools will refuse to run until it is fixed`);
	return {
		profile,
		root,
		allow,
		allowRead,
		disabled,
		backend,
		checkpoints,
		diagnostics,
		...(src.shellCommandPrefix ? { commandPrefix: src.shellCommandPrefix } : {}),
		...(error ? { error } : {}),
		warnings,
	};
}

/**
 * The backend through the CLI's parser, and the root its spec names (ssh://host/path); a spec it
 * refuses becomes `error`, never this machine.
 */
function resolveBackend(
	flags: BackendFlags,
	cwd: string,
	warnings: string[],
): { backend: BackendSetting; root?: string } {
	const setting: BackendSetting = {
		spec: flags.backend ?? "local",
		network: flags.network ?? false,
		...(flags.env?.length ? { env: flags.env } : {}),
		...(flags.identity ? { identity: expandPath(cwd, flags.identity) } : {}),
		insecureHostKey: flags.insecureHostKey ?? false,
	};
	try {
		const choice = chooseBackend({ ...flags, identity: setting.identity }, OPTION_NAMES);
		return { backend: choice.open ? { ...setting, open: choice.open } : setting, root: choice.root };
	} catch (e) {
		if (!(e instanceof BackendSpecError)) throw e;
		warnings.push(
			`keel backend: ${e.message}. keel's tools will refuse to run (rather than run on this machine) until it is fixed`,
		);
		return { backend: { ...setting, error: e.message } };
	}
}
