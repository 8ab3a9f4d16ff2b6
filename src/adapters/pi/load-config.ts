/**
 * Where keel's pi settings come from on disk: the project's .pi/settings.json and the global
 * settings.json in pi's agent directory, gathered with the flags and environment and resolved by
 * config.ts (which says what each source may set).
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { type KeelPiConfig, resolveConfig } from "./config.js";

/** pi's agent directory (PI_CODING_AGENT_DIR, else ~/.pi/agent). */
export function agentDir(env: Record<string, string | undefined>): string {
	const dir = env.PI_CODING_AGENT_DIR;
	if (dir) return dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir;
	return join(homedir(), ".pi", "agent");
}

/** A settings.json as an object, if the file exists and parses. */
function readSettings(file: string, warnings: string[]): Record<string, unknown> | undefined {
	let raw: string;
	try {
		raw = readFileSync(file, "utf8");
	} catch {
		return undefined;
	}
	try {
		const all = JSON.parse(raw) as unknown;
		return all && typeof all === "object" ? (all as Record<string, unknown>) : undefined;
	} catch (e) {
		warnings.push(`${file} is not valid JSON (${(e as Error).message}); its keel settings are ignored`);
		return undefined;
	}
}

const objectAt = (o: Record<string, unknown> | undefined, key: string) => {
	const v = o?.[key];
	return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
};

const stringAt = (o: Record<string, unknown> | undefined, key: string) => {
	const v = o?.[key];
	return typeof v === "string" ? v : undefined;
};

/** Gather every source for `cwd` and resolve. */
export function loadConfig(
	cwd: string,
	flag: (name: string) => unknown,
	env: Record<string, string | undefined> = process.env,
	otherTools: readonly string[] = [],
): KeelPiConfig {
	const warnings: string[] = [];
	const project = readSettings(join(cwd, ".pi", "settings.json"), warnings);
	const global = readSettings(join(agentDir(env), "settings.json"), warnings);
	const config = resolveConfig({
		cwd,
		flag,
		env,
		projectSettings: objectAt(project, "keel"),
		globalSettings: objectAt(global, "keel"),
		// pi's own bash runs it from either file, so keel's does too (it adds no reach: bash runs code).
		shellCommandPrefix: stringAt(project, "shellCommandPrefix") ?? stringAt(global, "shellCommandPrefix"),
		otherTools,
	});
	config.warnings.unshift(...warnings);
	return config;
}
