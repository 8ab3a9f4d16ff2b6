/**
 * The CLI's arguments: the usage text, the option table, and the parse into one session's options,
 * the backend choice and the serve options. Usage errors are UsageError (exit 2).
 */
import { parseArgs } from "node:util";
import { KeelError } from "../boundary/errors.js";
import type { SessionOptions } from "../session.js";
import { checkProfile, checkSessionOptions, checkToolNames } from "../session-options.js";
import { type BackendChoice, chooseBackend } from "./backend-spec.js";
import { serveOptions, UsageError } from "./cli-serve.js";
import type { ServeOptions } from "./mcp/serve.js";
import { type EnvSettings, envSettings, parseList, SettingError } from "./settings-env.js";

export const USAGE = `Usage:
  keel call TOOL 'JSON_ARGS' [options]   run one tool call, print one JSON object
  keel batch [options]                   JSONL on stdin: {"tool":"read","args":{...}} per line
  keel agent [pi args]                   pi with keel's tools (pi's built-ins suppressed)
  keel serve [options] [--http PORT]     MCP server: stdio, or Streamable HTTP on 127.0.0.1:PORT/mcp
  keel smoke-extension PATH [--root DIR] [--timeout SECONDS]
                                         load a pi extension draft (.js/.mjs) in a disposable child
                                         process; print what it registers as one JSON object
Options:
  --root DIR            workspace root (default: current directory)
  --allow PATH          extra read-write root (repeatable)
  --allow-read PATH     read-only root (repeatable)
  --profile pi|unified|codex  tool palette (default: pi)
  --disable NAME        leave tool NAME out of the palette (repeatable, or comma separated)
  --backend SPEC        where tools run: local (default), bwrap (commands in a bubblewrap
                        sandbox), ssh://user@host[:port]/path, podman://NAME/path,
                        docker://NAME/path, k8s://NAMESPACE/POD[/CONTAINER]/path
  --network             bwrap: keep the network (default: off)
  --identity FILE       ssh: private key (default: ssh-agent, then ~/.ssh/id_*)
  --insecure-host-key   ssh: skip host key checking against known_hosts
  --allow-protected     permit writes to protected paths (git hooks and config, editor and
                        agent config, shell rc files; docs/SAFETY.md lists them)
  --protect PATH        protect PATH too (repeatable): no tool writes it, bwrap mounts it read-only
  --env NAME            bwrap: pass the host variable NAME into the sandbox (repeatable)
  --command-prefix TEXT shell text run before every bash command (pi's shellCommandPrefix)
  --http PORT           serve: Streamable HTTP instead of stdio (0: any free port)
  --host HOST           serve --http: interface to bind (default: 127.0.0.1)
  --token-file FILE     serve --http: the bearer token clients must send (default: $KEEL_MCP_TOKEN,
                        else one is generated into a private file named on stderr)
  --allow-host NAME     serve --http: a Host name to accept besides loopback and --host (repeatable)
  --max-sessions N      serve --http: MCP sessions open at once (default: 64)
  --session-idle-timeout SECONDS
                        serve --http: idle time after which a session may be closed to make
                        room for a new one at the cap (default: 1800)
  --max-message-mib N   serve: largest message, stdio line or HTTP body (default: 64)
  --client-roots        serve: use the client's MCP roots even with --root/--allow (default:
                        only when neither is given)
  --timeout SECONDS     smoke-extension: wall-clock limit (default: 10)
Environment (a flag wins over its variable; the pi extension reads the same ones):
  KEEL_PROFILE, KEEL_ROOT, KEEL_ALLOW, KEEL_ALLOW_READ, KEEL_DISABLE, KEEL_BACKEND,
  KEEL_NETWORK, KEEL_ENV, KEEL_IDENTITY, KEEL_INSECURE_HOST_KEY (lists comma separated,
  switches 1/0, true/false, yes/no, on/off)`;

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
	timeout: { type: "string" },
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

export function parse(argv: string[], environment: Record<string, string | undefined> = {}): Parsed {
	const { values, positionals } = parseOrThrow(argv);
	if (values.help) throw new UsageError("");
	if (positionals.length === 0) throw new UsageError("missing command");
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
		backend: choice,
		session,
	};
}
