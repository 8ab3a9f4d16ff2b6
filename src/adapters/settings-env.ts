/**
 * keel's settings as the environment gives them, one set of KEEL_* variables read the same way by
 * the CLI, the MCP server (`keel serve`) and the pi extension: a flag wins over its variable. Lists
 * are comma separated; switches are 1/true/yes/on or 0/false/no/off. A value that does not parse is
 * an error naming what would: a typo must never widen what a model can do, nor silently narrow what
 * the user asked for.
 */
import { CHECKER_PRESETS } from "../diagnostics/checkers.js";

/** Each setting's variable. */
export const SETTING_ENV = {
	profile: "KEEL_PROFILE",
	root: "KEEL_ROOT",
	allow: "KEEL_ALLOW",
	allowRead: "KEEL_ALLOW_READ",
	disable: "KEEL_DISABLE",
	backend: "KEEL_BACKEND",
	network: "KEEL_NETWORK",
	env: "KEEL_ENV",
	identity: "KEEL_IDENTITY",
	insecureHostKey: "KEEL_INSECURE_HOST_KEY",
	checkpoints: "KEEL_CHECKPOINTS",
	diagnostics: "KEEL_DIAGNOSTICS",
} as const;

export type SettingKey = keyof typeof SETTING_ENV;

/** The environment variables keel reads, for hosts and tests that must start from none of them. */
export const ENV_NAMES: readonly string[] = Object.values(SETTING_ENV);

/** Settings that are switches; the rest take a value. */
export const SWITCH_SETTINGS: ReadonlySet<SettingKey> = new Set<SettingKey>([
	"network",
	"insecureHostKey",
	"checkpoints",
]);

/** Settings that hold several values. */
export const LIST_SETTINGS: ReadonlySet<SettingKey> = new Set<SettingKey>([
	"allow",
	"allowRead",
	"disable",
	"env",
	"diagnostics",
]);

export class SettingError extends Error {}

const TRUE = new Set(["1", "true", "yes", "on"]);
const FALSE = new Set(["0", "false", "no", "off"]);

/** A comma separated list (or a JSON array of strings), blanks dropped; undefined when absent. */
export function parseList(v: unknown): string[] | undefined {
	if (typeof v === "string")
		return v
			.split(",")
			.map((s) => s.trim())
			.filter(Boolean);
	if (Array.isArray(v)) return v.filter((s): s is string => typeof s === "string" && s.trim() !== "");
	return undefined;
}

/**
 * A list of workspace checkers by preset name (SessionOptions.diagnostics), as parseList reads it;
 * a name that is no preset is an error naming the presets (`where` names the source), never a
 * session that quietly checks less than asked. A name given twice counts once.
 */
export function parseCheckerPresets(v: unknown, where: string): string[] | undefined {
	const names = parseList(v);
	if (names === undefined) return undefined;
	const unknown = names.find((n) => !CHECKER_PRESETS.includes(n));
	if (unknown !== undefined)
		throw new SettingError(
			`${where} names an unknown checker ${JSON.stringify(unknown)} (names are case-sensitive): the presets are ${CHECKER_PRESETS.join(", ")}`,
		);
	return [...new Set(names)];
}

/** A non-blank string, trimmed; undefined when absent. */
export const parseText = (v: unknown): string | undefined =>
	typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;

/** A switch's value; undefined when absent; `where` names the source in the error for a bad word. */
export function parseSwitch(v: unknown, where: string): boolean | undefined {
	if (typeof v === "boolean") return v;
	if (typeof v !== "string" || v.trim() === "") return undefined;
	const word = v.trim().toLowerCase();
	if (TRUE.has(word)) return true;
	if (FALSE.has(word)) return false;
	throw new SettingError(`${where} is "${v}", not a switch (use 1, true, yes, on, or 0, false, no, off)`);
}

/** The settings the environment gives, parsed; absent and blank variables are left out. */
export function envSettings(env: Record<string, string | undefined>): EnvSettings {
	const out: EnvSettings = {};
	for (const [key, name] of Object.entries(SETTING_ENV) as [SettingKey, string][]) {
		const raw = env[name];
		if (SWITCH_SETTINGS.has(key)) {
			const on = parseSwitch(raw, name);
			if (on !== undefined) (out as Record<string, unknown>)[key] = on;
		} else if (LIST_SETTINGS.has(key)) {
			const items = key === "diagnostics" ? parseCheckerPresets(raw, name) : parseList(raw);
			if (items?.length) (out as Record<string, unknown>)[key] = items;
		} else {
			const value = parseText(raw);
			if (value !== undefined) (out as Record<string, unknown>)[key] = value;
		}
	}
	return out;
}

export interface EnvSettings {
	profile?: string;
	root?: string;
	allow?: string[];
	allowRead?: string[];
	disable?: string[];
	backend?: string;
	network?: boolean;
	env?: string[];
	identity?: string;
	insecureHostKey?: boolean;
	checkpoints?: boolean;
	/** Workspace checkers by preset name, each one checked. */
	diagnostics?: string[];
}
