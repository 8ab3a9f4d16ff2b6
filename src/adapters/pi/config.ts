/**
 * keel's settings inside pi. Sources, first wins: pi flags (--keel-profile, --keel-root,
 * --keel-allow, --keel-allow-read, --keel-disable), environment (KEEL_PROFILE, KEEL_ROOT,
 * KEEL_ALLOW, KEEL_ALLOW_READ, KEEL_DISABLE), the "keel" object of the project's .pi/settings.json,
 * then of the global settings.json in pi's agent dir. Lists are comma separated (arrays in JSON).
 *
 * A project's settings may choose the profile and disable tools but never widen the roots: a
 * checked-out repository should not be able to grant itself access outside the workspace.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { PROFILES, type Profile } from "../../tools/registry.js";

export const FLAGS = {
	profile: "keel-profile",
	root: "keel-root",
	allow: "keel-allow",
	allowRead: "keel-allow-read",
	disable: "keel-disable",
} as const;

export const FLAG_HELP: Record<keyof typeof FLAGS, string> = {
	profile:
		"keel tool palette: pi (pi's tool names, keel's engine) or unified (one file tool for every change, plus python)",
	root: "keel workspace root (default: the session's cwd)",
	allow: "extra read-write roots for keel's tools, comma separated",
	allowRead: "extra read-only roots for keel's tools, comma separated",
	disable: "tool names to turn off, comma separated (keel's or pi's)",
};

const ENV: Record<keyof typeof FLAGS, string> = {
	profile: "KEEL_PROFILE",
	root: "KEEL_ROOT",
	allow: "KEEL_ALLOW",
	allowRead: "KEEL_ALLOW_READ",
	disable: "KEEL_DISABLE",
};

export interface KeelPiConfig {
	profile: Profile;
	/** Workspace root, absolute. */
	root: string;
	allow: string[];
	allowRead: string[];
	disabled: string[];
	/** Problems worth telling the user about (a bad profile name, unreadable settings). */
	warnings: string[];
}

export interface ConfigSources {
	cwd: string;
	flag: (name: string) => unknown;
	env: Record<string, string | undefined>;
	/** The "keel" objects of the project and global settings (undefined when absent). */
	projectSettings?: Record<string, unknown>;
	globalSettings?: Record<string, unknown>;
}

function list(v: unknown): string[] | undefined {
	if (typeof v === "string") {
		const items = v
			.split(",")
			.map((s) => s.trim())
			.filter(Boolean);
		return items;
	}
	if (Array.isArray(v)) return v.filter((s): s is string => typeof s === "string" && s.trim() !== "");
	return undefined;
}

const text = (v: unknown): string | undefined =>
	typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;

/** Resolve the configuration (pure: the caller gathers flags, env and settings). */
export function resolveConfig(src: ConfigSources): KeelPiConfig {
	const warnings: string[] = [];
	const pick = <T>(key: keyof typeof FLAGS, parse: (v: unknown) => T | undefined, widening: boolean) => {
		const flag = src.flag(FLAGS[key]);
		if (flag === true) warnings.push(`--${FLAGS[key]} needs a value`);
		return (
			parse(flag) ??
			parse(src.env[ENV[key]]) ??
			(widening ? undefined : parse(src.projectSettings?.[key])) ??
			parse(src.globalSettings?.[key])
		);
	};
	const profileName = pick("profile", text, false) ?? "pi";
	let profile: Profile = "pi";
	if ((PROFILES as readonly string[]).includes(profileName)) profile = profileName as Profile;
	else warnings.push(`unknown keel profile "${profileName}" (use ${PROFILES.join(" or ")}); using "pi"`);
	const root = resolve(src.cwd, pick("root", text, true) ?? ".");
	return {
		profile,
		root,
		allow: (pick("allow", list, true) ?? []).map((p) => resolve(root, p)),
		allowRead: (pick("allowRead", list, true) ?? []).map((p) => resolve(root, p)),
		disabled: pick("disable", list, false) ?? [],
		warnings,
	};
}

/** pi's agent directory (PI_CODING_AGENT_DIR, else ~/.pi/agent). */
export function agentDir(env: Record<string, string | undefined>): string {
	const dir = env.PI_CODING_AGENT_DIR;
	if (dir) return dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir;
	return join(homedir(), ".pi", "agent");
}

/** The "keel" object of a settings.json, if the file exists and has one. */
export function readKeelSettings(file: string, warnings: string[]): Record<string, unknown> | undefined {
	let raw: string;
	try {
		raw = readFileSync(file, "utf8");
	} catch {
		return undefined;
	}
	try {
		const keel = (JSON.parse(raw) as { keel?: unknown }).keel;
		return keel && typeof keel === "object" ? (keel as Record<string, unknown>) : undefined;
	} catch (e) {
		warnings.push(`${file} is not valid JSON (${(e as Error).message}); its keel settings are ignored`);
		return undefined;
	}
}

/** Gather every source for `cwd` and resolve. */
export function loadConfig(
	cwd: string,
	flag: (name: string) => unknown,
	env: Record<string, string | undefined> = process.env,
): KeelPiConfig {
	const warnings: string[] = [];
	const projectSettings = readKeelSettings(join(cwd, ".pi", "settings.json"), warnings);
	const globalSettings = readKeelSettings(join(agentDir(env), "settings.json"), warnings);
	const config = resolveConfig({ cwd, flag, env, projectSettings, globalSettings });
	config.warnings.unshift(...warnings);
	return config;
}
