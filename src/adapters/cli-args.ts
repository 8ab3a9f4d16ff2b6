/**
 * The CLI's arguments: the option table, and the parse into one session's options, the backend
 * choice and the serve options. Usage errors are UsageError (exit 2); the help is cli-help.ts.
 */
import { parseArgs } from "node:util";
import { KeelError } from "../boundary/errors.js";
import type { SessionOptions } from "../session.js";
import { checkProfile, checkSessionOptions, checkToolNames } from "../session-options.js";
import { type BackendChoice, chooseBackend } from "./backend-spec.js";
import { serveOptions, UsageError } from "./cli-serve.js";
import type { ServeOptions } from "./mcp/serve.js";
import {
	type EnvSettings,
	envSettings,
	parseCheckerPresets,
	parseList,
	SettingError,
} from "./settings-env.js";

export interface Parsed {
	command: string;
	positionals: string[];
	session: SessionOptions;
	http?: number;
	host?: string;
	/** serve's own options (token, sessions, message size, client roots). */
	serve: ServeOptions;
	backend: BackendChoice;
	/** smoke-extension's wall-clock limit in ms. */
	timeoutMs?: number;
	/** tools: print JSON rather than text. */
	json: boolean;
}

const OPTIONS = {
	root: { type: "string" },
	allow: { type: "string", multiple: true },
	"allow-read": { type: "string", multiple: true },
	profile: { type: "string" },
	disable: { type: "string", multiple: true },
	backend: { type: "string" },
	"allow-protected": { type: "boolean" },
	protect: { type: "string", multiple: true },
	env: { type: "string", multiple: true },
	"command-prefix": { type: "string" },
	http: { type: "string" },
	host: { type: "string" },
	"token-file": { type: "string" },
	"allow-host": { type: "string", multiple: true },
	"max-sessions": { type: "string" },
	"session-idle-timeout": { type: "string" },
	"max-message-mib": { type: "string" },
	"client-roots": { type: "boolean" },
	network: { type: "boolean" },
	identity: { type: "string" },
	"insecure-host-key": { type: "boolean" },
	checkpoints: { type: "boolean" },
	diagnostics: { type: "string", multiple: true },
	timeout: { type: "string" },
	json: { type: "boolean" },
	help: { type: "boolean", short: "h" },
} as const;

function parseOrThrow(argv: string[]) {
	try {
		return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
	} catch (e) {
		throw new UsageError((e as Error).message);
	}
}

/** The KEEL_* settings, a bad value as a usage error. */
function fromEnv(env: Record<string, string | undefined>): EnvSettings {
	try {
		return envSettings(env);
	} catch (e) {
		if (e instanceof SettingError) throw new UsageError(e.message);
		throw e;
	}
}

/** A repeatable flag's values, each comma separated too; undefined when none was given. */
const listFlag = (values: string[] | undefined) =>
	values ? values.flatMap((v) => parseList(v) ?? []) : undefined;

/** --diagnostics's preset names, repeatable and comma separated; a name that is no preset is a usage error. */
function diagnosticsFlag(values: string[] | undefined): string[] | undefined {
	if (values === undefined) return undefined;
	try {
		return parseCheckerPresets(values.join(","), "--diagnostics");
	} catch (e) {
		if (e instanceof SettingError) throw new UsageError(e.message);
		throw e;
	}
}

export function parse(argv: string[], environment: Record<string, string | undefined> = {}): Parsed {
	const { values, positionals } = parseOrThrow(argv);
	if (positionals.length === 0) throw new UsageError("missing command");
	if (values.json && positionals[0] !== "tools") throw new UsageError("--json applies to tools only");
	const env = fromEnv(environment);
	let choice: BackendChoice;
	try {
		choice = chooseBackend({
			backend: values.backend ?? env.backend,
			network: values.network ?? env.network,
			env: values.env ?? env.env,
			identity: values.identity ?? env.identity,
			insecureHostKey: values["insecure-host-key"] ?? env.insecureHostKey,
		});
	} catch (e) {
		throw new UsageError((e as Error).message);
	}
	const disabledTools = listFlag(values.disable) ?? env.disable;
	const diagnostics = diagnosticsFlag(values.diagnostics) ?? env.diagnostics;
	let session: SessionOptions;
	try {
		// Each name checked where the user wrote it: the flag, else its variable.
		const profile = checkProfile(
			values.profile ?? env.profile ?? "pi",
			values.profile === undefined && env.profile !== undefined ? "KEEL_PROFILE" : "--profile",
		);
		if (disabledTools)
			checkToolNames(disabledTools, profile, values.disable === undefined ? "KEEL_DISABLE" : "--disable");
		session = {
			root: choice.root ?? values.root ?? env.root,
			allow: values.allow ?? env.allow,
			allowRead: values["allow-read"] ?? env.allowRead,
			profile,
			disabledTools,
			allowProtected: values["allow-protected"],
			protectedPaths: values.protect,
			commandPrefix: values["command-prefix"],
			...((values.checkpoints ?? env.checkpoints) ? { checkpoints: true } : {}),
			...(diagnostics?.length ? { diagnostics } : {}),
		};
		checkSessionOptions(session);
	} catch (e) {
		if (e instanceof KeelError) throw new UsageError(e.message);
		throw e;
	}
	const http = values.http === undefined ? undefined : Number(values.http);
	if (http !== undefined && !(Number.isInteger(http) && http >= 0 && http <= 65535))
		throw new UsageError(`--http needs a port number from 0 to 65535 (got "${values.http}")`);
	const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
	if (timeout !== undefined && positionals[0] !== "smoke-extension")
		throw new UsageError("--timeout applies to smoke-extension only");
	if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0 && timeout <= 600))
		throw new UsageError(
			`--timeout needs a number of seconds above 0, at most 600 (got "${values.timeout}")`,
		);
	return {
		command: positionals[0],
		serve: serveOptions(values, positionals[0]),
		http,
		timeoutMs: timeout === undefined ? undefined : Math.ceil(timeout * 1000),
		host: values.host,
		positionals: positionals.slice(1),
		json: values.json ?? false,
		backend: choice,
		session,
	};
}
