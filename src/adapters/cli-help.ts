/**
 * The CLI's help: an overview of the commands, each command's own options, and the text `keel tools`
 * prints. A usage error is one line that names the help to read, never the whole text.
 */
import type { JsonSchema } from "../boundary/schema.js";
import type { ToolDefinition } from "../tools/types.js";

/** Exit codes, the same for every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const SESSION_OPTIONS = `Session options:
  --root DIR            workspace root (default: current directory)
  --allow PATH          extra read-write root (repeatable)
  --allow-read PATH     read-only root (repeatable)
  --profile pi|unified|codex  tool palette (default: pi; "keel tools --profile P" lists it)
  --disable NAME        leave tool NAME out of the palette (repeatable, or comma separated)
  --backend SPEC        where tools run: local (default), bwrap (commands in a bubblewrap
                        sandbox), ssh://user@host[:port]/path, podman://NAME/path,
                        docker://NAME/path, k8s://NAMESPACE/POD[/CONTAINER]/path
  --network             bwrap: keep the network (default: off)
  --env NAME            bwrap: pass the host variable NAME into the sandbox (repeatable)
  --identity FILE       ssh: private key (default: ssh-agent, then ~/.ssh/id_*)
  --insecure-host-key   ssh: skip host key checking against known_hosts
  --allow-protected     permit writes to protected paths (git hooks and config, editor and
                        agent config, shell rc files; docs/SAFETY.md lists them)
  --protect PATH        protect PATH too (repeatable): no tool writes it, bwrap mounts it read-only
  --command-prefix TEXT shell text run before every bash command (pi's shellCommandPrefix)
  --checkpoints         keep checkpoints of every change, bash included (local, bwrap); the
                        unified profile then has the checkpoints tool (list, diff, restore)
  --diagnostics NAME    run the project's checker NAME after each change and report the errors
                        it introduced: tsc, ruff, pyright, mypy, py_compile (repeatable, or
                        comma separated)
Environment (a flag wins over its variable; the pi extension reads the same ones):
  KEEL_PROFILE, KEEL_ROOT, KEEL_ALLOW, KEEL_ALLOW_READ, KEEL_DISABLE, KEEL_BACKEND,
  KEEL_NETWORK, KEEL_ENV, KEEL_IDENTITY, KEEL_INSECURE_HOST_KEY, KEEL_CHECKPOINTS,
  KEEL_DIAGNOSTICS
  (lists comma separated; switches 1/0, true/false, yes/no, on/off)`;

const EXIT_TEXT = "Exit codes: 0 ok, 1 a tool or backend error, 2 a usage error.";

export const OVERVIEW = `keel: safe file, search, shell and Python tools for coding agents.

Usage: keel COMMAND [options]

Commands:
  call TOOL JSON|-      run one tool call in a new session; print one JSON object
  batch                 one session over JSONL on stdin: {"tool":"read","args":{...}} per line
  tools                 list a profile's tools: descriptions and argument schemas
  serve                 MCP server on stdio, or Streamable HTTP with --http PORT
  agent [pi args]       pi with keel's tools in place of its built-ins
  smoke-extension PATH  load a pi extension draft in a disposable child process
  help [COMMAND]        this text, or one command's options
  --version             keel's version

${EXIT_TEXT}
Run "keel help COMMAND" for a command's options.`;

export const COMMAND_HELP: Record<string, string> = {
	call: `Usage: keel call TOOL JSON [options]
       keel call TOOL - [options]      (the JSON arguments from stdin)

Runs one tool call in a new session and prints one JSON object:
  {"ok":true,"content":"...","details":{...},"elapsedMs":1.2}
  {"ok":false,"error":{"code":"NOT_FOUND","message":"...","retry":"retarget"},"elapsedMs":0.4}
Each call is a session of its own that has read nothing: a change to an existing file that needs
a read first (write over a file, apply_patch adding onto one) belongs in "keel batch".

${SESSION_OPTIONS}

${EXIT_TEXT}`,
	batch: `Usage: keel batch [options] < calls.jsonl

Runs one session over JSONL on stdin, one {"tool": NAME, "args": {...}} per line, and prints one
JSON object per line as "keel call" does. What a line reads, later lines may change.

${SESSION_OPTIONS}

Exit codes: 0 every call ok, 1 any call failed, 2 a usage error.`,
	tools: `Usage: keel tools [--profile pi|unified|codex] [--disable NAME] [--json]

Lists the tools a session of the profile offers, with their descriptions and arguments.
  --json    one JSON array: [{"name","description","inputSchema"}, ...]

${EXIT_TEXT}`,
	serve: `Usage: keel serve [options] [--http PORT]

An MCP server, one keel session per connection: stdio by default.
  --http PORT           Streamable HTTP on 127.0.0.1:PORT/mcp instead (0: any free port)
  --host HOST           --http: interface to bind (default: 127.0.0.1)
  --token-file FILE     --http: the bearer token clients must send (default: $KEEL_MCP_TOKEN,
                        else one is generated into a private file named on stderr)
  --allow-host NAME     --http: a Host name to accept besides loopback and --host (repeatable)
  --max-sessions N      --http: MCP sessions open at once (default: 64)
  --session-idle-timeout SECONDS
                        --http: idle time after which a session may be closed to make room for
                        a new one at the cap (default: 1800)
  --max-message-mib N   largest message, stdio line or HTTP body (default: 64)
  --client-roots        use the client's MCP roots even with --root/--allow (default: only when
                        neither is given)

${SESSION_OPTIONS}

Exit codes: 0 after a clean shutdown, 1 when the port cannot be bound, 2 a usage error.`,
	agent: `Usage: keel agent [pi args]

Starts pi with its built-in tools suppressed and keel's extension loaded; every argument goes to
pi. keel's settings inside pi: --keel-profile, --keel-root, --keel-allow, --keel-allow-read,
--keel-disable, --keel-backend (and --keel-network, --keel-env, --keel-identity,
--keel-insecure-host-key, --keel-checkpoints, --keel-diagnostics), or the KEEL_* variables ("keel help call" lists them). pi is found
through KEEL_PI_BIN, then node_modules/.bin/pi, then PATH.

Exit code: pi's own; 2 when pi cannot be started.`,
	"smoke-extension": `Usage: keel smoke-extension PATH [--root DIR] [--allow PATH] [--allow-read PATH] [--timeout SECONDS]

Loads a pi extension draft (.js/.mjs) in a disposable child process against a fake pi API and
prints what it registered (tools, flags, commands, events) as one JSON object.
  --timeout SECONDS     wall-clock limit (default: 10, at most 600)

${EXIT_TEXT}`,
	help: `Usage: keel help [COMMAND]

Prints the overview, or COMMAND's options (${["call", "batch", "tools", "serve", "agent", "smoke-extension"].join(", ")}).`,
};

/** The one line a usage error prints on stderr: the fault, then where to read more. */
export function usageLine(message: string, command?: string): string {
	const where =
		command && command !== "help" && command in COMMAND_HELP ? `keel help ${command}` : "keel help";
	return `keel: ${message}. Run "${where}" for usage.`;
}

/** A schema's type in a few characters: string, number[], "a"|"b", object. */
function typeName(schema: JsonSchema | undefined): string {
	if (!schema || typeof schema !== "object") return "any";
	const s = schema as Record<string, unknown>;
	if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join("|");
	if (s.const !== undefined) return JSON.stringify(s.const);
	if (Array.isArray(s.anyOf)) return (s.anyOf as JsonSchema[]).map(typeName).join("|");
	if (s.type === "array") return `${typeName(s.items as JsonSchema)}[]`;
	if (Array.isArray(s.type)) return s.type.join("|");
	return typeof s.type === "string" ? s.type : "any";
}

/** `keel tools` as text: each tool's name, description, and its top-level arguments. */
export function toolsText(tools: readonly ToolDefinition[]): string {
	const blocks = tools.map((t) => {
		const schema = t.parameters as { properties?: Record<string, JsonSchema>; required?: string[] };
		const required = new Set(schema.required ?? []);
		const args = Object.entries(schema.properties ?? {}).map(([name, prop]) => {
			const about = (prop as { description?: string }).description;
			return `    ${name}${required.has(name) ? "" : "?"}: ${typeName(prop)}${about ? `  ${about}` : ""}`;
		});
		return [
			`${t.name}`,
			...t.description.split("\n").map((l) => `  ${l}`),
			...(args.length ? ["  Arguments:", ...args] : []),
		].join("\n");
	});
	return `${blocks.join("\n\n")}\n\nThe full JSON Schemas: keel tools --json`;
}

/** `keel tools --json`: the tools as an MCP client sees them. */
export function toolsJson(tools: readonly ToolDefinition[]): string {
	return JSON.stringify(
		tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters })),
	);
}
